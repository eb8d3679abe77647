"""The cited depth-reuse results of ftip-00KI, 00KJ and 00KK, as records of what each source states.

Each record is a :class:`~ftipbook.compare.published.PublishedValue` of kind ``"qualitative"``
(an outcome the source states in words) or ``"categorical"`` (a condition the outcome is stated
under: the program, the state, the precision, the remedy, the evidence). Their ``unit`` says
which: ``"claim"`` or ``"assumption: <what>"``. None of them is a number and none is a capability
claim of this book: :func:`conditions` lists what a reader must hold fixed before transferring a
claim to another model, and the chapters show each mechanism at tiny scale beside them.
"""
from __future__ import annotations

from ftipbook.compare.published import PublishedValue, Registry

LOOPED = "giannou2023looped"
WIDER = "xue2021wider"
VIRTUAL_DEPTH = "zhu2025virtualdepth"
SOURCES = (LOOPED, WIDER, VIRTUAL_DEPTH)


def _claim(text: str, source: str, locator: str) -> PublishedValue:
    return PublishedValue(text, "claim", source, locator, "qualitative")


def _assumption(what: str, text: str, source: str, locator: str) -> PublishedValue:
    return PublishedValue(text, f"assumption: {what}", source, locator, "categorical")


_records = {
    # ftip-00KI: Looped Transformers as Programmable Computers
    "looped_claim": _claim("a fixed shallow Transformer placed in a loop executes programmed iterative "
                           "computations, including conditional branches and in-context algorithms", LOOPED,
                           "Abstract"),
    "looped_program": _assumption("program", "the program is written into the input sequence as instructions "
                                  "and executed by weights set by hand, not learned", LOOPED, "Abstract"),
    "looped_state": _assumption("state", "the input sequence is the machine state (instructions, memory for "
                                "reads and writes, scratch space), rewritten by every pass of the loop", LOOPED,
                                "Abstract"),
    "looped_precision": _assumption("precision", "attention acts as a near-hard selector; exact execution "
                                    "holds under the construction's finite-precision conditions", LOOPED,
                                    "construction, main text"),
    # ftip-00KJ: Go Wider Instead of Deeper
    "wider_claim": _claim("sharing parameters across Transformer blocks reduces trainable parameters and can "
                          "limit modeling capacity", WIDER, "Abstract"),
    "wider_remedy_moe": _assumption("remedy", "widen the shared blocks by a mixture-of-experts feed-forward "
                                    "sublayer", WIDER, "Abstract"),
    "wider_remedy_norm": _assumption("remedy", "keep an individual layer norm per block over the shared "
                                     "weights", WIDER, "Abstract"),
    "wider_evidence": _assumption("evidence", "empirical comparisons on the paper's own benchmarks and "
                                  "training recipes", WIDER, "Experiments"),
    # ftip-00KK: Beyond Parameters: Exploring Virtual Logic Depth for Scaling Laws
    "virtual_depth_claim": _claim("raising virtual logical depth by reusing weights gives reasoning gains at "
                                  "a nearly fixed parameter count", VIRTUAL_DEPTH, "Abstract"),
    "virtual_depth_coordinate": _assumption("coordinate", "virtual depth counts layer applications, not "
                                            "distinct layers", VIRTUAL_DEPTH, "Abstract"),
    "virtual_depth_evidence": _assumption("evidence", "the paper's own training recipes and reasoning and "
                                          "knowledge evaluations", VIRTUAL_DEPTH, "Experiments"),
}

#: The depth-reuse source records (ftip-00KI, 00KJ, 00KK), in the note's order.
DEPTH_REUSE = Registry("DEPTH_REUSE", _records)


def conditions(source_key: str) -> dict[str, PublishedValue]:
    """The records of ``source_key`` that state a condition (every ``"assumption: ..."`` record), by name."""
    if source_key not in SOURCES:
        raise ValueError(f"source_key={source_key!r} is not a depth-reuse source; allowed: {', '.join(SOURCES)}")
    return {name: r for name, r in DEPTH_REUSE.records.items()
            if r.source_key == source_key and r.unit.startswith("assumption: ")}


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)

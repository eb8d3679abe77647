"""Records of depth reuse (ftip-00KH, ftip-00KP), captured from a live model and a run it performs.

* :class:`ComputationAxisRecord` (ftip-00KH) separates the computation coordinates of a run:
  token steps (forward calls), positions, depth passes ``d(A, r)`` through the layer stack per
  position, recurrent passes per position (passes whose input reads a latent carried from an
  earlier position) and latent updates (latent vectors carried from one token step to the next).
  The passes are counted by hooks on the blocks during the run, and checked against the passes the
  configuration declares; they are not read off the parameter count.
* :class:`DepthReuseRecord` (ftip-00KP) adds the weights (hash, unique parameters, how the blocks
  are shared), the stopping rule, the recurrent state, the training objective, counted token and
  pass FLOPs, measured prefill and decode latency, memory and the evaluation seeds.
  :func:`depth_interventions` names what changed between two records; a pass-count change is an
  intervention even when the weights hash is unchanged, and an unrecorded coordinate makes the
  comparison ``"unknown"``.
* :class:`SeparableRecord` (ftip-00KS) keeps the three groups of coordinates of a depth-reuse
  system apart: the architecture as trained (:class:`ArchitectureCoordinates`), the training
  intervention (:class:`TrainingCoordinates`: recipe, objective, training-only parameters) and the
  inference system as deployed (:class:`SystemsCoordinates`: systems record, layer applications,
  FLOPs, carried state). :func:`intervention_groups` says which groups two records differ in.
"""
from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from ftipbook import _validate
from ftipbook.artifact import weights_sha256
from ftipbook.compare.cost import UNKNOWN, Unknown
from ftipbook.compare.measure import count_flops, timed
from ftipbook.compare.records import (Record, SystemsRecord, TrainingRecord, _count, _text, describe_variant,
                                      diff_records, missing_fields)
from ftipbook.model.depth import objective_of
from ftipbook.model.transformer import DecoderLM, as_tokens
from ftipbook.train.config import RunRandomness, TrainConfig


#: Declared upper bounds on the work of one capture; tokens decoded per run, and timed repeats.
MAX_NEW_TOKENS, MAX_REPEATS = 2**16, 1000

def _prompt(model: object, prompt: object, new_tokens: object) -> torch.Tensor:
    if not isinstance(model, DecoderLM):
        raise TypeError(f"model must be an ftipbook DecoderLM (or a subclass), got {type(model).__name__}")
    tokens = as_tokens(prompt, next(model.parameters()).device, name="prompt")
    if tokens.dim() == 1:
        tokens = tokens.unsqueeze(0)
    if tokens.dim() != 2 or 0 in tokens.shape:
        raise ValueError(f"prompt must be a non-empty [T] or [B, T] token sequence, got shape {tuple(tokens.shape)}")
    model.check_tokens(tokens, name="prompt")
    _validate.integer("new_tokens", new_tokens, low=0, high=MAX_NEW_TOKENS)
    return tokens


class _PassCounter:
    """Forward hooks that count the positions each block and the feedback map process."""

    def __init__(self, model: DecoderLM) -> None:
        self.block_positions = 0
        self.feedback_positions = 0
        self.handles = [b.register_forward_pre_hook(self._block) for b in model.blocks]
        feedback = getattr(model, "feedback", None)
        if feedback is not None:
            self.handles.append(feedback.register_forward_pre_hook(self._feedback))

    def _block(self, _module, args) -> None:
        self.block_positions += args[0].shape[0] * args[0].shape[1]

    def _feedback(self, _module, args) -> None:
        self.feedback_positions += args[0].shape[0] * args[0].shape[1]

    def close(self) -> None:
        for h in self.handles:
            h.remove()


@dataclass(frozen=True)
class DecodeRun:
    """What one greedy cached decode of :func:`run_decode` measured."""

    token_steps: int
    positions: int  # rows x positions processed
    block_positions: int
    feedback_positions: int
    latent_updates: int
    prefill_seconds: float
    decode_seconds: float  # all decode steps together
    cache_bytes: int
    carried_bytes: int


@torch.no_grad()
def run_decode(model: DecoderLM, prompt: torch.Tensor, new_tokens: int) -> DecodeRun:
    """Greedy cached decoding of ``new_tokens`` (at most ``MAX_NEW_TOKENS``) after ``prompt [B, T]``,
    counted and timed."""
    prompt = _prompt(model, prompt, new_tokens)
    was_training = model.training
    model.eval()
    counter = _PassCounter(model)
    try:
        cache = model.new_cache(prompt.shape[0])
        logits, prefill = timed(lambda: model(prompt, cache=cache, last_only=True))
        decode, latent_updates = 0.0, 0
        for _ in range(new_tokens):
            latent_updates += sum(c.shape[0] for c in getattr(cache, "carried", ()) if c is not None)
            token = logits[:, -1].argmax(-1, keepdim=True)
            logits, seconds = timed(lambda: model(token, cache=cache, last_only=True))
            decode += seconds
    finally:
        counter.close()
        model.train(was_training)
    carried = cache.carried_nbytes() if hasattr(cache, "carried_nbytes") else 0
    return DecodeRun(1 + new_tokens, prompt.shape[0] * (prompt.shape[1] + new_tokens), counter.block_positions,
                     counter.feedback_positions, latent_updates, prefill, decode, cache.nbytes(), carried)


def declared_passes(model: DecoderLM) -> int:
    """``d(A, r)`` as the configuration declares it: stack passes per position (loops x feedback passes)."""
    return model.layer_applications // model.cfg.n_layers


@dataclass(frozen=True)
class ComputationAxisRecord(Record):
    """The computation coordinates of one run (ftip-00KH), counted during the run.

    ``depth_passes`` is ``d(A, r)``: passes through the layer stack per processed position;
    ``recurrent_passes`` the passes per position whose input reads a latent carried from an earlier
    position; ``latent_updates`` the latent vectors carried from one token step to the next, in all.
    """

    KIND: ClassVar[str] = "computation"

    token_steps: int | Unknown = UNKNOWN
    positions: int | Unknown = UNKNOWN
    depth_passes: int | Unknown = UNKNOWN
    recurrent_passes: int | Unknown = UNKNOWN
    latent_updates: int | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        for name, low in (("token_steps", 1), ("positions", 1), ("depth_passes", 1), ("recurrent_passes", 0),
                          ("latent_updates", 0)):
            _count("ComputationAxisRecord", name, getattr(self, name), low)

    @classmethod
    def from_run(cls, model: DecoderLM, run: DecodeRun) -> "ComputationAxisRecord":
        """The record of ``run``; refuses counts that disagree with the passes ``model`` declares."""
        per_pass = run.positions * model.cfg.n_layers
        if run.block_positions % per_pass:
            raise RuntimeError(f"the blocks processed {run.block_positions} positions, not a whole number of passes "
                               f"over {run.positions} positions and {model.cfg.n_layers} layers")
        passes = run.block_positions // per_pass
        if passes != declared_passes(model):
            raise RuntimeError(f"counted {passes} passes per position, the configuration declares "
                               f"{declared_passes(model)}")
        return cls(run.token_steps, run.positions, passes, run.feedback_positions // run.positions,
                   run.latent_updates)

    @classmethod
    def capture(cls, model: DecoderLM, prompt: torch.Tensor | Sequence[int],
                new_tokens: int) -> "ComputationAxisRecord":
        """Decode ``new_tokens`` greedily after ``prompt`` with a cache and record what was computed."""
        return cls.from_run(model, run_decode(model, _prompt(model, prompt, new_tokens), new_tokens))


def sharing(model: DecoderLM) -> str:
    """How the blocks are reused, e.g. ``"1 block x 3 applications"`` or ``"4 blocks x 1 application"``."""
    n, per = model.cfg.n_layers, model.layer_applications // model.cfg.n_layers
    return f"{n} block{'s' * (n != 1)} x {per} application{'s' * (per != 1)}"


def stopping_rule(model: DecoderLM) -> str:
    """The stopping rule of the passes: every model here runs a fixed number of passes per position."""
    return f"fixed: {declared_passes(model)} pass{'es' * (declared_passes(model) != 1)} per position"


@dataclass(frozen=True)
class DepthReuseRecord(Record):
    """The depth-reuse model-instance record of ftip-00KP, captured by :meth:`capture`.

    ``token_flops`` are the counted FLOPs of one decode step right after the prompt (context =
    prompt length + 1), per row, ``pass_flops`` the part of them spent in one pass through the
    blocks; ``memory_bytes`` the
    parameters plus the cache after the run; ``recurrent_state_bytes`` the latents carried between
    token steps. Latencies are machine-specific (``MACHINE_FIELDS``).
    """

    KIND: ClassVar[str] = "depth reuse"
    MACHINE_FIELDS: ClassVar[tuple[str, ...]] = ("prefill_seconds", "decode_seconds_per_token")

    weights_sha256: str | Unknown = UNKNOWN
    parameters: int | Unknown = UNKNOWN
    shared_weights: str | Unknown = UNKNOWN
    pass_count: int | Unknown = UNKNOWN
    stopping_rule: str | Unknown = UNKNOWN
    recurrent_state_bytes: int | Unknown = UNKNOWN
    training_objective: str | Unknown = UNKNOWN
    token_flops: int | Unknown = UNKNOWN
    pass_flops: int | Unknown = UNKNOWN
    prefill_seconds: float | Unknown = UNKNOWN
    decode_seconds_per_token: float | Unknown = UNKNOWN
    memory_bytes: int | Unknown = UNKNOWN
    eval_seeds: tuple[int, ...] | Unknown = UNKNOWN
    computation: ComputationAxisRecord | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        for name in ("weights_sha256", "shared_weights", "stopping_rule", "training_objective"):
            _text("DepthReuseRecord", name, getattr(self, name))
        for name, low in (("parameters", 1), ("pass_count", 1), ("recurrent_state_bytes", 0), ("token_flops", 1),
                          ("pass_flops", 1), ("memory_bytes", 1)):
            _count("DepthReuseRecord", name, getattr(self, name), low)
        for name in ("prefill_seconds", "decode_seconds_per_token"):
            value = getattr(self, name)
            if not isinstance(value, Unknown) and (isinstance(value, bool) or not isinstance(value, (int, float))
                                                   or not 0 <= value < float("inf")):
                raise ValueError(f"DepthReuseRecord.{name} must be a finite number of seconds >= 0 or UNKNOWN, "
                                 f"got {value!r}")
        seeds = self.eval_seeds
        if not isinstance(seeds, Unknown) and (not isinstance(seeds, tuple) or not seeds or any(
                isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds)):
            raise ValueError(f"DepthReuseRecord.eval_seeds must be a non-empty tuple of ints >= 0 or UNKNOWN, "
                             f"got {seeds!r}")
        if not isinstance(self.computation, (Unknown, ComputationAxisRecord)):
            raise TypeError(f"DepthReuseRecord.computation must be a ComputationAxisRecord or UNKNOWN, "
                            f"got {type(self.computation).__name__}")

    @classmethod
    def capture(cls, model: DecoderLM, prompt: torch.Tensor | Sequence[int], new_tokens: int, *,
                eval_seeds: tuple[int, ...] | Unknown = UNKNOWN, repeats: int = 3) -> "DepthReuseRecord":
        """Measure ``model`` on a greedy cached decode of ``new_tokens`` after ``prompt``.

        The decode runs ``repeats`` times; the latencies are the medians, every count comes from the
        first run (the others must agree). FLOPs of one more decode step are counted after the run.
        """
        tokens = _prompt(model, prompt, new_tokens)
        _count("DepthReuseRecord.capture", "repeats", repeats, 1)
        _validate.integer("repeats", repeats, high=MAX_REPEATS)
        runs = [run_decode(model, tokens, new_tokens) for _ in range(repeats)]
        computation = ComputationAxisRecord.from_run(model, runs[0])
        token_flops, pass_flops = _step_flops(model, tokens)
        unique = {p.data_ptr(): p for p in model.parameters()}
        return cls(
            weights_sha256=weights_sha256(model.decoder_state_dict()),
            parameters=sum(p.numel() for p in unique.values()),
            shared_weights=sharing(model),
            pass_count=computation.depth_passes,
            stopping_rule=stopping_rule(model),
            recurrent_state_bytes=runs[0].carried_bytes // tokens.shape[0],
            training_objective=objective_of(model),
            token_flops=token_flops,
            pass_flops=pass_flops,
            prefill_seconds=statistics.median(r.prefill_seconds for r in runs),
            decode_seconds_per_token=statistics.median(r.decode_seconds for r in runs) / max(new_tokens, 1),
            memory_bytes=sum(p.numel() * p.element_size() for p in unique.values()) + runs[0].cache_bytes,
            eval_seeds=eval_seeds,
            computation=computation,
        )


@torch.no_grad()
def _step_flops(model: DecoderLM, prompt: torch.Tensor) -> tuple[int, int]:
    """Counted FLOPs of one decode step after ``prompt [B, T]`` (context ``T + 1``), per row: in all and per
    pass through the blocks."""
    was_training = model.training
    model.eval()
    try:
        cache = model.new_cache(prompt.shape[0])
        model(prompt, cache=cache)
        _, count = count_flops(lambda: model(prompt[:, -1:], cache=cache, last_only=True))
    finally:
        model.train(was_training)
    blocks = sum(n for name, n in count.by_module.items() if name.count(".") == 2 and ".blocks." in name)
    rows = prompt.shape[0]
    return count.total // rows, blocks // (rows * declared_passes(model))


@dataclass(frozen=True)
class DepthComparison:
    """What :func:`depth_interventions` found: ``status`` is ``"unknown"`` (naming ``missing``),
    ``"identical"`` or ``"intervention"`` (naming each changed coordinate in ``changed``)."""

    status: str
    missing: tuple[str, ...]
    changed: tuple[str, ...]
    same_weights: bool | None


#: Coordinates a comparison of two depth-reuse records needs; the latencies are compared apart.
COMPARED = ("weights_sha256", "parameters", "shared_weights", "pass_count", "stopping_rule", "recurrent_state_bytes",
            "training_objective", "token_flops", "pass_flops", "memory_bytes", "eval_seeds")


def depth_interventions(a: DepthReuseRecord, b: DepthReuseRecord) -> DepthComparison:
    """The interventions separating two depth-reuse records (ftip-00KP).

    Any unrecorded coordinate on either side makes the status ``"unknown"``. Otherwise every
    compared coordinate that differs is an intervention, including a pass-count change with an
    unchanged weights hash; the computation-axis record is diffed with it.
    """
    if not isinstance(a, DepthReuseRecord) or not isinstance(b, DepthReuseRecord):
        raise TypeError(f"depth_interventions compares two DepthReuseRecords, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    missing = tuple(sorted({f for r in (a, b) for f in missing_fields(r) if not f.endswith("seconds")
                            and not f.endswith("seconds_per_token")}))
    same = None if isinstance(a.weights_sha256, Unknown) or isinstance(b.weights_sha256, Unknown) \
        else a.weights_sha256 == b.weights_sha256
    if missing:
        return DepthComparison("unknown", missing, (), same)
    changed = tuple(c.path for c in diff_records(a, b) if c.path in COMPARED or c.path.startswith("computation."))
    return DepthComparison("intervention" if changed else "identical", (), changed, same)


# --- ftip-00KS: architecture, training and systems coordinates kept apart ------------------------
def _distinct(tensors) -> int:
    return sum({t.data_ptr(): t.numel() for t in tensors}.values())


@dataclass(frozen=True)
class ArchitectureCoordinates(Record):
    """The architecture of a depth-reuse system as it was trained (ftip-00KS): mixers and widths
    (``variant``), distinct blocks, passes per position in training, and the distinct parameters the
    inference interface reads (training-only heads excluded)."""

    KIND: ClassVar[str] = "architecture"

    variant: str
    distinct_blocks: int
    trained_passes: int
    interface_parameters: int

    def __post_init__(self) -> None:
        _text("ArchitectureCoordinates", "variant", self.variant)
        for name in ("distinct_blocks", "trained_passes", "interface_parameters"):
            _count("ArchitectureCoordinates", name, getattr(self, name), 1)


@dataclass(frozen=True)
class TrainingCoordinates(Record):
    """The training intervention (ftip-00KS): the recipe, the objective the model declares and the
    parameters that only training reads (e.g. a next-latent head)."""

    KIND: ClassVar[str] = "training"

    recipe: TrainingRecord
    objective: str
    training_only_parameters: int

    def __post_init__(self) -> None:
        if not isinstance(self.recipe, TrainingRecord):
            raise TypeError(f"TrainingCoordinates.recipe must be a TrainingRecord, got {type(self.recipe).__name__}")
        _text("TrainingCoordinates", "objective", self.objective)
        _count("TrainingCoordinates", "training_only_parameters", self.training_only_parameters)


@dataclass(frozen=True)
class SystemsCoordinates(Record):
    """The deployed inference system (ftip-00KS): its systems record, the layer applications per
    position counted during a cached decode, the counted FLOPs per decoded token (per row) and the
    latent bytes carried between token steps (per row)."""

    KIND: ClassVar[str] = "systems"

    systems: SystemsRecord
    layer_applications: int
    decode_flops: int
    carried_bytes: int

    def __post_init__(self) -> None:
        if not isinstance(self.systems, SystemsRecord):
            raise TypeError(f"SystemsCoordinates.systems must be a SystemsRecord, got {type(self.systems).__name__}")
        for name, low in (("layer_applications", 1), ("decode_flops", 1), ("carried_bytes", 0)):
            _count("SystemsCoordinates", name, getattr(self, name), low)


@dataclass(frozen=True)
class SeparableRecord(Record):
    """Architecture, training and systems coordinates of one depth-reuse system, kept apart (ftip-00KS)."""

    KIND: ClassVar[str] = "separable"

    architecture: ArchitectureCoordinates
    training: TrainingCoordinates
    systems: SystemsCoordinates

    def __post_init__(self) -> None:
        for name, kind in (("architecture", ArchitectureCoordinates), ("training", TrainingCoordinates),
                           ("systems", SystemsCoordinates)):
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"SeparableRecord.{name} must be a {kind.__name__}, "
                                f"got {type(getattr(self, name)).__name__}")

    @classmethod
    def capture(cls, trained: DecoderLM, deployed: DecoderLM, config: TrainConfig, randomness: RunRandomness, *,
                data: str, prompt: torch.Tensor | Sequence[int], new_tokens: int) -> "SeparableRecord":
        """The record of ``trained`` (trained under ``config`` and ``randomness`` on ``data``) run as
        ``deployed``, which must hold every tensor of ``trained`` that the inference interface reads
        (``trained`` itself, or a view of it such as :func:`~ftipbook.model.depth.with_passes`).

        The architecture comes from ``trained``, the systems coordinates from a greedy cached decode
        of ``deployed`` after ``prompt``, counted as by :meth:`ComputationAxisRecord.capture`.
        """
        tokens = _prompt(deployed, prompt, new_tokens)
        if not isinstance(trained, DecoderLM):
            raise TypeError(f"trained must be an ftipbook DecoderLM (or a subclass), got {type(trained).__name__}")
        interface = trained.decoder_state_dict()
        held = {p.data_ptr() for p in deployed.parameters()}
        foreign = [name for name, t in interface.items() if t.data_ptr() not in held]
        if foreign:
            raise ValueError(f"deployed does not hold the trained weights {foreign[:3]}: pass the trained model or "
                             f"a view of it (with_passes)")
        run = run_decode(deployed, tokens, new_tokens)
        computation = ComputationAxisRecord.from_run(deployed, run)
        interface_parameters = _distinct(interface.values())
        architecture = ArchitectureCoordinates(describe_variant(trained.cfg), len({id(b) for b in trained.blocks}),
                                               declared_passes(trained), interface_parameters)
        training = TrainingCoordinates(TrainingRecord.from_run(config, randomness, data=data), objective_of(trained),
                                       _distinct(trained.parameters()) - interface_parameters)
        systems = SystemsRecord.capture(deployed, batch=tokens.shape[0], cache_policy="one layer cache per application",
                                        prompt_length=tokens.shape[1], new_tokens=new_tokens, warmup=0)
        rows = tokens.shape[0]
        return cls(architecture, training, SystemsCoordinates(
            systems, computation.depth_passes * deployed.cfg.n_layers, _step_flops(deployed, tokens)[0],
            run.carried_bytes // rows))


def intervention_groups(a: SeparableRecord, b: SeparableRecord) -> dict[str, tuple[str, ...]]:
    """``{group: changed coordinates}`` for each group (``"architecture"``, ``"training"``,
    ``"systems"``) in which ``a`` and ``b`` differ (ftip-00KS); the machine-specific hardware and
    software strings are not compared, nor the tuning protocol (as in
    :meth:`~ftipbook.compare.records.TrainingRecord.common_recipe_arms`). Any other unrecorded
    coordinate is refused with ``ValueError``."""
    if not isinstance(a, SeparableRecord) or not isinstance(b, SeparableRecord):
        raise TypeError(f"intervention_groups compares two SeparableRecords, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    machine = {f"systems.systems.{f}" for f in SystemsRecord.MACHINE_FIELDS}
    out: dict[str, list[str]] = {}
    for change in diff_records(a, b):
        if change.path in machine or change.path.startswith("training.recipe.tuning"):
            continue
        if change.status != "differs":
            raise ValueError(f"{change.path} is unrecorded on one side; record it before grouping the changes")
        out.setdefault(change.path.split(".")[0], []).append(change.path)
    return {group: tuple(paths) for group, paths in out.items()}


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)

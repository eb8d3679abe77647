"""Build the committed architecture study deterministically: ``python scripts/build_study.py [--out DIR]``.

Trains every entry of ``ftipbook.study`` (three packages, budgets 50/100/200/400 steps, seeds
0/1/2, and the equal-tuning arm's learning-rate trials) on one CPU thread in float32 and writes
``STUDY.json``, the seed-0 budget-400 checkpoints and ``MANIFEST.json`` to ``ftipbook/_study``
(or ``--out``). About ten minutes of one CPU core.

``--check`` rebuilds into a temporary directory instead and reports, per entry, whether the
rebuild is identical (score and every item score bit for bit) and otherwise the score distance.
Identical rebuilds hold on the CPU kind the study was built on (``build.cpu`` in ``STUDY.json``);
on another kind float32 kernels round differently and training amplifies it. ``--score-tol``
turns the report into a pass/fail check.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ftipbook import study  # noqa: E402
from ftipbook.runtime import cpu_kind  # noqa: E402


def check(score_tol: float | None) -> int:
    """Rebuild into a temporary directory and report each entry's distance from the committed study.

    Returns 1 when an entry's score moved by more than ``score_tol`` (if given), else 0.
    """
    built_on = study.load().build.get("cpu")
    here = cpu_kind()
    print(f"committed study built on: {built_on}")
    print(f"rebuilding on:            {here}" + (" (the same kind)" if built_on == here else ""))
    with tempfile.TemporaryDirectory() as tmp:
        study.build(Path(tmp) / "study", log=lambda line: print(line, flush=True))
        distances = study.rebuild_distances(Path(tmp) / "study")
    print(f"\n{'entry':28s} {'identical':>9s} {'d score':>10s} {'max |d item|':>13s}")
    failed = []
    for d in distances:
        print(f"{d.key:28s} {'yes' if d.identical else 'no':>9s} {d.score_diff:+10.2e} {d.max_item_diff:13.2e}")
        if score_tol is not None and abs(d.score_diff) > score_tol:
            failed.append(d.key)
    same = sum(d.identical for d in distances)
    print(f"\n{same} of {len(distances)} entries identical" + (f"; failing: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=study.STUDY_DIR, help="output directory (default: ftipbook/_study)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temporary directory and report the distance to the committed study")
    parser.add_argument("--score-tol", type=float, default=None,
                        help="with --check: fail when an entry's score moves by more than this (nats)")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.score_tol)
    start = time.perf_counter()
    data = study.build(args.out, log=lambda line: print(line, flush=True))
    print(f"built {len(data['entries'])} entries in {time.perf_counter() - start:.0f} s "
          f"({data['build']['cpu_seconds']:.0f} CPU seconds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

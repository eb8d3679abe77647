"""Build the committed depth-reuse experiments deterministically: ``python scripts/build_depth.py [--out DIR]``.

Trains every run of ``ftipbook.depth_study`` (A: the two-block stack with 1, 2, 3 passes at seeds
0, 1, 2; B: the width x passes x budget surface; C: recirculation of A's models at 1 to 5 passes;
D: next-latent prediction on and off) on one CPU thread in float32 and writes ``DEPTH.json``, the
seed-0 checkpoints and ``MANIFEST.json`` to ``ftipbook/_depth`` (or ``--out``). The build time and
CPU kind are recorded in ``DEPTH.json`` (``build``).

``--check`` rebuilds into a temporary directory instead and compares: every count, configuration
and initial weights hash must be equal (exit status 1 otherwise); each score's distance is
reported, and ``--score-tol`` fails the check when one moves by more than that many nats. Scores
and trained weights are bit-for-bit equal only on the CPU kind of the committed build
(``build.cpu``); on another kind float32 kernels round differently and training amplifies it.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ftipbook import depth_study  # noqa: E402
from ftipbook.runtime import cpu_kind  # noqa: E402


def check(score_tol: float | None) -> int:
    """Rebuild into a temporary directory and compare with the committed experiments (0: pass, 1: fail)."""
    built_on = depth_study.load().build.get("cpu")
    here = cpu_kind()
    print(f"committed experiments built on: {built_on}")
    print(f"rebuilding on:                  {here}" + (" (the same kind)" if built_on == here else ""))
    with tempfile.TemporaryDirectory() as tmp:
        depth_study.build(Path(tmp) / "depth", log=lambda line: print(line, flush=True))
        report = depth_study.rebuild_report(Path(tmp) / "depth")
    print(f"\n{'score':34s} {'d score':>10s}")
    for key, diff in report.score_diffs.items():
        print(f"{key:34s} {diff:+10.2e}")
    failed = [k for k, d in report.score_diffs.items() if score_tol is not None and abs(d) > score_tol]
    print("\ncounts, configurations and initial hashes: "
          + ("all equal" if not report.count_mismatches else f"DIFFER in {', '.join(report.count_mismatches)}"))
    print(f"largest score distance {report.max_score_diff:.2e} nats; "
          + ("identical rebuild (scores and trained weights)" if report.identical else "not bit-identical")
          + (f"; beyond --score-tol {score_tol}: {', '.join(failed)}" if failed else ""))
    return 1 if failed or report.count_mismatches else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=depth_study.DEPTH_DIR,
                        help="output directory (default: ftipbook/_depth)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temporary directory and compare with the committed experiments")
    parser.add_argument("--score-tol", type=float, default=None,
                        help="with --check: fail when a score moves by more than this (nats)")
    args = parser.parse_args(argv)
    if args.score_tol is not None and not (args.score_tol >= 0):
        parser.error(f"--score-tol={args.score_tol!r} must be a number of nats >= 0")
    if args.check:
        return check(args.score_tol)
    start = time.perf_counter()
    data = depth_study.build(args.out, log=lambda line: print(line, flush=True))
    print(f"built in {time.perf_counter() - start:.0f} s ({data['build']['cpu_seconds']:.0f} CPU seconds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Build the committed JEPA-like model, its decoders and the AR baseline: ``python scripts/build_jepa.py [--out DIR]``.

Trains ``ftipbook.jepa_study`` on one CPU thread in float32 (about a minute) and writes
``JEPA.json``, three safetensors files and ``MANIFEST.json`` to ``ftipbook/_jepa`` (or ``--out``).

``--check`` rebuilds into a temporary directory instead and compares it with the committed build:
identical file hashes, or the largest score difference. Identical rebuilds hold on the CPU kind
the build was made on (``build.cpu`` in ``JEPA.json``); ``--score-tol`` turns the report into a
pass/fail check.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ftipbook import jepa_study  # noqa: E402
from ftipbook.runtime import cpu_kind  # noqa: E402


def check(score_tol: float | None) -> int:
    """Rebuild into a temporary directory and report the distance from the committed build.

    Returns 1 when a score moved by more than ``score_tol`` (if given), else 0.
    """
    committed = jepa_study.load()
    print(f"committed build made on: {committed.data['build']['cpu']}")
    print(f"rebuilding on:           {cpu_kind()}")
    with tempfile.TemporaryDirectory() as tmp:
        jepa_study.build(Path(tmp) / "jepa", log=lambda line: print(line, flush=True))
        rebuilt = jepa_study.load(Path(tmp) / "jepa")
        old, new = jepa_study.verify(), jepa_study.verify(Path(tmp) / "jepa")
    weights = [name for name in jepa_study.WEIGHT_FILES if old[name] != new[name]]
    print(f"weight files that differ: {weights or 'none'}")
    worst = 0.0
    for name, value in committed.scores.items():
        diff = rebuilt.scores[name] - value
        worst = max(worst, abs(diff))
        print(f"{name:20s} committed {value:.6f} rebuilt {rebuilt.scores[name]:.6f} diff {diff:+.2e}")
    return 1 if score_tol is not None and worst > score_tol else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=jepa_study.JEPA_DIR,
                        help="output directory (default: ftipbook/_jepa)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temporary directory and report the distance to the committed build")
    parser.add_argument("--score-tol", type=float, default=None,
                        help="with --check: fail when a score moves by more than this (nats)")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.score_tol)
    data = jepa_study.build(args.out, log=lambda line: print(line, flush=True))
    print(f"built in {data['build']['seconds']:.0f} s ({data['build']['cpu_seconds']:.0f} CPU seconds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

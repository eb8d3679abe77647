"""Build the checkpoint zoo deterministically: ``python scripts/build_zoo.py [--only RUN ...] [--out DIR]``.

Trains every run of ``ftipbook.zoo.RUNS`` on one CPU thread in float32 and writes the artifacts
and ``MANIFEST.json`` to ``ftipbook/_zoo`` (or ``--out``). A few minutes on a laptop CPU.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ftipbook import zoo  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=zoo.ZOO_DIR, help="output directory (default: ftipbook/_zoo)")
    parser.add_argument("--only", nargs="+", metavar="RUN", choices=list(zoo.runs()),
                        help="build only these runs (their parents must already be built)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    data = zoo.build(args.out, args.only, log=lambda line: print(line, flush=True))
    print(f"built {len(data['entries'])} entries in {time.perf_counter() - start:.0f} s")
    for name in (n for n in zoo.names() if n in data["entries"]):
        entry = data["entries"][name]
        evals = ", ".join(f"{k}={v:.3f}" for k, v in entry["evals"].items())
        print(f"  {name:22s} {entry['bytes'] / 1e6:5.2f} MB  final loss {entry['losses'][-1]:.3f}  {evals}")


if __name__ == "__main__":
    main()

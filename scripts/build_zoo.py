"""Build the checkpoint zoo deterministically: ``python scripts/build_zoo.py [--only RUN ...] [--out DIR]``.

Trains every run of ``ftipbook.zoo.RUNS`` on one CPU thread in float32 and writes the artifacts
and ``MANIFEST.json`` to ``ftipbook/_zoo`` (or ``--out``). A few minutes on a laptop CPU.

``--check`` rebuilds into a temporary copy of the committed zoo instead and reports, per entry,
whether the rebuild is byte-identical and otherwise how far it is (largest weight difference,
validation NLL difference). Byte-identical rebuilds hold on the CPU kind the zoo was built on;
on another kind the float32 kernels round differently and the entries land close, not equal.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ftipbook import zoo  # noqa: E402


def check(only: list[str] | None, nll_tol: float) -> int:
    """Rebuild into a temporary copy of the zoo and report each entry's distance; 1 if any is far."""
    with tempfile.TemporaryDirectory() as tmp:
        rebuilt = Path(tmp) / "zoo"
        shutil.copytree(zoo.ZOO_DIR, rebuilt)
        data = zoo.build(rebuilt, only, log=lambda line: print(line, flush=True))
        runs = zoo.runs()
        built = [entry for name in (only or runs) for entry, _ in runs[name].entries()]
        print(f"\n{'entry':22s} {'identical':>9s} {'max |dw|':>10s} {'d valid NLL':>12s}")
        far = []
        for name in built:
            d = zoo.rebuild_distance(name, rebuilt)
            print(f"{name:22s} {'yes' if d.identical else 'no':>9s} {d.max_weight_diff:10.2e} "
                  f"{d.valid_nll_diff:+12.2e}")
            if not d.within(nll_tol):
                far.append(name)
    print(f"\n{len(built) - len(far)} of {len(built)} entries identical or within {nll_tol:g} nats of "
          f"the committed validation NLL" + (f"; far: {', '.join(far)}" if far else ""))
    return 1 if far else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=zoo.ZOO_DIR, help="output directory (default: ftipbook/_zoo)")
    parser.add_argument("--only", nargs="+", metavar="RUN", choices=list(zoo.runs()),
                        help="build only these runs (their parents must already be built)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temporary directory and report the distance to the committed zoo")
    parser.add_argument("--nll-tol", type=float, default=0.02,
                        help="with --check: largest validation NLL difference (nats) counted as close (default 0.02)")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.only, args.nll_tol)
    start = time.perf_counter()
    data = zoo.build(args.out, args.only, log=lambda line: print(line, flush=True))
    print(f"built {len(data['entries'])} entries in {time.perf_counter() - start:.0f} s")
    for name in (n for n in zoo.names() if n in data["entries"]):
        entry = data["entries"][name]
        evals = ", ".join(f"{k}={v:.3f}" for k, v in entry["evals"].items())
        print(f"  {name:22s} {entry['bytes'] / 1e6:5.2f} MB  final loss {entry['losses'][-1]:.3f}  {evals}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

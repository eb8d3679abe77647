"""Build the checkpoint zoo deterministically: ``python scripts/build_zoo.py [--only RUN ...] [--out DIR]``.

Trains every run of ``ftipbook.zoo.RUNS`` on one CPU thread in float32 and writes the artifacts
and ``MANIFEST.json`` to ``ftipbook/_zoo`` (or ``--out``). A few minutes on a laptop CPU.

``--check`` rebuilds into a temporary copy of the committed zoo instead and reports, per entry,
whether the rebuild is byte-identical and otherwise how far it is (largest weight difference,
validation NLL and accuracy differences). Byte-identical rebuilds hold on the CPU kind the zoo
was built on (recorded in the manifest's ``build.cpu``); on another kind the float32 kernels
round differently, training amplifies it, and the entries land near, not on, the committed
ones. ``--require-identical`` and ``--nll-tol`` turn the report into a pass/fail check.
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
from ftipbook.runtime import cpu_kind  # noqa: E402


def check(only: list[str] | None, nll_tol: float | None, require_identical: bool) -> int:
    """Rebuild into a temporary copy of the zoo and report each entry's distance from the committed one.

    Returns 1 when an entry differs and ``require_identical`` is set, or when its validation NLL
    moved by more than ``nll_tol``; else 0.
    """
    built_on = zoo.manifest()["build"].get("cpu")
    here = cpu_kind()
    print(f"committed zoo built on: {built_on or 'a CPU the manifest does not record'}")
    print(f"rebuilding on:          {here}" + (" (the same kind)" if built_on == here else ""))
    with tempfile.TemporaryDirectory() as tmp:
        rebuilt = Path(tmp) / "zoo"
        shutil.copytree(zoo.ZOO_DIR, rebuilt)
        zoo.build(rebuilt, only, log=lambda line: print(line, flush=True))
        runs = zoo.runs()
        built = [entry for name in (only or runs) for entry, _ in runs[name].entries()]
        print(f"\n{'entry':22s} {'identical':>9s} {'max |dw|':>10s} {'d valid NLL':>12s} {'max |d acc|':>12s}")
        distances = [zoo.rebuild_distance(name, rebuilt) for name in built]
    failed = []
    for d in distances:
        nll, acc = d.valid_nll_diff, d.max_accuracy_diff
        print(f"{d.entry:22s} {'yes' if d.identical else 'no':>9s} {d.max_weight_diff:10.2e} "
              f"{'-' if nll is None else f'{nll:+.2e}':>12s} {'-' if acc is None else f'{acc:.3f}':>12s}")
        if (require_identical and not d.identical) or (
                nll_tol is not None and nll is not None and abs(nll) > nll_tol):
            failed.append(d.entry)
    same = sum(d.identical for d in distances)
    print(f"\n{same} of {len(distances)} entries byte-identical"
          + (f"; failing: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=zoo.ZOO_DIR, help="output directory (default: ftipbook/_zoo)")
    parser.add_argument("--only", nargs="+", metavar="RUN", choices=list(zoo.runs()),
                        help="build only these runs (their parents must already be built)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temporary directory and report the distance to the committed zoo")
    parser.add_argument("--require-identical", action="store_true",
                        help="with --check: fail unless every entry is byte-identical (same CPU kind)")
    parser.add_argument("--nll-tol", type=float, default=None,
                        help="with --check: fail when an entry's validation NLL moves by more than this (nats)")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.only, args.nll_tol, args.require_identical)
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

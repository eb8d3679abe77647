"""Execute chapter sources (MyST ``.md``) and write the paired ``.ipynb`` with outputs.

The ``.md`` is the source of truth; the ``.ipynb`` is always regenerated from it in one
direction (never ``jupytext --sync``). Output notebooks are deterministic: cell ids are
derived from the cell index, execution counts run 1, 2, ..., and no timing metadata is kept.

    python tools/notebooks.py chapters/part-2/.../000Q-scaled-dot-product-attention.md
    python tools/notebooks.py --all        # every chapter
    python tools/notebooks.py --stale      # chapters whose .ipynb no longer pairs with the .md
    python tools/notebooks.py --markdown-only <md>   # only markdown changed: keep the stored outputs
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
KERNEL = "python3"
TIMEOUT_S = 300
#: The kernel's environment while a chapter runs, as under `task.py test`: stored outputs always
#: come from the CPU path, with one intra-op thread (the test runs two notebooks at once).
KERNEL_ENV = {"FTIPBOOK_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
#: Cell metadata carried from the source into the notebook: tags, and the output tolerance a
#: cell declares for the chapter test (tests/output_compare.py).
KEPT_METADATA = ("tags", "output_tolerance")


def source_cells(md: Path) -> nbformat.NotebookNode:
    """The notebook read from a MyST source, with deterministic ids and clean metadata."""
    nb = jupytext.read(md, fmt="md:myst")
    nb.metadata = nbformat.from_dict(
        {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": KERNEL},
            "language_info": {"name": "python"},
        }
    )
    for index, cell in enumerate(nb.cells):
        cell.id = f"cell-{index:03d}"
        cell.metadata = nbformat.from_dict({key: cell.metadata[key] for key in KEPT_METADATA
                                            if cell.metadata.get(key)})
    return nb


def execute(md: Path) -> nbformat.NotebookNode:
    """Run every code cell of ``md`` in a fresh kernel started in the chapter's folder."""
    nb = source_cells(md)
    saved = {name: os.environ.get(name) for name in KERNEL_ENV}
    os.environ.update(KERNEL_ENV)
    try:
        NotebookClient(nb, timeout=TIMEOUT_S, kernel_name=KERNEL, record_timing=False,
                       resources={"metadata": {"path": str(md.parent)}}).execute()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.language_info = nbformat.from_dict({"name": "python"})
    nbformat.validate(nb)
    return nb


def write(md: Path) -> Path:
    target = md.with_suffix(".ipynb")
    nbformat.write(execute(md), target)
    return target


def refresh_markdown(md: Path) -> Path:
    """Rewrite ``md``'s ipynb from the source without running it, keeping every code cell's stored
    outputs; refused (ValueError) unless the code cells are unchanged, in number, order and source."""
    target = md.with_suffix(".ipynb")
    nb, old = source_cells(md), nbformat.read(target, as_version=4)
    new_code = [c for c in nb.cells if c.cell_type == "code"]
    old_code = [c for c in old.cells if c.cell_type == "code"]
    if [(c.source, c.metadata) for c in new_code] != [(c.source, c.metadata) for c in old_code]:
        raise ValueError(f"{md.name}: code cells changed; run the chapter (tools/notebooks.py without --markdown-only)")
    for new, stored in zip(new_code, old_code):
        new.outputs, new.execution_count = stored.outputs, stored.execution_count
    nb.metadata.language_info = nbformat.from_dict({"name": "python"})
    nbformat.validate(nb)
    nbformat.write(nb, target)
    return target


def pairs(md: Path) -> bool:
    """Whether ``md``'s ipynb has the same cells (type, source, kept metadata), every code cell run."""
    target = md.with_suffix(".ipynb")
    if not target.exists():
        return False
    want, have = source_cells(md), nbformat.read(target, as_version=4)
    if len(want.cells) != len(have.cells):
        return False
    for a, b in zip(want.cells, have.cells):
        if (a.cell_type, a.source) != (b.cell_type, b.source):
            return False
        if any(a.metadata.get(key) != b.metadata.get(key) for key in KEPT_METADATA):
            return False
        if b.cell_type == "code" and b.get("execution_count") is None:
            return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--all", action="store_true", help="every chapters/**/*.md")
    group.add_argument("--stale", action="store_true", help="only chapters whose ipynb does not pair")
    parser.add_argument("--markdown-only", action="store_true",
                        help="only markdown cells changed: rewrite the ipynb keeping its stored outputs")
    args = parser.parse_args()
    paths = [p.resolve() for p in args.paths]
    if args.all or args.stale:
        paths = sorted((ROOT / "chapters").rglob("*.md"))
        if args.stale:
            paths = [p for p in paths if not pairs(p)]
    if not paths:
        print("nothing to do")
        return 0
    for md in paths:
        if md.suffix != ".md" or not md.exists():
            print(f"not a chapter source: {md}", file=sys.stderr)
            return 2
        start = time.perf_counter()
        target = refresh_markdown(md) if args.markdown_only else write(md)
        print(f"{target.relative_to(ROOT)}  ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run each chapter against deliberate bugs in the library and require its asserts to catch them.

Every chapter ``chapters/.../<ID>-<slug>.md`` has a ``<ID>-<slug>.mutants.yml`` beside it: a
list of mutants, each a realistic bug in the library code the chapter relies on, written as an
exact text replacement in one file of ``ftipbook/``::

    - file: ftipbook/model/moe.py
      old: "top = scores.topk(self.k, dim=-1)"
      new: "top = (-scores).topk(self.k, dim=-1)"
      why: the router keeps the k lowest scores instead of the k highest

The tool first runs every selected chapter unchanged, then once per mutant with the mutated
module served by an import hook (the files on disk are never touched), the mutants of the
slowest chapters first. Code cells run in one plain
Python namespace, without a Jupyter kernel, so only what the cells raise counts, not their
printed output. A mutant is *killed* when a cell raises ``AssertionError``. It *survives* when
every cell runs; it is *broken* when it only breaks an import, a name or an attribute, or when
its ``old`` text is not found exactly once; it *crashes* when a cell raises anything else, since
that is not a check catching it. Anything but killed fails the run.

    python tools/mutants.py               # every chapter; each must declare at least 2 mutants
    python tools/mutants.py 000Z 001F     # only these chapters (item ids or paths)
    python tools/mutants.py --list 000Z   # show the declared mutants

Jobs run in children forked from one process that has imported torch and the other heavy
packages once, ``--jobs`` at a time (the number of CPUs by default).
"""
from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import json
import os
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "ftipbook"
SUFFIX = ".mutants.yml"
MIN_MUTANTS = 2
#: The environment of a chapter run, as under ``task.py test``.
CHAPTER_ENV = {"FTIPBOOK_DEVICE": "cpu", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
#: Exceptions that mean the mutant broke the code's shape rather than its behaviour.
BROKEN = (ImportError, NameError, AttributeError, SyntaxError)
PRELOAD = ("torch", "numpy", "matplotlib.pyplot", "sympy", "safetensors.torch", "jupytext")


@dataclass(frozen=True)
class Mutant:
    """One declared bug: replace ``old`` by ``new`` in ``file`` (relative to the root)."""

    file: str
    old: str
    new: str
    why: str

    def mutated_source(self) -> str:
        """The mutated text of the file; ValueError unless ``old`` occurs exactly once."""
        path = ROOT / self.file
        text = path.read_text()
        count = text.count(self.old)
        if count != 1:
            raise ValueError(f"{self.file}: the old text occurs {count} times, not once: {self.old!r}")
        return text.replace(self.old, self.new)


@dataclass(frozen=True)
class Job:
    chapter: Path
    index: int  # -1 for the unmutated baseline
    mutant: Mutant | None


def chapter_code(md: Path) -> list[str]:
    """The sources of the chapter's code cells, in order, without the Colab install cell."""
    import jupytext

    nb = jupytext.read(md, fmt="md:myst")
    return [c.source for c in nb.cells
            if c.cell_type == "code" and "remove-cell" not in c.metadata.get("tags", [])]


def declared(md: Path) -> list[Mutant]:
    """The mutants declared beside ``md`` (ValueError naming the file when malformed)."""
    path = md.with_name(md.stem + SUFFIX)
    if not path.exists():
        return []
    entries = yaml.safe_load(path.read_text()) or []
    if not isinstance(entries, list):
        raise ValueError(f"{path.name}: expected a list of mutants, got {type(entries).__name__}")
    mutants = []
    for n, entry in enumerate(entries, 1):
        keys = set(entry) if isinstance(entry, dict) else set()
        if keys != {"file", "old", "new", "why"}:
            raise ValueError(f"{path.name}: mutant {n} needs exactly file, old, new, why; got {sorted(keys)}")
        if not all(isinstance(entry[k], str) and entry[k].strip() for k in keys):
            raise ValueError(f"{path.name}: mutant {n}: every field must be a non-empty string")
        if entry["old"] == entry["new"]:
            raise ValueError(f"{path.name}: mutant {n}: old and new are the same text")
        if not (ROOT / entry["file"]).resolve().is_relative_to(LIBRARY) or not entry["file"].endswith(".py"):
            raise ValueError(f"{path.name}: mutant {n}: file must be a .py file under ftipbook/, got {entry['file']!r}")
        mutants.append(Mutant(entry["file"], entry["old"], entry["new"], entry["why"]))
    return mutants


def chapters(selectors: list[str]) -> list[Path]:
    """Chapter sources named by item id (``000Z``) or path; every chapter when none is named."""
    every = sorted((ROOT / "chapters").rglob("*.md"))
    if not selectors:
        return every
    chosen = []
    for sel in selectors:
        as_path = Path(sel).resolve()
        hits = [as_path] if as_path.suffix == ".md" and as_path.exists() else [
            md for md in every if md.stem.split("-")[0].upper() == sel.upper().removeprefix("FTIP-")]
        if len(hits) != 1:
            raise SystemExit(f"no single chapter for {sel!r} (found {len(hits)})")
        chosen += hits
    return chosen


class _MutantLoader(importlib.machinery.SourceFileLoader):
    """Serves one module from the mutated text instead of the file (no bytecode cache)."""

    def __init__(self, fullname: str, path: str, source: str) -> None:
        super().__init__(fullname, path)
        self._source = source

    def get_source(self, fullname: str) -> str:
        return self._source

    def get_code(self, fullname: str):
        return compile(self._source, self.path, "exec", dont_inherit=True)


class _MutantFinder(importlib.abc.MetaPathFinder):
    def __init__(self, path: Path, source: str) -> None:
        self.path, self.source, self.hit = str(path), source, False

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("ftipbook"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.origin == self.path:
            spec.loader = _MutantLoader(fullname, self.path, self.source)
            self.hit = True
        return spec


def _run_cells(job: Job) -> dict:
    """Inside the child: run the chapter's cells, return what happened (never raises)."""
    finder = None
    if job.mutant is not None:
        try:
            source = job.mutant.mutated_source()
            compile(source, job.mutant.file, "exec", dont_inherit=True)
        except (ValueError, SyntaxError) as err:
            return {"outcome": "broken", "detail": f"{type(err).__name__}: {err}"}
        finder = _MutantFinder((ROOT / job.mutant.file).resolve(), source)
        sys.meta_path.insert(0, finder)
    import matplotlib.pyplot as plt
    import torch

    torch.set_num_threads(1)
    os.chdir(job.chapter.parent)
    namespace = {"__name__": "__main__"}
    for n, code in enumerate(chapter_code(job.chapter), 1):
        try:
            exec(compile(code, f"<{job.chapter.stem} cell {n}>", "exec"), namespace)
        except BaseException as err:  # noqa: BLE001 - every outcome is reported
            where = traceback.format_exception_only(type(err), err)[-1].strip()
            if isinstance(err, AssertionError):
                outcome = "killed"
            elif isinstance(err, BROKEN):
                outcome = "broken"
            else:
                outcome = "crashed"
            return {"outcome": outcome, "detail": f"code cell {n}: {where[:300]}"}
        finally:
            plt.close("all")
    if finder is not None and not finder.hit:
        return {"outcome": "survived", "detail": f"{job.mutant.file} was never imported by the chapter"}
    return {"outcome": "survived" if job.mutant else "passed", "detail": ""}


def _child(job: Job, result_path: str) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        result = _run_cells(job)
    except BaseException as err:  # noqa: BLE001
        result = {"outcome": "crashed", "detail": f"harness: {type(err).__name__}: {err}"}
    with open(result_path, "w") as fh:
        json.dump(result, fh)
    os._exit(0)


def run_jobs(jobs: list[Job], n_jobs: int, timeout: float, report) -> list[tuple[Job, dict, float]]:
    """Fork one child per job, ``n_jobs`` at a time; ``report`` sees each result as it ends."""
    results, running, queue = [], {}, list(jobs)
    with tempfile.TemporaryDirectory() as tmp:
        while queue or running:
            while queue and len(running) < n_jobs:
                job = queue.pop(0)
                path = os.path.join(tmp, f"{len(results) + len(running)}-{os.getpid()}.json")
                pid = os.fork()
                if pid == 0:
                    _child(job, path)
                running[pid] = (job, path, time.perf_counter())
            for pid, (job, path, start) in list(running.items()):
                done, _ = os.waitpid(pid, os.WNOHANG)
                elapsed = time.perf_counter() - start
                if not done and elapsed > timeout:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    result = {"outcome": "timed out", "detail": f"killed after {timeout:.0f} s"}
                elif not done:
                    continue
                elif os.path.exists(path):
                    with open(path) as fh:
                        result = json.load(fh)
                else:
                    result = {"outcome": "crashed", "detail": "the child died without a result"}
                del running[pid]
                results.append((job, result, elapsed))
                report(job, result, elapsed)
            time.sleep(0.02)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chapters", nargs="*", help="item ids (000Z) or .md paths; all when none")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per chapter run")
    parser.add_argument("--list", action="store_true", help="print the declared mutants and exit")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    selected = chapters(args.chapters)
    problems, jobs = [], []
    for md in selected:
        mutants = declared(md)
        if args.list:
            for n, m in enumerate(mutants, 1):
                print(f"{md.stem[:4]} #{n} {m.file}: {m.why}")
            continue
        if len(mutants) < MIN_MUTANTS:
            problems.append(f"{md.stem[:4]}: {len(mutants)} mutants declared, at least {MIN_MUTANTS} needed")
        jobs.append(Job(md, -1, None))
        jobs += [Job(md, n, m) for n, m in enumerate(mutants, 1)]
    if args.list:
        return 0
    os.environ.update(CHAPTER_ENV)
    for name in PRELOAD:
        __import__(name)
    start = time.perf_counter()
    counts: dict[str, int] = {}

    def report(job: Job, result: dict, elapsed: float) -> None:
        outcome = result["outcome"]
        counts[outcome] = counts.get(outcome, 0) + 1
        label = "baseline" if job.mutant is None else f"mutant {job.index}"
        ok = outcome == ("passed" if job.mutant is None else "killed")
        if not ok:
            why = "" if job.mutant is None else f" [{job.mutant.why}]"
            problems.append(f"{job.chapter.stem[:4]} {label} {outcome}{why}: {result['detail']}")
        print(f"{'ok ' if ok else 'BAD'} {job.chapter.stem[:4]} {label:9s} {outcome:9s} "
              f"{elapsed:5.1f} s  {result['detail'][:110]}", flush=True)

    # baselines first; then the mutants of the chapters that passed, longest chapters first,
    # so that the workers finish together
    baselines = run_jobs([j for j in jobs if j.mutant is None], args.jobs, args.timeout, report)
    took = {job.chapter: elapsed for job, result, elapsed in baselines if result["outcome"] == "passed"}
    mutated = sorted((j for j in jobs if j.mutant is not None and j.chapter in took),
                     key=lambda j: -took[j.chapter])
    skipped = sum(j.mutant is not None and j.chapter not in took for j in jobs)
    if skipped:
        problems.append(f"{skipped} mutants not run: their chapter failed unchanged")
    run_jobs(mutated, args.jobs, args.timeout, report)
    n_mutants = sum(j.mutant is not None for j in jobs)
    print(f"\nmutants: {len(selected)} chapters, {n_mutants} mutants; "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
          + f"; {time.perf_counter() - start:.0f} s with {args.jobs} jobs")
    for line in problems:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""A pytest plugin over nbval: stored chapter outputs compared with a tolerance for numbers.

nbval compares each output exactly after its sanitize patterns. This plugin keeps that
comparison and only relaxes its last step: where nbval finds two outputs unequal, they are
compared again with :func:`output_compare.differences`, which lets decimal numbers move by a
few units in their last printed digit (or by a cell's declared ``output_tolerance``) and keeps
every integer and every other character exact. Load it with ``-p tests.nbval_tolerance``.

At the end of a run it reports how many cells passed only thanks to the tolerance and how many
printed numbers moved, so that a pass on another CPU code path can show what it changed.
"""
from __future__ import annotations

from collections import defaultdict

import pytest
from nbval import plugin as nbval

from tests.output_compare import Tolerance, differences, moved_numbers

_exact_compare = nbval.IPyNbCell.compare_outputs
PROPERTY = "nbval_tolerance_moved"
#: Cells that matched only within tolerance, and how many printed numbers moved in them.
_TOTALS: dict = {"cells": [], "numbers": 0}


def _flatten(cell: nbval.IPyNbCell, outputs: list, skip: tuple) -> dict[str, list]:
    """nbval's view of a cell's outputs: one list of sanitized values per output key."""
    flat: dict[str, list] = defaultdict(list)
    for output in nbval.transform_streams_for_comparison(outputs):
        for key, value in output.items():
            if key in skip:
                continue
            if key == "data":
                for mime, data in value.items():
                    if mime not in skip:
                        flat[mime].append(cell.sanitize(data))
            else:
                flat[key].append(cell.sanitize(value))
    return flat


def compare_outputs(self: nbval.IPyNbCell, test, ref, skip_compare=None) -> bool:
    """nbval's exact comparison, then the tolerant one where the exact one fails."""
    if _exact_compare(self, test, ref, skip_compare):
        return True
    skip = skip_compare or self.parent.skip_compare
    tol = Tolerance.of_cell(self.cell.metadata)
    stored, fresh = _flatten(self, ref, skip), _flatten(self, test, skip)
    if set(stored) != set(fresh):
        return False
    moved = 0
    for key, values in stored.items():
        if len(values) != len(fresh[key]):
            return False
        for a, b in zip(values, fresh[key]):
            if not (isinstance(a, str) and isinstance(b, str)):
                if a != b:
                    return False
                continue
            why = differences(a, b, tol)
            if why:
                self.comparison_traceback.append(f"tolerant comparison, output '{key}': {why}")
                return False
            moved += moved_numbers(a, b)
    self.comparison_traceback = []
    self.user_properties.append((PROPERTY, moved))
    return True


def pytest_configure(config: pytest.Config) -> None:
    nbval.IPyNbCell.compare_outputs = compare_outputs


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call":
        return
    for name, moved in report.user_properties:
        if name == PROPERTY:
            _TOTALS["cells"].append(report.nodeid)
            _TOTALS["numbers"] += moved


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    cells = _TOTALS["cells"]
    line = (f"nbval tolerance: {len(cells)} cells matched only within tolerance, "
            f"{_TOTALS['numbers']} printed numbers moved")
    terminalreporter.write_line(line)
    for nodeid in cells:
        terminalreporter.write_line(f"  moved: {nodeid}")

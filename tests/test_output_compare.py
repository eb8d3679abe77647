"""The chapter test's output comparison: exact text and integers, decimals to their printed digit."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.output_compare import NUMBER, Tolerance, differences, last_digit, moved_numbers

ROOT = Path(__file__).resolve().parents[1]


def test_a_decimal_may_move_a_few_units_of_its_last_printed_digit():
    # the two prints of one chapter cell on an AVX-512 and an AVX2 machine
    assert differences("283, 5.3976, 5.2064", "283, 5.3978, 5.2064", Tolerance()) is None
    why = differences("283, 5.3976, 5.2064", "283, 5.3986, 5.2064", Tolerance())
    assert "stored 5.3976, now 5.3986" in why and "3 units of 0.0001" in why
    assert differences("1.0e-06", "9.8e-07", Tolerance()) is None     # different exponents
    assert differences("-0.0000", "0.0000", Tolerance()) is None       # a sign at round-off


def test_integers_text_and_the_count_of_numbers_stay_exact():
    tol = Tolerance(rtol=0.5, reason="any reason at all")
    assert "integers are compared exactly" in differences("steps: 283", "steps: 284", tol)
    assert "text differs on line 2" in differences("a 1.5\nb 2.5", "a 1.5\nc 2.5", tol)
    assert differences("< 1e-6", "1.0e-06", tol) is not None           # a branch in the text
    assert differences("x 1.5", "x 1.5 2.5", tol) is not None


def test_numbers_inside_names_hashes_and_versions_are_text():
    text = "ftip-000Z 3ff8f81 v1.2.3 x2 torch.Size([16, 6]) -4 a-1.5 5."
    assert NUMBER.findall(text) == ["16", "6", "-4", "1.5", "5"]
    assert differences("ftip-000Z", "ftip-000Y", Tolerance()) is not None
    assert differences("sha 3ff8f81", "sha 3ff8f82", Tolerance()) is not None


def test_last_digit_and_moved_numbers():
    assert last_digit("5.3976") == pytest.approx(1e-4) and last_digit("2.9e-07") == pytest.approx(1e-8)
    assert last_digit("1e3") == pytest.approx(1e3) and last_digit("17") is None
    assert moved_numbers("1.25 and 2.50", "1.26 and 2.50") == 1


def test_a_declared_tolerance_widens_decimals_only_and_needs_a_reason():
    meta = {"output_tolerance": {"rtol": 0.01, "reason": "losses after 300 training steps"}}
    tol = Tolerance.of_cell(meta)
    assert differences("loss 2.500", "loss 2.520", tol) is None
    assert differences("loss 2.500", "loss 2.530", tol) is not None
    assert Tolerance.of_cell({}) == Tolerance()
    for bad in ({"rtol": 0.01}, {"rtol": 0.01, "reason": "x"}, {"rtol": -1, "reason": "a b c"},
                {"rtl": 0.01, "reason": "a b c"}, "0.01"):
        with pytest.raises(ValueError, match="output_tolerance"):
            Tolerance.of_cell({"output_tolerance": bad})


def test_the_nbval_plugin_accepts_moved_decimals_and_refuses_moved_integers(tmp_path):
    import nbformat

    def notebook(stored: str, code: str):
        cell = nbformat.v4.new_code_cell(code, execution_count=1)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stored)]
        nb = nbformat.v4.new_notebook(cells=[cell])
        nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
        return nb

    nbformat.write(notebook("0.3333\n", "print(f'{1/3 + 2e-4:.4f}')"), tmp_path / "moved.ipynb")
    nbformat.write(notebook("7\n", "print(8)"), tmp_path / "count.ipynb")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tests.nbval_tolerance",
           "--nbval", "--nbval-current-env", "-q", "-rA", str(tmp_path)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout
    assert "1 failed, 1 passed" in out, out
    assert "FAILED " in out and "count.ipynb::Cell 0" in out.split("FAILED ", 1)[1], out
    assert "integers are compared exactly" in out
    assert "1 cells matched only within tolerance, 1 printed numbers moved" in out

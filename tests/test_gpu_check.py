"""tools/gpu_check.py: its dry run takes every step of the GPU check on the CPU at toy sizes (issue 16)."""
import subprocess
import sys

import pytest

import gpu_check  # tools/ is importable (tests/conftest.py)

ROWS = ["CUDA tests", "train step bf16 eager", "train step bf16 compiled",
        "KDA fla chunk_kda vs chunked (dry: recurrent)", "generation vs transformers", *(f"chapter {item} on cpu" for item in gpu_check.CHAPTERS), "total wall time"]


def test_dry_run_prints_one_table_of_passing_rows():
    proc = subprocess.run([sys.executable, str(gpu_check.ROOT / "tools" / "gpu_check.py"), "--dry-run"],
                          cwd=gpu_check.ROOT, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("check "))
    table = {ln.split("  ")[0].strip(): ln for ln in lines[header + 2:]}
    assert list(table) == ROWS
    for name, line in table.items():
        status = line[len(lines[header].split("status")[0]):].split()[0]
        assert status == "ok", line
    assert "skipped" in table["CUDA tests"] and "passed" not in table["CUDA tests"]  # no CUDA here
    assert "tok/s" in table["train step bf16 compiled"] and "same tokens: yes" in table["generation vs transformers"]


@pytest.mark.parametrize("name,peak", [
    ("NVIDIA H100 80GB HBM3", 989.5), ("NVIDIA H100 PCIe", 756.5), ("NVIDIA H100 NVL", 835.5),
    ("NVIDIA H200", 989.5), ("NVIDIA H200 NVL", 835.5), ("NVIDIA A100-SXM4-80GB", None),
])
def test_bf16_peak_by_device_name(name, peak):
    assert gpu_check.bf16_peak_tflops(name) == peak


def test_a_failing_step_becomes_a_fail_row():
    def broken():
        raise RuntimeError("no kernel image is available\nsecond line")

    (row,) = gpu_check._guarded("train step bf16", broken)
    assert (row.check, row.status, row.detail) == ("train step bf16", "FAIL",
                                                   "RuntimeError: no kernel image is available")
    assert "FAIL" in gpu_check.format_rows([row]).splitlines()[2]


@pytest.mark.skipif(gpu_check.torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
def test_without_cuda_the_full_check_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_info:
        gpu_check.main([])
    assert exit_info.value.code == 2 and "--dry-run" in capsys.readouterr().err

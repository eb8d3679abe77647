"""The package as users install it: an sdist and a wheel that carry every package file (code, the
zoo, the committed studies, the texts) and a wheel that installs into a fresh virtual environment
and runs the README's library example there."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import layout

pytestmark = pytest.mark.skipif(
    os.environ.get("FTIPBOOK_TEST_INSTALLED") == "1",
    reason="packaging the checkout is tested in the main environment; here the package under test is the "
           "wheel already installed")

ROOT = layout.ROOT


def _package_files() -> set[str]:
    """Every file under ``ftipbook/`` a checkout holds, as a path inside the package."""
    return {p.relative_to(ROOT).as_posix() for p in (ROOT / "ftipbook").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def _build(tmp_path: Path, kind: str) -> Path:
    """Build from a copy of the sources, so that setuptools' ``build/`` never lands in the checkout."""
    source = tmp_path / f"src-{kind}"
    shutil.copytree(ROOT / "ftipbook", source / "ftipbook", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    out = tmp_path / kind
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), "."] \
        if kind == "wheel" else \
        [sys.executable, "-c", "from setuptools import build_meta as b; import sys; b.build_sdist(sys.argv[1])", str(out)]
    result = subprocess.run(command, cwd=source, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    (built,) = out.glob("ftipbook-*.whl" if kind == "wheel" else "ftipbook-*.tar.gz")
    return built


def test_wheel_and_sdist_carry_every_package_file(tmp_path):
    wheel = _build(tmp_path, "wheel")
    in_wheel = {n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("ftipbook/")}
    missing = _package_files() - in_wheel
    assert not missing, f"package files left out of the wheel (pyproject package-data): {sorted(missing)[:8]}"
    sdist = _build(tmp_path, "sdist")
    names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    assert not _package_files() - names, sorted(_package_files() - names)[:8]


def test_wheel_installs_into_a_fresh_venv_and_runs_the_readme_example(tmp_path):
    wheel = _build(tmp_path, "wheel")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, timeout=300, capture_output=True)
    # The dependencies (torch, numpy, ...) come from this environment, behind the fresh install:
    # a path added by a .pth file does not run that directory's own .pth files, so the checkout's
    # editable install stays out of reach and ``import ftipbook`` finds the wheel.
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    readme = (ROOT / "README.md").read_text()
    script = re.search(r"\.venv/bin/python - <<'PY'\n(.*?)\nPY\n", readme, re.S)[1]
    check = ("import ftipbook, ftipbook.zoo, ftipbook.study, ftipbook.depth_study, ftipbook.jepa_study\n"
             f"assert ftipbook.__file__.startswith({str(venv)!r}), ftipbook.__file__\n"
             "ftipbook.zoo.verify('base-mha'); ftipbook.study.verify()\n"
             "ftipbook.depth_study.verify(); ftipbook.jepa_study.verify()\n")
    result = subprocess.run([str(python), "-c", check + script], cwd=tmp_path, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "StopReason.MAX_LEN" in result.stdout

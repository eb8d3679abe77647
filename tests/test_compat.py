"""The compatibility pass tests what the package declares (tools/task.py, tools/compat/).

The oldest environment must pin exactly the lower bound of every dependency that
``pyproject.toml`` bounds, so a declared bound is a tested one; its chapter sample must cover
every section of the book.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest brings tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
COMPAT = ROOT / "tools" / "compat"


def _pins(lock: Path) -> dict[str, str]:
    pins = {}
    for line in lock.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def _lower_bounds() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + project["optional-dependencies"]["test"]
    bounds = {}
    for spec in specs:
        name, _, version = re.match(r"([A-Za-z0-9_.-]+)\s*(>=)\s*([0-9.]+)", spec).groups()
        bounds[re.sub(r"[-_.]+", "-", name).lower()] = version
    return bounds


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.match(r"[0-9.]+", version).group().rstrip(".").split("."))


@pytest.mark.parametrize("name", ["torch", "numpy", "matplotlib", "safetensors", "transformers"])
def test_the_oldest_environment_pins_each_declared_lower_bound(name):
    bound, pin = _lower_bounds()[name], _pins(COMPAT / "oldest.txt")[name]
    assert _release(pin) == _release(bound) + (0,) * (len(_release(pin)) - len(_release(bound))), (
        f"pyproject.toml declares {name}>={bound} but the compatibility pass tests {name}=={pin}")


def test_every_bounded_dependency_is_installed_in_both_environments():
    bounds = _lower_bounds()
    for env in ("oldest", "newest"):
        pins = _pins(COMPAT / f"{env}.txt")
        missing = sorted(set(bounds) - set(pins))
        assert not missing, f"{env}.txt does not install {missing}"
        too_old = [n for n in bounds if _release(pins[n]) < _release(bounds[n])]
        assert not too_old, f"{env}.txt pins below the declared bound: {too_old}"


def test_the_chapter_sample_covers_every_section_with_existing_chapters():
    listed = [ROOT / line for line in (COMPAT / "chapters.txt").read_text().split()]
    assert len(listed) >= 20 and all(p.suffix == ".ipynb" and p.exists() for p in listed)
    sections = {p.parent for p in ROOT.glob("chapters/part-*/*/*.ipynb")}
    assert {p.parent for p in listed} == sections

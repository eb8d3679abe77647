"""tools/mutants.py: a mutant counts as caught only when a chapter assert fails."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

import mutants

pytestmark = pytest.mark.skipif(
    os.environ.get("FTIPBOOK_TEST_INSTALLED") == "1",
    reason="the mutant tool edits the checkout's sources, which an installed package never imports")

CHAPTER = """---
jupytext:
  text_representation:
    format_name: myst
---

```{{code-cell}} ipython3
from fractions import Fraction
from ftipbook.prob import FiniteLaw, expectation

law = FiniteLaw({{1: Fraction(1, 4), 2: Fraction(3, 4)}})
value = expectation(law, lambda x: x)
```

```{{code-cell}} ipython3
{check}
```
"""
OLD = '    return checks.instance("law", law, FiniteLaw).expectation(z)\n'


def write_chapter(tmp_path, check: str, entries: list[dict]):
    md = tmp_path / "0000-toy.md"
    md.write_text(CHAPTER.format(check=check))
    (tmp_path / "0000-toy.mutants.yml").write_text(yaml.safe_dump(entries))
    return md


def mutant(new: str, old: str = OLD, why: str = "a test mutant") -> dict:
    return {"file": "ftipbook/prob.py", "old": old, "new": new, "why": why}


def run_tool(md) -> str:
    cmd = [sys.executable, str(mutants.ROOT / "tools" / "mutants.py"), str(md), "--jobs", "2"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=mutants.ROOT)
    return done.returncode, done.stdout


def test_every_outcome_is_told_apart(tmp_path):
    md = write_chapter(tmp_path, "assert value == Fraction(7, 4)", [
        mutant('    return checks.instance("law", law, FiniteLaw).expectation(lambda x: -z(x))\n', why="sign"),           # killed
        mutant('    return checks.instance("law", law, FiniteLaw).expectation(z) + 0\n', why="harmless"),                  # survived
        mutant("    return undefined_name\n", why="a name"),                            # broken
        mutant("    raise ValueError('no')\n", why="raises"),                           # crashed
        mutant("x", old="this text is not in the file", why="absent"),                  # broken
    ])
    code, out = run_tool(md)
    assert code == 1
    lines = {line.split()[3]: line for line in out.splitlines() if line[:3] in ("ok ", "BAD")}
    assert "baseline" in out and "passed" in out.split("baseline", 1)[1].split("\n")[0]
    assert [lines[str(n)].split()[4] for n in range(1, 6)] == [
        "killed", "survived", "broken", "crashed", "broken"]
    assert lines["1"].startswith("ok ") and all(lines[str(n)].startswith("BAD") for n in range(2, 6))
    assert "occurs 0 times" in lines["5"]
    assert "2 broken, 1 crashed, 1 killed, 1 passed, 1 survived" in out


def test_all_killed_passes_and_the_files_are_untouched(tmp_path):
    before = (mutants.ROOT / "ftipbook/prob.py").read_bytes()
    md = write_chapter(tmp_path, "assert value == Fraction(7, 4)", [
        mutant('    return checks.instance("law", law, FiniteLaw).expectation(lambda x: -z(x))\n'),
        mutant('    return checks.instance("law", law, FiniteLaw).expectation(lambda x: 2 * z(x))\n'),
    ])
    code, out = run_tool(md)
    assert code == 0, out
    assert "2 killed, 1 passed" in out
    assert (mutants.ROOT / "ftipbook/prob.py").read_bytes() == before


def test_too_few_mutants_and_a_failing_baseline_fail(tmp_path):
    md = write_chapter(tmp_path, "assert value == Fraction(1, 2)", [
        mutant('    return checks.instance("law", law, FiniteLaw).expectation(lambda x: -z(x))\n')])
    code, out = run_tool(md)
    assert code == 1
    assert "1 mutants declared, at least 2 needed" in out
    assert "baseline  killed" in out                   # the unchanged chapter's assert failed


@pytest.mark.parametrize("entry,match", [
    ({"file": "ftipbook/prob.py", "old": "a", "new": "b"}, "exactly file, old, new, why"),
    ({"file": "tools/task.py", "old": "a", "new": "b", "why": "c"}, "under ftipbook/"),
    ({"file": "ftipbook/prob.py", "old": "a", "new": "a", "why": "c"}, "the same text"),
    ({"file": "ftipbook/prob.py", "old": "", "new": "a", "why": "c"}, "non-empty string"),
])
def test_malformed_declarations_are_refused_naming_the_file(tmp_path, entry, match):
    md = write_chapter(tmp_path, "pass", [entry])
    with pytest.raises(ValueError, match=match) as err:
        mutants.declared(md)
    assert "0000-toy.mutants.yml" in str(err.value)


def test_every_chapter_declares_its_mutants():
    for md in mutants.chapters([]):
        assert len(mutants.declared(md)) >= mutants.MIN_MUTANTS, md.name


def test_every_declared_mutant_still_applies_to_the_library():
    """A library edit that moves a mutant's text breaks the mutant; catch it here, in seconds,
    rather than in the mutant pass."""
    stale = []
    for md in mutants.chapters([]):
        for n, m in enumerate(mutants.declared(md), 1):
            try:
                m.mutated_source()
            except ValueError as err:
                stale.append(f"{md.name[:4]} mutant {n}: {err}")
    assert not stale, "\n".join(stale)

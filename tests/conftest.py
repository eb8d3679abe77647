"""Shared test setup: the project tools (tools/) are importable as plain modules.

Under ``FTIPBOOK_TEST_INSTALLED=1`` (the compatibility pass of ``tools/task.py test``) the tests
must exercise the installed package, not the checkout: the repository root moves behind
site-packages on ``sys.path`` before anything imports ``ftipbook``.
"""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

if os.environ.get("FTIPBOOK_TEST_INSTALLED") == "1":
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT] + [str(ROOT)]
    import ftipbook

    if ROOT in Path(ftipbook.__file__).resolve().parents:
        raise RuntimeError(f"FTIPBOOK_TEST_INSTALLED=1 but ftipbook was imported from the checkout: {ftipbook.__file__}")

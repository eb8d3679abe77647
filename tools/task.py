"""One entry point for the two things a newcomer does: build the book, run every test.

    python3 tools/task.py book    # set up .venv from requirements.lock, build the website and its PDF
    python3 tools/task.py test    # set up, then unit tests, nbval (twice: this CPU's kernels and
                                  # others), chapter mutants, clean -W build and PDF, browser check
    python3 tools/task.py serve   # serve _build/html on http://localhost:8000

Only a Python 3.10+ interpreter is needed; everything else is installed into ``.venv``
(and Debian's ``chromium`` through apt-get for the browser check, when it is missing).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
LOCK = ROOT / "requirements.lock"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"


#: Forces PyTorch's vectorized kernels to their scalar baseline and MKL's GEMM onto its
#: compatibility path: other code, other rounding, as on a reader's older or non-Intel CPU.
OTHER_CPU = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"}


def run(*cmd: str | Path, **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=ROOT, check=True, **kw)


def setup() -> None:
    """Create ``.venv`` and install the exact pins plus ``ftipbook`` (skipped when up to date)."""
    stamp = VENV / ".lock-sha256"
    want = hashlib.sha256(LOCK.read_bytes() + (ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == want and PY.exists():
        return
    start = time.perf_counter()
    if not PY.exists():
        run(sys.executable, "-m", "venv", VENV)
    run(PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r", LOCK)
    run(PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--no-build-isolation", "-e", ".")
    run(PY, "-m", "pip", "check")
    stamp.write_text(want)
    print(f"setup took {time.perf_counter() - start:.0f} s", flush=True)


def build_book() -> None:
    """Build the website from clean with warnings as errors (a rebuild can hide warnings)."""
    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    run(BIN / "jupyter-book", "build", ".", "-W", "-n", "--keep-going", "--builder", "html")
    build_pdf()
    print(f"\nThe book is in {ROOT / '_build/html/index.html'}; serve it with: python3 tools/task.py serve")


def build_pdf() -> None:
    """Print the whole book to ``_build/html/ftipbook.pdf`` (``tools/pdf.py``: a single-page build, which
    reuses the website build's parsed pages, printed by headless Chromium); skipped without ``chromium``."""
    if not shutil.which("chromium"):
        print("PDF skipped: Debian's 'chromium' is not on PATH (apt-get install chromium; the test task installs it)")
        return
    run(PY, "tools/pdf.py")


def ensure_chromium() -> None:
    """Install Debian's chromium for the browser check when it is not on PATH."""
    if shutil.which("chromium"):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        sys.exit("the browser check needs Debian's 'chromium' on PATH: install it (apt-get install chromium)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run("apt-get", "update", "-qq", env=env)
    run("apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium", env=env)


def test() -> None:
    """Everything that must pass before a change lands, in the order that fails fastest."""
    ensure_chromium()
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # an agg backend would strip figures from stored outputs
    env["FTIPBOOK_DEVICE"] = "cpu"
    # two pytest workers on two cores: one thread each, or tiny models spend their time contending
    env["OMP_NUM_THREADS"] = "1"
    pytest = [PY, "-m", "pytest", "-p", "no:cacheprovider"]
    run(*pytest, "tests", "-n", "2", "--ignore=tests/browser", env=env)
    nbval = [*pytest, "-p", "tests.nbval_tolerance", "--nbval", "--nbval-current-env",
             "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "-n", "2", "--dist", "loadfile", "chapters"]
    run(*nbval, env=env)
    print(f"second chapter pass on other CPU kernels: {' '.join(f'{k}={v}' for k, v in OTHER_CPU.items())}")
    run(*nbval, env=dict(env, **OTHER_CPU))
    run(PY, "tools/mutants.py", env=env)
    build_book()
    run(*pytest, "tests/browser", env=env)


def serve(port: int) -> None:
    if not (ROOT / "_build/html/index.html").exists():
        build_book()
    print(f"serving on http://localhost:{port}  (Ctrl-C to stop)")
    run(sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", ROOT / "_build/html")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=["setup", "book", "test", "serve"])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    start = time.perf_counter()
    try:
        setup()
        if args.task == "book":
            build_book()
        elif args.task == "test":
            test()
        elif args.task == "serve":
            serve(args.port)
    except subprocess.CalledProcessError as err:
        print(f"\nFAILED: {' '.join(map(str, err.cmd))} (exit {err.returncode})", file=sys.stderr)
        return 1
    print(f"\n{args.task}: done in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

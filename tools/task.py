"""One entry point for the two things a newcomer does: build the book, run every test.

    python3 tools/task.py book    # set up .venv from requirements.lock, build the website and its PDF
    python3 tools/task.py test    # set up, then unit tests, nbval (twice: this CPU's kernels and
                                  # others), chapter mutants, the compatibility pass (oldest and
                                  # newest declared versions), clean -W build and PDF, browser check
    python3 tools/task.py serve   # serve _build/html on http://localhost:8000

Only a Python 3.10+ interpreter is needed; everything else is installed into ``.venv``
(and Debian's ``chromium`` through apt-get for the browser check, when it is missing).
"""
from __future__ import annotations

import argparse
import contextlib
import glob
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
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

#: The compatibility pass: the package installed (not editable) into extra environments, each
#: from its own lock under tools/compat/ (the oldest versions pyproject.toml declares, and the
#: newest available on the day the lock was written, on Colab's Python), then the unit tests and
#: the chapters of COMPAT_CHAPTERS run there. The environments (a few GB each, mostly torch's CUDA
#: libraries) are cached outside the checkout, named by their lock's digest, so a fresh clone on
#: the same machine reuses them.
COMPAT = {"oldest": ("3.10", ROOT / "tools/compat/oldest.txt"),
          "newest": ("3.12", ROOT / "tools/compat/newest.txt")}
COMPAT_VENVS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ftipbook" / "compat"
#: The first and last chapter of every section, plus those that once needed a repository file or a
#: build-only package (00K5, 001T, 001U), a newer torch (00BA, 001O, 006N, 00KP, 00KC) or Python
#: 3.11's float sum (000A).
COMPAT_CHAPTERS = ROOT / "tools/compat/chapters.txt"
#: Where the test command records what verified the chapters; the book build prints it on every page.
VERIFIED = ROOT / ".ftipbook-verified.json"


def run(*cmd: str | Path, **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    kw.setdefault("cwd", ROOT)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


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


def python_for(version: str) -> str | None:
    """An interpreter of ``version`` (``3.12``): on PATH, or one pyenv installed; None if absent."""
    found = shutil.which(f"python{version}")
    pyenv = sorted(glob.glob(str(Path.home() / f".pyenv/versions/{version}.*/bin/python{version}")))
    for candidate in [found, *reversed(pyenv)]:
        if candidate and subprocess.run([candidate, "-c", "import venv"], capture_output=True).returncode == 0:
            return candidate
    return None


def compat_env(name: str) -> Path | None:
    """The cached environment ``<name>-<digest>`` with its lock installed (a new one when the lock
    changes); None when this machine has no interpreter of the lock's Python version."""
    version, lock = COMPAT[name]
    python = python_for(version)
    if python is None:
        print(f"compatibility pass '{name}' skipped: no Python {version} on this machine")
        return None
    want = hashlib.sha256(lock.read_bytes() + python.encode()).hexdigest()
    venv = COMPAT_VENVS / f"{name}-{want[:12]}"
    stamp = venv / ".complete"
    if stamp.exists():
        return venv
    for stale in COMPAT_VENVS.glob(f"{name}-*"):  # one environment per name on disk
        shutil.rmtree(stale, ignore_errors=True)
    start = time.perf_counter()
    run(python, "-m", "venv", venv)
    # the lock pins the newest torch, above the cap a machine's pip configuration may set
    env = dict(os.environ, PIP_CONSTRAINT=os.devnull)
    run(venv / "bin/python", "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile", "-r", lock,
        env=env)
    stamp.write_text(lock.read_text())
    print(f"environment '{name}' took {time.perf_counter() - start:.0f} s", flush=True)
    return venv


def compat_pass(env: dict[str, str]) -> None:
    """Install the package's wheel into each compatibility environment, then run the unit tests
    (against the installed package) and the sample chapters (copied out of the checkout, so they
    see only what ``pip install`` brings; ``--nbval-lax``: their asserts, not their outputs)."""
    wheels = Path(tempfile.mkdtemp(prefix="ftipbook-wheel-"))
    shutil.rmtree(ROOT / "build", ignore_errors=True)  # setuptools would reuse stale files from build/lib
    run(PY, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", wheels, ".")
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    wheel = next(wheels.glob("ftipbook-*.whl"))
    chapters = [ROOT / line for line in COMPAT_CHAPTERS.read_text().split() if line]
    for name in COMPAT:
        venv = compat_env(name)
        if venv is None:
            continue
        py = venv / "bin/python"
        run(py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--force-reinstall", wheel)
        installed = dict(env, FTIPBOOK_TEST_INSTALLED="1")
        run(py, "-m", "pytest", "-p", "no:cacheprovider", "tests", "-n", "2", "--ignore=tests/browser", env=installed)
        outside = Path(tempfile.mkdtemp(prefix=f"ftipbook-{name}-"))
        for chapter in chapters:
            shutil.copy(chapter, outside / chapter.name)
        run(py, "-m", "pytest", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env", "-n", "2",
            "--dist", "loadfile", "--rootdir", outside, *sorted(outside.glob("*.ipynb")),
            cwd=outside, env=installed)
        shutil.rmtree(outside, ignore_errors=True)
    shutil.rmtree(wheels, ignore_errors=True)


def record_verification() -> None:
    """Write what the chapter passes ran with; ``book/_ext/ftipbook_verified.py`` prints it."""
    probe = ("import json, platform, sys, numpy, torch; print(json.dumps({'python': platform.python_version(), "
             "'torch': torch.__version__, 'numpy': numpy.__version__, "
             "'capability': torch.backends.cpu.get_cpu_capability()}))")
    versions = json.loads(subprocess.run([PY, "-c", probe], capture_output=True, text=True, check=True).stdout)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    VERIFIED.write_text(json.dumps({
        **versions, "cpu": cpu_name(), "other_kernels": " ".join(f"{k}={v}" for k, v in OTHER_CPU.items()),
        "date": time.strftime("%Y-%m-%d"), "commit": commit.stdout.strip() or None,
    }, indent=1) + "\n")


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux), else what ``platform`` reports."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


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
    record_verification()
    run(PY, "tools/mutants.py", env=env)
    compat_pass(env)
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

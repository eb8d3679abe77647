"""The README's library example runs as written."""
import re
import subprocess
import sys

import layout


def test_readme_script_runs():
    readme = (layout.ROOT / "README.md").read_text()
    script = re.search(r"\.venv/bin/python - <<'PY'\n(.*?)\nPY\n", readme, re.S)
    assert script, "README lost its library example"
    result = subprocess.run([sys.executable, "-c", script[1]], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "StopReason.MAX_LEN" in result.stdout and "ftipbook 0.1.0" in result.stdout

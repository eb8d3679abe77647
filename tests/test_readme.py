"""The README's library example runs as written."""
import json
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


def test_readme_cli_sample_runs():
    """The README's ``ftipbook sample`` line answers the zoo's arithmetic prompt and stops at EOS."""
    readme = (layout.ROOT / "README.md").read_text()
    line = re.search(r"^\.venv/bin/ftipbook (sample .*?)\s+#", readme, re.M)
    assert line, "README lost its sample command"
    args = re.findall(r'"[^"]*"|\S+', line[1])
    result = subprocess.run([sys.executable, "-m", "ftipbook", *[a.strip('"') for a in args]],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["continuation"] == "46<|eos|>" and out["stop_reason"] == "eos"

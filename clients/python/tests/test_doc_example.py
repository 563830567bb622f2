"""The example of docs/python-client.md, run as it stands against the test server (its address
put in for the documented one): it must finish, and print what it says it prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "python-client.md"


def test_the_documented_example_runs_to_its_end(server_url: str) -> None:
    block = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert block is not None
    code = block.group(1).replace("http://127.0.0.1:8787", server_url)
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert any(line.endswith(" turn.completed") for line in lines), run.stdout
    # The followed feed ended at the session's end.
    assert lines[-1].endswith(" thread.completed"), run.stdout

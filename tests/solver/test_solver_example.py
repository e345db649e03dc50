# SPDX-License-Identifier: GPL-3.0-or-later
"""docs/solver.md's "Calling it" section: its example runs and prints what its comments say."""

import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCUMENT = REPO / "docs" / "solver.md"


def test_example_prints_its_comments():
    match = re.search(r"^## Calling it\n(.*?)(?=^## |\Z)", DOCUMENT.read_text(), re.S | re.M)
    assert match, "docs/solver.md has no '## Calling it' section"
    code = "\n".join(re.findall(r"```python\n(.*?)```", match.group(1), re.S))
    # The expected output: each comment line right after a print(...) line.
    lines = code.splitlines()
    expected = [lines[i + 1][2:] for i, line in enumerate(lines[:-1]) if line.startswith("print(")]
    assert len(expected) >= 3, "the Calling it section's example prints nothing to check"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected

# SPDX-License-Identifier: GPL-3.0-or-later
"""The solver's README example runs and prints what its comments say."""

import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _solver_sections():
    """The '## Solver' section of README.md once pasted, and its source in docs/."""
    sections = []
    for path in (REPO / "README.md", REPO / "docs" / "solver-readme-section.md"):
        if path.exists():
            match = re.search(r"^## Solver\n(.*?)(?=^## |\Z)", path.read_text(), re.S | re.M)
            if match:
                sections.append(pytest.param(match.group(1), id=path.name))
    return sections or [pytest.param(None, id="none", marks=pytest.mark.skip(reason="no Solver section"))]


@pytest.mark.parametrize("section", _solver_sections())
def test_example_prints_its_comments(section):
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, re.S))
    # The expected output: each comment line right after a print(...) line.
    lines = code.splitlines()
    expected = [lines[i + 1][2:] for i, line in enumerate(lines[:-1]) if line.startswith("print(")]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected

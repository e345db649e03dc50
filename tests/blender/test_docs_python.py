# SPDX-License-Identifier: GPL-3.0-or-later
"""The documents' Python examples run as written, in order, on a leg rig (``obj``): docs/operators.md's
"From Python" (Add through a context override, Update Mechanism), then docs/how-it-works.md's
"Chain properties (Python)" (every property read, a setting keyed)."""

from __future__ import annotations

import pathlib
import re

import bpy
from blender_rig import make_leg_with_foot

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
SECTIONS = [(DOCS / "operators.md", "From Python"), (DOCS / "how-it-works.md", "Chain properties (Python)")]


def python_blocks(path: pathlib.Path, heading: str) -> list[str]:
    """The Python blocks of the section under ``## heading``, in order."""
    pattern = rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)"
    section = re.search(pattern, path.read_text(encoding="utf-8"), re.S | re.M)
    assert section, f"{path.name} has no '## {heading}' section"
    return re.findall(r"```python\n(.*?)```", section.group(1), re.S)


def test_the_from_python_examples_run(scene):
    blocks = [(path, block) for path, heading in SECTIONS for block in python_blocks(path, heading)]
    assert len(blocks) >= 3
    obj = make_leg_with_foot()
    namespace = {"bpy": bpy, "obj": obj}
    for path, block in blocks:
        exec(compile(block, str(path), "exec"), namespace)
    chain = obj.two_bone_ik.chains["shin"]
    assert chain.state == "OK", chain.status

# SPDX-License-Identifier: GPL-3.0-or-later
"""The README's "From Python" examples run as written, in order, on a leg rig (``obj``)."""

from __future__ import annotations

import pathlib
import re

import bpy
from blender_rig import make_leg_with_foot

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_the_from_python_examples_run(scene):
    section = re.search(r"^### From Python\n(.*?)(?=^#{2,3} |\Z)", README.read_text(), re.S | re.M)
    assert section, "README.md has no '### From Python' section"
    blocks = re.findall(r"```python\n(.*?)```", section.group(1), re.S)
    assert len(blocks) >= 3
    obj = make_leg_with_foot()
    namespace = {"bpy": bpy, "obj": obj}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    chain = obj.two_bone_ik.chains["shin"]
    assert chain.state == "OK", chain.status

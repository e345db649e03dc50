# SPDX-License-Identifier: GPL-3.0-or-later
"""Bulk benchmark: Update Mechanism and Remove on N chains in one armature, in real Blender (the bpy
module), to show how the operators scale with the number of chains.

For each N a fresh armature gets N legs (thigh and shin), N chains added through
``obj.two_bone_ik.chains`` (as a script does), then one Update Mechanism (one Edit Mode session
for all of them), then Remove with All Chains (``pose.two_bone_ik_remove(all_chains=True)``, one
pass and one Edit Mode session). Printed:
seconds in all and milliseconds per chain. The goal the project reports against: 10,000 chains
within 10 s each for Update Mechanism and Remove.

Writes bench/results/bulk.json. Run: ``.venv/bin/python bench/bulk.py [--sizes 100 300 1000]``
(after ``bash tools/test.sh`` made the venv).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="two_bone_ik_bench_"))
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(os.environ["BLENDER_USER_RESOURCES"], "cache"))

import bpy  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "blender"))
from blender_rig import enable_extension, make_armature, make_empty  # noqa: E402

SIZES = (100, 300, 1000)
GOAL_CHAINS, GOAL_SECONDS = 10_000, 10.0


def rig(count: int):
    """Armature "Rig" with ``count`` legs and a chain on each (not built yet)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bones = []
    for index in range(count):
        x, y = (index % 100) * 0.5, (index // 100) * 0.5
        bones += [
            (f"thigh{index}", (x, y, 1.0), (x, y + 0.05, 0.5), None, False),
            (f"shin{index}", (x, y + 0.05, 0.5), (x, y, 0.0), f"thigh{index}", True),
        ]
    obj = make_armature("Rig", bones)
    target, pole = make_empty("Target", (0.0, 0.0, 0.2)), make_empty("Pole", (0.0, -1.0, 0.5))
    for index in range(count):
        chain = obj.two_bone_ik.chains.add()
        chain.name = f"shin{index}"
        chain.upper_bone, chain.lower_bone = f"thigh{index}", f"shin{index}"
        chain.target, chain.pole = target, pole
    bpy.context.view_layer.objects.active = obj
    return obj


def timed(operator, obj, **options) -> float:
    start = time.perf_counter()
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert operator(**options) == {"FINISHED"}
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--output", type=pathlib.Path, default=REPO / "bench" / "results" / "bulk.json")
    arguments = parser.parse_args()
    enable_extension(REPO)
    rows = []
    print(f"{'chains':>8} {'update s':>10} {'ms/chain':>9} {'remove s':>10} {'ms/chain':>9}")
    for count in arguments.sizes:
        obj = rig(count)
        update = timed(bpy.ops.pose.two_bone_ik_update_mechanism, obj)
        remove = timed(bpy.ops.pose.two_bone_ik_remove, obj, all_chains=True)
        assert not len(obj.two_bone_ik.chains)
        rows.append({"chains": count, "update_mechanism_s": update, "remove_all_s": remove})
        per_update, per_remove = 1e3 * update / count, 1e3 * remove / count
        print(f"{count:>8} {update:>10.2f} {per_update:>9.2f} {remove:>10.2f} {per_remove:>9.2f}")
    result = {
        "what": "seconds for one Update Mechanism of N chains in one armature, and for removing them all",
        "blender": bpy.app.version_string,
        "python": platform.python_version(),
        "goal": {"chains": GOAL_CHAINS, "seconds": GOAL_SECONDS},
        "rows": rows,
    }
    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    arguments.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"goal: {GOAL_CHAINS} chains within {GOAL_SECONDS:g} s each; wrote {arguments.output}")


if __name__ == "__main__":
    main()

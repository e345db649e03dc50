# SPDX-License-Identifier: GPL-3.0-or-later
"""Bulk benchmark: Update Mechanism, Add and Remove on an armature with N chains, in real Blender
(the bpy module), to show how the operators scale with the number of chains.

For each N a fresh armature in Pose Mode (where the panel's operators run) gets N + 1 legs (thigh
and shin) and N chains added through ``obj.two_bone_ik.chains`` (as a script does); then one
Update Mechanism builds them all (one Edit Mode session), one Add puts a chain on the last leg
(what the rigger's Add does, with the armature holding N chains), and Remove with All Chains
(``pose.two_bone_ik_remove(all_chains=True)``, one pass and one Edit Mode session) takes them all
away. Printed: seconds, and milliseconds per chain for Update Mechanism and Remove. Also printed:
Blender's own floor, the time to add and to delete that many bones (ten a chain) in Edit Mode with
nothing else. The goal the project reports against: 10,000 chains within 10 s each for Update
Mechanism and Remove.

Writes bench/results/bulk.json. Run: ``.venv/bin/python bench/bulk.py [--sizes 100 1000 3000]``
(after ``bash tools/test.sh`` made the venv; 10000 takes minutes).
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

sys.path.insert(0, str(REPO / "tests" / "support"))
from blender_rig import enable_extension, make_armature, make_empty, package, set_mode  # noqa: E402

SIZES = (100, 300, 1000, 3000)
BONES_PER_CHAIN = 10
GOAL_CHAINS, GOAL_SECONDS = 10_000, 10.0


def rig(count: int):
    """Armature "Rig" with ``count`` legs and a chain on each (not built yet)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    bones = []
    for index in range(count + 1):
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
    set_mode(obj, "POSE")
    return obj


def timed_add(obj, count: int) -> float:
    """Seconds for Add's work on the leg after the ``count`` chained ones."""
    start = time.perf_counter()
    package().chain.chains.add_chain(bpy.context, obj, f"shin{count}")
    return time.perf_counter() - start


def blender_floor(count: int) -> tuple[float, float]:
    """Seconds Blender takes to add, then to delete, ``BONES_PER_CHAIN x count`` bones in an
    armature of ``2 x count`` bones, one Edit Mode session each and nothing else."""
    bpy.ops.wm.read_homefile(use_empty=True)
    obj = make_armature(
        "Floor", [(f"b{index}", (0, 0, 0), (0, 1, 0), None, False) for index in range(2 * count)]
    )
    bpy.context.view_layer.objects.active = obj
    names = [f"MCH-{index}" for index in range(BONES_PER_CHAIN * count)]
    start = time.perf_counter()
    set_mode(obj, "EDIT")
    for name in names:
        obj.data.edit_bones.new(name).tail = (0.0, 1.0, 0.0)
    set_mode(obj, "OBJECT")
    added = time.perf_counter() - start
    start = time.perf_counter()
    set_mode(obj, "EDIT")
    bones = obj.data.edit_bones
    by_name = {bone.name: bone for bone in bones}
    for name in names:
        bones.remove(by_name[name])
    set_mode(obj, "OBJECT")
    return added, time.perf_counter() - start


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
    header = ("chains", "update s", "ms/chain", "add s", "remove s", "ms/chain", "floor add s", "floor del s")
    print(" ".join(f"{name:>11}" for name in header))
    for count in arguments.sizes:
        obj = rig(count)
        update = timed(bpy.ops.pose.two_bone_ik_update_mechanism, obj)
        add = timed_add(obj, count)
        remove = timed(bpy.ops.pose.two_bone_ik_remove, obj, all_chains=True)
        assert not len(obj.two_bone_ik.chains)
        floor_add, floor_remove = blender_floor(count)
        rows.append(
            {
                "chains": count,
                "update_mechanism_s": update,
                "add_one_s": add,
                "remove_all_s": remove,
                "blender_add_bones_s": floor_add,
                "blender_delete_bones_s": floor_remove,
            }
        )
        numbers = (update, 1e3 * update / count, add, remove, 1e3 * remove / count, floor_add, floor_remove)
        print(f"{count:>11}", " ".join(f"{number:>11.2f}" for number in numbers), flush=True)
    result = {
        "what": "seconds for one Update Mechanism of N chains in one armature, one Add with N chains "
        "there, removing them all (N + 1), and Blender's own Edit Mode time to add and delete ten "
        "bones a chain",
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

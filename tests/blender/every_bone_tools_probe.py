# SPDX-License-Identifier: GPL-3.0-or-later
"""Run inside a fresh Blender (tests/blender/test_every_bone_tools.py, ``run_probe``): Rigify's
Convert Rotation Modes (all bones, every action, to Quaternion) on a small leg with a chain and on
a Rigify human whose limbs are on chains (Rigify Limbs on Two-Bone IK); then the controls move.
Measures the evaluated world positions against the same moves without the tool. Prints one line
``RESULT <json>``."""

import json
import sys

import addon_utils
import bpy
from blender_rig import add_chain_at, generate_rigify_human, make_leg_with_foot, release_rigify, set_mode
from mathutils import Vector

RESULT: dict = {}


def tails(obj, names) -> list[Vector]:
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return [evaluated.matrix_world @ evaluated.pose.bones[name].tail for name in names]


def convert_every_bone(obj) -> None:
    """Pose > Convert Rotation Modes (Rigify's), all bones, every action, to Quaternion."""
    set_mode(obj, "POSE")
    with bpy.context.temp_override(active_object=obj, object=obj):
        done = bpy.ops.pose.convert_rotation(
            target_rotation_mode="QUATERNION", affected_bones="ALL", affected_actions="ALL"
        )
    assert done == {"FINISHED"}, done
    # (The chains' network bones may have had their own modes put back already.)
    modes = {bone.rotation_mode for bone in obj.pose.bones if not bone.name.startswith("MCH-IK-")}
    assert modes == {"QUATERNION"}, modes
    bpy.context.view_layer.update()


def move(obj, offsets) -> None:
    for name, offset in offsets.items():
        obj.pose.bones[name].location = offset
    bpy.context.view_layer.update()


def measure(obj, offsets, bones) -> dict:
    """The tails of ``bones`` with the controls at ``offsets``, before and after the tool (the
    controls at rest in between), the chains' states after it."""
    rest = {name: tuple(obj.pose.bones[name].location) for name in offsets}
    move(obj, offsets)
    before = tails(obj, bones)
    move(obj, rest)
    convert_every_bone(obj)
    move(obj, offsets)
    after = tails(obj, bones)
    return {
        "off": max((a - b).length for a, b in zip(after, before, strict=True)),
        "states": {chain.name: [chain.state, chain.status] for chain in obj.two_bone_ik.chains},
    }


addon_utils.enable("rigify", default_set=True, handle_error=None)  # the converter is Rigify's

# A small leg: its chain with Twist and both rolls set; the target keyed (the converter works on
# an action's curves).
bpy.ops.wm.read_homefile(use_empty=True)
leg = make_leg_with_foot()
chain = add_chain_at(leg, controls="BONES")
shin = leg.pose.bones["shin"]
shin["IK Twist"], shin["IK Upper Roll"], shin["IK Lower Roll"] = 0.3, 0.4, -0.3
# (Grouped by bone, as the interface keys: Rigify 4.2's converter fails on an ungrouped F-curve.)
leg.pose.bones[chain.target_bone].keyframe_insert("location", frame=1, group=chain.target_bone)
RESULT["leg"] = measure(leg, {chain.target_bone: (-0.1, -0.2, -0.2)}, ["thigh", "shin", "foot"])

# A Rigify human, its four limbs on chains; the left foot and hand IK controls keyed and moved.
rig = generate_rigify_human()
set_mode(rig, "POSE")
with bpy.context.temp_override(active_object=rig, object=rig):
    assert bpy.ops.pose.two_bone_ik_rigify_limbs() == {"FINISHED"}
for control in ("foot_ik.L", "hand_ik.L"):
    rig.pose.bones[control].keyframe_insert("location", frame=1, group=control)
DEFORM = [
    *("DEF-thigh.L.001", "DEF-shin.L.001", "DEF-foot.L"),
    *("DEF-upper_arm.L.001", "DEF-forearm.L.001", "DEF-hand.L"),
]
RESULT["human"] = measure(rig, {"foot_ik.L": (0.05, -0.25, 0.3), "hand_ik.L": (-0.1, -0.2, 0.1)}, DEFORM)
print("RESULT " + json.dumps(RESULT))
sys.stdout.flush()
release_rigify()

# SPDX-License-Identifier: GPL-3.0-or-later
"""Run inside a fresh Blender (tests/blender/test_rigify_snap_twist.py, ``run_blender``): generate a
Rigify human, pose its left arm and leg in FK with the forearm and shin turned about their own
axes, and run the generated rig's own snap operators as its panel calls them (IK->FK for the arm,
IK->FK With Roll for the leg), then FK->IK back; first with Rigify's own IK, then on Two-Bone IK
chains (Rigify Limbs on Two-Bone IK). Prints one line ``RESULT <json>``: per rig and limb, how far
the DEF bones (heads and tails) in IK are from the FK pose after IK->FK, and in FK from the IK
pose after FK->IK."""

import json
import sys

import bpy
from blender_rig import RIGIFY_LEFT_DEFORM as DEFORM
from blender_rig import generate_rigify_human, release_rigify, set_mode
from mathutils import Euler, Matrix

rig = generate_rigify_human()
set_mode(rig, "POSE")
RIG_ID = rig.data["rig_id"]
SETTINGS = {"leg": "thigh_parent.L", "arm": "upper_arm_parent.L"}
# The snap operators' arguments, as the generated rig's panel passes them.
SNAP = {
    "leg": {
        "fk_bones": ["thigh_fk.L", "shin_fk.L", "foot_fk.L", "toe_fk.L"],
        "ik_bones": ["thigh_ik.L", "MCH-shin_ik.L", "MCH-thigh_ik_target.L"],
        "ctrl_bones": ["thigh_ik.L", "thigh_ik_target.L", "foot_ik.L"],
        "tail_bones": ["toe_ik.L"],
        "extra_ctrls": ["foot_heel_ik.L", "foot_spin_ik.L"],
    },
    "arm": {
        "fk_bones": ["upper_arm_fk.L", "forearm_fk.L", "hand_fk.L"],
        "ik_bones": ["upper_arm_ik.L", "MCH-forearm_ik.L", "MCH-upper_arm_ik_target.L"],
        "ctrl_bones": ["upper_arm_ik.L", "upper_arm_ik_target.L", "hand_ik.L"],
        "tail_bones": [],
        "extra_ctrls": [],
    },
}
# The FK pose (YXZ Eulers, radians: the turn about the bone's own Y axis first, then the bend):
# the upper arm raised and turned about its axis, the forearm bent and turned 0.4 rad about its own
# axis, the hand turned; the thigh forward, the shin bent and turned 0.25 rad about its own axis.
FK_POSE = {
    "upper_arm_fk.L": (0.3, 0.5, -0.4),
    "forearm_fk.L": (0.9, 0.4, 0.0),
    "hand_fk.L": (0.2, 0.3, 0.1),
    "thigh_fk.L": (-0.8, 0.1, 0.1),
    "shin_fk.L": (0.9, 0.25, 0.0),
}


def points(limb: str) -> list:
    obj = rig.evaluated_get(bpy.context.evaluated_depsgraph_get())
    bones = obj.pose.bones
    return [obj.matrix_world @ getattr(bones[name], end) for name in DEFORM[limb] for end in ("head", "tail")]


def set_ik_fk(value: float) -> None:
    for settings in SETTINGS.values():
        rig.pose.bones[settings]["IK_FK"] = value
        rig.pose.bones[settings]["IK_Stretch"] = 0.0
        rig.pose.bones[settings]["pole_vector"] = True
    rig.update_tag()
    bpy.context.view_layer.update()


def reset() -> None:
    for snap in SNAP.values():
        for name in snap["fk_bones"] + snap["ctrl_bones"] + snap["tail_bones"] + snap["extra_ctrls"]:
            rig.pose.bones[name].matrix_basis = Matrix.Identity(4)
    bpy.context.view_layer.update()


def snaps() -> dict:
    """IK->FK from the twisted FK pose, then FK->IK from the IK pose it gave: worst distances (m)."""
    reset()
    for name, turn in FK_POSE.items():
        rig.pose.bones[name].rotation_mode = "YXZ"
        rig.pose.bones[name].rotation_euler = Euler(turn, "YXZ")
    set_ik_fk(1.0)
    found = {}
    for limb, snap in SNAP.items():
        fk = points(limb)
        operator = "rigify_leg_roll_ik2fk" if limb == "leg" else "rigify_limb_ik2fk"
        extra = {"heel_control": "foot_heel_ik.L"} if limb == "leg" else {}
        with bpy.context.temp_override(active_object=rig, object=rig):
            result = getattr(bpy.ops.pose, f"{operator}_{RIG_ID}")(
                prop_bone=SETTINGS[limb], **{key: json.dumps(value) for key, value in snap.items()}, **extra
            )
        assert result == {"FINISHED"}, result
        set_ik_fk(0.0)
        ik = points(limb)
        found[f"{limb} ik2fk"] = max((a - b).length for a, b in zip(fk, ik, strict=True))
        with bpy.context.temp_override(active_object=rig, object=rig):
            result = getattr(bpy.ops.pose, f"rigify_generic_snap_{RIG_ID}")(
                output_bones=json.dumps(snap["fk_bones"][:3]),
                input_bones=json.dumps(snap["ik_bones"]),
                ctrl_bones=json.dumps(snap["ctrl_bones"]),
            )
        assert result == {"FINISHED"}, result
        set_ik_fk(1.0)
        found[f"{limb} fk2ik"] = max((a - b).length for a, b in zip(ik, points(limb), strict=True))
    return found


result: dict = {"rigify": snaps()}
with bpy.context.temp_override(active_object=rig, object=rig):
    result["operator"] = list(bpy.ops.pose.two_bone_ik_rigify_limbs())
result["chains"] = snaps()
result["status"] = {chain.name: chain.status for chain in rig.two_bone_ik.chains}
print("RESULT " + json.dumps(result))
sys.stdout.flush()
release_rigify()

# SPDX-License-Identifier: GPL-3.0-or-later
"""Run inside a fresh Blender (tests/blender/test_rigify_limbs.py, ``run_blender``): generate a Rigify
human, measure its left leg and arm with Rigify's own IK, put them on chains through the documented
step (Pose > Two-Bone IK > Rigify Limbs on Two-Bone IK), measure again, then Remove and measure once
more. Prints one line ``RESULT <json>``."""

import json
import sys

import bpy
from blender_rig import generate_rigify_human, unload_rigify
from mathutils import Euler, Matrix, Vector

rig = generate_rigify_human()
with bpy.context.temp_override(active_object=rig, object=rig):
    bpy.ops.object.mode_set(mode="POSE")
bpy.context.view_layer.update()
RIG_ID = rig.data["rig_id"]
DEFORM = {
    "leg": ["DEF-thigh.L", "DEF-thigh.L.001", "DEF-shin.L", "DEF-shin.L.001", "DEF-foot.L", "DEF-toe.L"],
    "arm": ["DEF-upper_arm.L", "DEF-upper_arm.L.001", "DEF-forearm.L", "DEF-forearm.L.001", "DEF-hand.L"],
}
LIMB = {  # control, IK chain lower bone, the bone Rigify's IK aims at, end deform bone, settings
    "leg": ("foot_ik.L", "MCH-shin_ik.L", "MCH-thigh_ik_target.L", "DEF-foot.L", "thigh_parent.L"),
    "arm": ("hand_ik.L", "MCH-forearm_ik.L", "MCH-upper_arm_ik_target.L", "DEF-hand.L", "upper_arm_parent.L"),
}
# (FK bones, IK bones, IK controls, tail controls, extra controls, ORG bones) of each limb, as the
# rig's UI script passes them to its snap operators.
FK = {
    "leg": (
        ["thigh_fk.L", "shin_fk.L", "foot_fk.L", "toe_fk.L"],
        ["thigh_ik.L", "MCH-shin_ik.L", "MCH-thigh_ik_target.L", "toe_ik.L"],
        ["thigh_ik.L", "thigh_ik_target.L", "foot_ik.L"],
        ["toe_ik.L"],
        ["foot_heel_ik.L", "foot_spin_ik.L"],
        ["ORG-thigh.L", "ORG-shin.L", "ORG-foot.L"],
    ),
    "arm": (
        ["upper_arm_fk.L", "forearm_fk.L", "hand_fk.L"],
        ["upper_arm_ik.L", "MCH-forearm_ik.L", "MCH-upper_arm_ik_target.L"],
        ["upper_arm_ik.L", "upper_arm_ik_target.L", "hand_ik.L"],
        [],
        [],
        ["ORG-upper_arm.L", "ORG-forearm.L", "ORG-hand.L"],
    ),
}
# Where the foot and hand controls go (armature-space offsets from rest, and a turn): reachable
# ones, and ones past the limb's reach.
POSES = {
    "reachable": {
        "leg": ((0.05, -0.25, 0.3), (0.4, 0.1, -0.3)),
        "arm": ((-0.1, -0.2, 0.1), (0.3, -0.5, 0.2)),
    },
    "unreachable": {
        "leg": ((0.1, -0.4, -0.6), (-0.2, 0.0, 0.4)),
        "arm": ((0.6, -0.3, -0.2), (0.0, 0.6, 0.0)),
    },
}
REST = {name: rig.data.bones[name].length for names in DEFORM.values() for name in names}


def evaluated():
    return rig.evaluated_get(bpy.context.evaluated_depsgraph_get())


def world(name: str, end: str = "head") -> Vector:
    obj = evaluated()
    return obj.matrix_world @ getattr(obj.pose.bones[name], end)


def world_matrix(name: str) -> Matrix:
    obj = evaluated()
    return obj.matrix_world @ obj.pose.bones[name].matrix


def set_settings() -> None:
    """IK Stretch 0 and Pole Vector on, as Rigify Limbs sets them, so both rigs solve alike."""
    for *_, settings in LIMB.values():
        rig.pose.bones[settings]["IK_Stretch"] = 0.0
        rig.pose.bones[settings]["pole_vector"] = True
    rig.update_tag()  # a custom property written from Python tags nothing


def place(pose: str) -> None:
    """Put each control at its rest place plus the pose's offset, turned by the pose's Euler."""
    for limb, (offset, turn) in POSES[pose].items():
        control = rig.pose.bones[LIMB[limb][0]]
        control.matrix_basis = Matrix.Identity(4)
        rest = rig.data.bones[control.name].matrix_local
        control.matrix = (
            Matrix.Translation(rest.translation + Vector(offset))
            @ Euler(turn).to_matrix().to_4x4()
            @ rest.to_3x3().to_4x4()
        )
    bpy.context.view_layer.update()


def measure(pose: str) -> dict:
    """Per limb with the controls at ``pose``: each deform bone's relative length error, how far
    the IK chain's tail is from the bone Rigify's IK aims at, the end deform bone's world matrix and
    the deform bones' heads and tails."""
    place(pose)
    found = {}
    for limb, (_control, lower, target, end, _settings) in LIMB.items():
        found[limb] = {
            "length_error": {
                name: (world(name, "tail") - world(name)).length / REST[name] - 1.0 for name in DEFORM[limb]
            },
            "end_miss": (world(lower, "tail") - world(target)).length,
            "end_matrix": [list(row) for row in world_matrix(end)],
            "limb": [world(name, part)[:] for name in DEFORM[limb] for part in ("head", "tail")],
        }
    return found


def org_points() -> dict[str, Vector]:
    """World heads and tails of both limbs' ORG bones, by "<bone> <head|tail>"."""
    return {
        f"{name} {part}": world(name, part)
        for *_, org in FK.values()
        for name in org
        for part in ("head", "tail")
    }


def set_ik_fk(value: float) -> None:
    for *_, settings in LIMB.values():
        rig.pose.bones[settings]["IK_FK"] = value
    rig.update_tag()
    bpy.context.view_layer.update()


def fk_pose() -> None:
    """A bent FK pose on both limbs."""
    turns = {
        "thigh_fk.L": (-0.8, 0.1, 0.2),
        "shin_fk.L": (0.9, 0, 0),
        "foot_fk.L": (0.3, 0, 0.1),
        "upper_arm_fk.L": (0.3, 0.4, -0.2),
        "forearm_fk.L": (0.8, 0, 0),
        "hand_fk.L": (0.2, 0.1, 0),
    }
    for name, turn in turns.items():
        bone = rig.pose.bones[name]
        bone.rotation_mode = "XYZ"
        bone.rotation_euler = turn
    bpy.context.view_layer.update()


def blend(value: float) -> dict:
    """Rigify's blend: each ORG bone copies its FK bone, then its IK bone with influence 1 - IK_FK
    (world matrices interpolated as Blender's Copy Transforms does). Worst head/tail distance."""
    set_ik_fk(value)
    worst, lengths, axes = 0.0, 0.0, 0.0
    for limb, (fk, ik, *_rest, org) in FK.items():
        for org_name, fk_name, ik_name in zip(org[:2], fk[:2], ik[:2], strict=True):
            expected = world_matrix(fk_name).lerp(world_matrix(ik_name), 1.0 - value)
            got = world_matrix(org_name)
            worst = max(worst, (expected.translation - got.translation).length)
            axes = max(axes, (expected.to_quaternion().rotation_difference(got.to_quaternion())).angle)
        lengths = max(
            lengths, *(abs((world(n, "tail") - world(n)).length / REST[n] - 1.0) for n in DEFORM[limb])
        )
    return {"blend_miss": worst, "blend_angle": axes, "length_error": lengths}


def snap_ik_to_fk() -> dict[str, float]:
    """Rigify's IK->FK snap on both limbs from the FK pose (IK_FK 1); then IK_FK 0: distance of
    each ORG head and tail from the FK pose's."""
    fk_pose()
    set_ik_fk(1.0)
    before = org_points()
    for limb, (fk, ik, ctrl, tail, extra, _org) in FK.items():
        operator = getattr(bpy.ops.pose, f"rigify_limb_ik2fk_{RIG_ID}")
        with bpy.context.temp_override(active_object=rig, object=rig):
            result = operator(
                prop_bone=LIMB[limb][4],
                fk_bones=json.dumps(fk),
                ik_bones=json.dumps(ik[:3]),
                ctrl_bones=json.dumps(ctrl),
                tail_bones=json.dumps(tail),
                extra_ctrls=json.dumps(extra),
            )
        assert result == {"FINISHED"}, result
    set_ik_fk(0.0)
    return {name: (point - org_points()[name]).length for name, point in before.items()}


def snap_fk_to_ik() -> float:
    """Rigify's FK->IK snap (its generic snap) with the IK pose shown; then IK_FK 1: worst distance."""
    place("reachable")
    set_ik_fk(0.0)
    before = org_points()
    for fk, ik, ctrl, *_rest in FK.values():
        operator = getattr(bpy.ops.pose, f"rigify_generic_snap_{RIG_ID}")
        with bpy.context.temp_override(active_object=rig, object=rig):
            result = operator(
                output_bones=json.dumps(fk), input_bones=json.dumps(ik), ctrl_bones=json.dumps(ctrl)
            )
        assert result == {"FINISHED"}, result
    set_ik_fk(1.0)
    after = org_points()
    worst = max((point - after[name]).length for name, point in before.items())
    set_ik_fk(0.0)
    return worst


def reset() -> None:
    """Every FK bone and IK control of both limbs back to its rest channels (snaps move them)."""
    for fk, _ik, ctrl, tail, extra, _org in FK.values():
        for name in fk + ctrl + tail + extra:
            rig.pose.bones[name].matrix_basis = Matrix.Identity(4)
    set_ik_fk(0.0)


def switching() -> dict:
    """IK/FK blend and both snaps, from a bent FK pose with the controls placed; reset after."""
    fk_pose()
    place("reachable")
    found: dict = {"blend": {str(value): blend(value) for value in (0.0, 0.5, 1.0)}}
    set_ik_fk(0.0)
    found["snap_ik_to_fk"] = snap_ik_to_fk()
    found["snap_fk_to_ik"] = snap_fk_to_ik()
    reset()
    return found


def add_chains() -> list:
    """The documented step: Pose > Two-Bone IK > Rigify Limbs on Two-Bone IK, the rig active."""
    with bpy.context.temp_override(active_object=rig, object=rig):
        return list(bpy.ops.pose.two_bone_ik_rigify_limbs())


def statuses() -> dict:
    return {c.name: (c.state, c.reachable, c.status) for c in rig.two_bone_ik.chains}


set_settings()
result: dict = {"rig": rig.name, "native": {pose: measure(pose) for pose in POSES}}
result["native"].update(switching())
place("reachable")
result["operator"] = add_chains()
result["chains"] = {
    c.name: {
        "upper": c.upper_bone,
        "target": c.target_bone,
        "pole": c.pole_bone,
        "muted": [(i.bone, i.name) for i in c.muted_ik],
    }
    for c in rig.two_bone_ik.chains
}
result["ours"] = {pose: measure(pose) for pose in POSES}
result["status"] = statuses()
for *_, settings in LIMB.values():  # IK Stretch on (Rigify's default): the chains still never stretch
    rig.pose.bones[settings]["IK_Stretch"] = 1.0
rig.update_tag()
result["ours"]["unreachable, IK Stretch 1"] = measure("unreachable")
result["status_unreachable"] = statuses()
set_settings()
with bpy.context.temp_override(active_object=rig, object=rig):
    result["remove"] = list(bpy.ops.pose.two_bone_ik_remove(all_chains=True))
result["ik_enabled"] = {
    name: [(c.name, c.enabled) for c in rig.pose.bones[name].constraints if c.type == "IK"]
    for name in ("MCH-shin_ik.L", "MCH-forearm_ik.L")
}
result["reach_left"] = [c.name for c in rig.pose.bones["MCH-thigh_ik_target.L"].constraints]
result["removed"] = {pose: measure(pose) for pose in POSES}
# Undo takes the whole step back: no chain, Rigify's IK and its drivers as they were.
bpy.ops.ed.undo_push(message="before Rigify Limbs")
bpy.ops.ed.undo_push(message="before Rigify Limbs")
result["operator_undone"] = add_chains()
bpy.ops.ed.undo()
rig = bpy.data.objects[result["rig"]]
result["undone"] = {
    "chains": len(rig.two_bone_ik.chains),
    "ik_enabled": [c.enabled for c in rig.pose.bones["MCH-shin_ik.L"].constraints if c.type == "IK"],
    "drivers_muted": [
        f.mute for f in rig.animation_data.drivers if '"MCH-shin_ik.L"].constraints' in f.data_path
    ],
    "constraints": [c.name for c in rig.pose.bones["MCH-thigh_ik_target.L"].constraints],
}
bpy.context.view_layer.objects.active = rig
result["operator_again"] = add_chains()
result["ours"].update(switching())
with bpy.context.temp_override(active_object=rig, object=rig):
    result["update_mechanism"] = list(bpy.ops.pose.two_bone_ik_update_mechanism())
place("reachable")
result["status_rebuilt"] = statuses()
result["rebuilt"] = measure("reachable")
try:  # every limb has its chain: nothing left to do, an error and nothing changed
    with bpy.context.temp_override(active_object=rig, object=rig):
        bpy.ops.pose.two_bone_ik_rigify_limbs()
    result["operator_third"] = "FINISHED"
except RuntimeError as error:
    result["operator_third"] = str(error)
result["chains_after_third"] = len(rig.two_bone_ik.chains)
print("RESULT " + json.dumps(result))
sys.stdout.flush()
unload_rigify()  # its callbacks would keep bpy alive past Python's shutdown

# SPDX-License-Identifier: GPL-3.0-or-later
"""Every operator on every state a chain can report, in real Blender: no traceback leaves an
operator. Each call returns FINISHED or CANCELLED (or fails its poll with a message), says what
it did or why not in a report, and a CANCELLED call leaves the file exactly as it was.

Each state is a small function that breaks a freshly built leg rig (one chain, made with the real
Add operator) the way the chain's status can report; the rig is built once per state and saved,
then re-opened for every operator, so each call starts from the same file.
"""

from __future__ import annotations

import math
import pathlib
import re
from collections.abc import Callable

import bpy
import pytest
from blender_rig import (
    add_chain_with_operator,
    chain_snapshot,
    delete_constraint,
    keyframe_snapshot,
    leg_bones,
    make_armature,
    set_mode,
    set_pose,
)

TARGET, POLE = "IK Target shin", "IK Pole shin"  # Add's control bones for the lower bone "shin"


# --- The rig --------------------------------------------------------------------------------------


def leg_rig(controls: str = "BONES"):
    """Armature "Rig": root, hips, and a leg (thigh, shin, foot) bent at the knee, hips keyed on
    frames 1 and 5 (scene range 1-5); one chain on shin made by Add with ``controls``; Pose Mode
    with shin active and selected."""
    obj = make_armature("Rig", leg_bones(foot_tail=(0, -0.15, 0), x=0.1, hips="hips", root="root"))
    obj.data.bones["root"].use_deform = False
    set_pose(obj, {"thigh": (0.3, 0.1, 0.0), "shin": (-0.6, 0.0, 0.1)})
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 5
    hips = obj.pose.bones["hips"]
    for frame, height in ((1, 0.0), (5, -0.1)):
        hips.location = (0.0, height, 0.0)
        hips.keyframe_insert("location", frame=frame)
    scene.frame_set(1)
    add_chain_with_operator(obj, "shin", controls=controls)
    bpy.context.view_layer.update()
    return obj


def chain_of(obj):
    return obj.two_bone_ik.chains[0]


def edit_bones(obj, change: Callable) -> None:
    """Run ``change(edit_bones)`` in Edit Mode, then go back to Pose Mode."""
    set_mode(obj, "EDIT")
    change(obj.data.edit_bones)
    set_mode(obj, "POSE")


# --- The states -----------------------------------------------------------------------------------
# Each takes the rig (Pose Mode) and breaks it. The table below gives the controls Add makes for it
# ("EMPTIES" when the state needs target and pole objects) and the state the first chain reports.


def healthy(obj) -> None:
    """Solved, status OK."""


def target_deleted(obj) -> None:
    """The target empty deleted: ERROR 'Set a target object'."""
    bpy.data.objects.remove(bpy.data.objects[TARGET])


def pole_deleted(obj) -> None:
    """The pole empty deleted: NOTE, the joint bends as in the rest pose."""
    bpy.data.objects.remove(bpy.data.objects[POLE])


def target_bone_misspelt(obj) -> None:
    """End Rotation Target with a target bone that does not exist: ERROR."""
    chain = chain_of(obj)
    chain.end_rotation = "TARGET"
    chain.target_bone = "IK Target shni"


def target_bone_deleted(obj) -> None:
    """End Rotation Target, its control bone deleted in Edit Mode: ERROR."""
    chain_of(obj).end_rotation = "TARGET"
    edit_bones(obj, lambda bones: bones.remove(bones[TARGET]))


def lower_bone_deleted(obj) -> None:
    """The chain's lower bone deleted in Edit Mode: ERROR 'Bone 'shin' not found'."""
    edit_bones(obj, lambda bones: bones.remove(bones["shin"]))


def upper_bone_deleted(obj) -> None:
    """The chain's upper bone deleted in Edit Mode: ERROR 'Bone 'thigh' not found'."""
    edit_bones(obj, lambda bones: bones.remove(bones["thigh"]))


def lower_bone_renamed(obj) -> None:
    """The lower bone renamed: ERROR 'Bone 'shin' was renamed 'calf''."""
    obj.data.bones["shin"].name = "calf"


def network_bone_renamed(obj) -> None:
    """A network bone renamed by hand: ERROR naming it."""
    obj.data.bones["MCH-IK-shin-aim"].name = "aim"


def network_bone_deleted(obj) -> None:
    """A network bone deleted in Edit Mode: ERROR 'lacks bone'."""
    edit_bones(obj, lambda bones: bones.remove(bones["MCH-IK-shin-hint"]))


def pole_parented_to_thigh(obj) -> None:
    """The pole control bone parented to the thigh: ERROR, a cycle through the chain's own bones."""

    def parent(bones) -> None:
        bones[POLE].parent = bones["thigh"]

    edit_bones(obj, parent)


def network_edited(obj) -> None:
    """A network bone's constraint removed (the solved lower bone's Bend): OFF_TARGET, 'its network
    was edited'. (The target probe's Copy Location, removed, stops the influence drivers that
    read it: an ERROR naming the driver.)"""
    delete_constraint(obj, "Bend", "MCH-IK-shin")


def copy_transforms_removed(obj) -> None:
    """The lower bone's Copy Transforms of the chain removed: ERROR 'lacks the chain's Copy
    Transforms'."""
    delete_constraint(obj, "Two-Bone IK", "shin")


def uneven_parent_scale(obj) -> None:
    """Non-uniform pose scale on the hips: OK, the chain solves in its root's frame
    (docs/contract.md D6; it was OFF_TARGET, 'uneven pose scale', before)."""
    obj.pose.bones["hips"].scale = (1.0, 1.6, 0.7)


def own_scale(obj) -> None:
    """Scale on the thigh's own channel: OFF_TARGET, 'own scale is not used'."""
    obj.pose.bones["thigh"].scale = (1.2, 1.2, 1.2)


def blender_ik_on_chain(obj) -> None:
    """Blender's IK on the shin, aimed at the root: OFF_TARGET, 'Blender's IK poses its bones'."""
    constraint = obj.pose.bones["shin"].constraints.new("IK")
    constraint.target, constraint.subtarget = obj, "root"
    constraint.chain_count = 2


def constraint_after_chain(obj) -> None:
    """A Copy Rotation after the chain's on the shin: OFF_TARGET, 'other constraints move it'."""
    constraint = obj.pose.bones["shin"].constraints.new("COPY_ROTATION")
    constraint.target, constraint.subtarget = obj, "root"


def chain_constraint_muted(obj) -> None:
    """The chain's Copy Transforms on the thigh muted: ERROR 'is muted'."""
    obj.pose.bones["thigh"].constraints["Two-Bone IK"].mute = True


def network_bone_turned(obj) -> None:
    """A solved network bone turned about its axis (as Bake Action of every bone does): ERROR. (The
    lower one's start channels are driven: a turn there is put back.)"""
    obj.pose.bones["MCH-IK-thigh"].rotation_quaternion = (0.9689, 0.0, 0.2474, 0.0)


def rest_changed(obj) -> None:
    """The shin's rest tail moved in Edit Mode since the build: ERROR 'rest pose ... changed'."""

    def move(bones) -> None:
        bones["shin"].tail = (0.1, 0.1, 0.05)

    edit_bones(obj, move)


def inherit_changed(obj) -> None:
    """The shin's Inherit Rotation turned off since the build: ERROR."""
    obj.data.bones["shin"].use_inherit_rotation = False


def lower_bone_field_cleared(obj) -> None:
    """The chain's lower bone name cleared: ERROR 'Set the chain's lower bone'."""
    chain_of(obj).lower_bone = ""


def lower_bone_reparented(obj) -> None:
    """The shin parented to the hips: ERROR 'is not a child of'."""

    def parent(bones) -> None:
        bones["shin"].use_connect = False
        bones["shin"].parent = bones["hips"]

    edit_bones(obj, parent)


def second_chain_on_same_bones(obj) -> None:
    """A second chain (by script) on the same bones: ERROR 'also a bone of chain'."""
    chain = obj.two_bone_ik.chains.add()
    chain.name = "copy"
    chain.upper_bone, chain.lower_bone = "thigh", "shin"
    chain.target, chain.target_bone = obj, TARGET
    obj.two_bone_ik.active_chain_index = 1


def enabled_keyed(obj) -> None:
    """IK Enabled keyed: Bake refuses (the key would turn the chain back on)."""
    obj.pose.bones["shin"].keyframe_insert('["IK Enabled"]', frame=1)


def softness_nan(obj) -> None:
    """IK Softness NaN: ERROR 'Softness is not a number'."""
    obj.pose.bones["shin"]["IK Softness"] = math.nan


def softness_text(obj) -> None:
    """IK Softness made a string (Edit Property's type does it: the property made anew)."""
    del obj.pose.bones["shin"]["IK Softness"]
    obj.pose.bones["shin"]["IK Softness"] = "soft"


def influence_removed(obj) -> None:
    """The IK Influence custom property deleted from the lower bone."""
    del obj.pose.bones["shin"]["IK Influence"]


def huge_twist(obj) -> None:
    """A twist beyond float32's exact turns: OFF_TARGET."""
    chain_of(obj).twist = 1e6


def target_zero_scale_end_rotation(obj) -> None:
    """End Rotation Target with the target bone scaled to 0: ERROR, no rotation to copy."""
    chain_of(obj).end_rotation = "TARGET"
    obj.pose.bones[TARGET].scale = (0.0, 0.0, 0.0)


def baked(obj) -> None:
    """Bake Two-Bone IK (keys the bones, disables the chain)."""
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_bake() == {"FINISHED"}


def disabled(obj) -> None:
    """IK Enabled off."""
    chain_of(obj).enabled = False


def nan_target(obj) -> None:
    """A NaN target location: ERROR 'non-finite position'."""
    obj.pose.bones[TARGET].location = (math.nan, 0.0, 0.0)


def zero_armature_scale(obj) -> None:
    """The armature scaled to 0: ERROR 'zero or invalid scale'."""
    obj.scale = (0.0, 0.0, 0.0)


def rest_position(obj) -> None:
    """The armature shows its Rest Position: REST."""
    obj.data.pose_position = "REST"


def target_is_armature(obj) -> None:
    """The target is the armature itself without a bone: ERROR."""
    chain_of(obj).target_bone = ""


def target_is_network_bone(obj) -> None:
    """The target bone is one of the chain's mechanism bones: ERROR."""
    chain_of(obj).target_bone = "MCH-IK-shin-hint"


def end_bone_not_child(obj) -> None:
    """End Rotation Target with an End Bone that is not a child of the lower bone: ERROR."""
    chain = chain_of(obj)
    chain.end_rotation = "TARGET"
    chain.end_bone = "hips"


def pole_on_line(obj) -> None:
    """The pole on the root-target line: WARNING."""
    thigh, target = obj.pose.bones["thigh"], obj.pose.bones[TARGET]
    bpy.context.view_layer.update()
    pole = obj.pose.bones[POLE]
    matrix = pole.matrix.copy()
    matrix.translation = thigh.head.lerp(target.head, 0.5)
    pole.matrix = matrix


def influence_driver_removed(obj) -> None:
    """The influence driver of the chain's constraint on the thigh removed: ERROR."""
    path = obj.pose.bones["thigh"].constraints["Two-Bone IK"].path_from_id("influence")
    obj.driver_remove(path)


# (state, its function, the controls Add makes, the state its first chain reports)
STATES: list[tuple[str, Callable, str, str]] = [
    ("healthy", healthy, "BONES", "OK"),
    ("target_deleted", target_deleted, "EMPTIES", "ERROR"),
    ("pole_deleted", pole_deleted, "EMPTIES", "NOTE"),
    ("target_bone_misspelt", target_bone_misspelt, "BONES", "ERROR"),
    ("target_bone_deleted", target_bone_deleted, "BONES", "ERROR"),
    ("lower_bone_deleted", lower_bone_deleted, "BONES", "ERROR"),
    ("upper_bone_deleted", upper_bone_deleted, "BONES", "ERROR"),
    ("lower_bone_renamed", lower_bone_renamed, "BONES", "ERROR"),
    ("network_bone_renamed", network_bone_renamed, "BONES", "ERROR"),
    ("network_bone_deleted", network_bone_deleted, "BONES", "ERROR"),
    ("pole_parented_to_thigh", pole_parented_to_thigh, "BONES", "ERROR"),
    ("network_edited", network_edited, "BONES", "OFF_TARGET"),
    ("copy_transforms_removed", copy_transforms_removed, "BONES", "ERROR"),
    ("influence_driver_removed", influence_driver_removed, "BONES", "ERROR"),
    ("uneven_parent_scale", uneven_parent_scale, "BONES", "OK"),
    ("own_scale", own_scale, "BONES", "OFF_TARGET"),
    ("blender_ik_on_chain", blender_ik_on_chain, "BONES", "OFF_TARGET"),
    ("constraint_after_chain", constraint_after_chain, "BONES", "OFF_TARGET"),
    ("chain_constraint_muted", chain_constraint_muted, "BONES", "ERROR"),
    ("network_bone_turned", network_bone_turned, "BONES", "ERROR"),
    ("rest_changed", rest_changed, "BONES", "ERROR"),
    ("inherit_changed", inherit_changed, "BONES", "ERROR"),
    ("lower_bone_field_cleared", lower_bone_field_cleared, "BONES", "ERROR"),
    ("lower_bone_reparented", lower_bone_reparented, "BONES", "ERROR"),
    ("second_chain_on_same_bones", second_chain_on_same_bones, "BONES", "OK"),
    ("enabled_keyed", enabled_keyed, "BONES", "OK"),
    ("softness_nan", softness_nan, "BONES", "ERROR"),
    ("softness_text", softness_text, "BONES", "ERROR"),
    ("influence_removed", influence_removed, "BONES", "ERROR"),
    ("huge_twist", huge_twist, "BONES", "OFF_TARGET"),
    ("target_zero_scale_end_rotation", target_zero_scale_end_rotation, "BONES", "ERROR"),
    ("baked", baked, "BONES", "OK"),
    ("disabled", disabled, "BONES", "OK"),
    ("nan_target", nan_target, "BONES", "ERROR"),
    ("zero_armature_scale", zero_armature_scale, "BONES", "ERROR"),
    ("rest_position", rest_position, "BONES", "REST"),
    ("target_is_armature", target_is_armature, "BONES", "ERROR"),
    ("target_is_network_bone", target_is_network_bone, "BONES", "ERROR"),
    ("end_bone_not_child", end_bone_not_child, "BONES", "ERROR"),
    ("pole_on_line", pole_on_line, "BONES", "WARNING"),
]


# --- The operators --------------------------------------------------------------------------------
# (id, operator name under bpy.ops.pose, its properties); each is called on the rig in Pose Mode
# (the *_object_mode rows: Object Mode), with the lower bone (or, when it is gone, the upper one)
# active and selected.

OPERATORS: list[tuple[str, str, dict]] = [
    ("add", "two_bone_ik_add", {}),
    ("add_mirror_empties", "two_bone_ik_add", {"mirror": True, "controls": "EMPTIES"}),
    ("remove", "two_bone_ik_remove", {}),
    ("remove_delete_controls", "two_bone_ik_remove", {"delete_empties": True}),
    ("remove_all", "two_bone_ik_remove", {"all_chains": True}),
    ("apply", "two_bone_ik_apply", {}),
    ("update_mechanism", "two_bone_ik_update_mechanism", {}),
    ("bake", "two_bone_ik_bake", {}),
    ("bake_all", "two_bone_ik_bake", {"all_chains": True}),
    ("snap_ik_to_fk", "two_bone_ik_snap_ik_to_fk", {}),
    ("snap_fk_to_ik", "two_bone_ik_snap_fk_to_ik", {}),
    ("snap_ik_to_fk_autokey", "two_bone_ik_snap_ik_to_fk", {}),
    ("snap_fk_to_ik_autokey", "two_bone_ik_snap_fk_to_ik", {}),
    ("select_target", "two_bone_ik_select_target", {}),
    ("select_pole", "two_bone_ik_select_pole", {}),
    ("remove_object_mode", "two_bone_ik_remove", {}),
    ("apply_object_mode", "two_bone_ik_apply", {}),
    ("update_mechanism_object_mode", "two_bone_ik_update_mechanism", {}),
    ("bake_object_mode", "two_bone_ik_bake", {}),
    ("snap_ik_to_fk_object_mode", "two_bone_ik_snap_ik_to_fk", {}),
    ("snap_fk_to_ik_object_mode", "two_bone_ik_snap_fk_to_ik", {}),
    ("select_target_object_mode", "two_bone_ik_select_target", {}),
    ("select_pole_object_mode", "two_bone_ik_select_pole", {}),
    ("remove_missing_chain", "two_bone_ik_remove", {"chain": "gone"}),
    # On these rigs, which Rigify did not generate: refused, with nothing changed.
    ("rigify_limbs", "two_bone_ik_rigify_limbs", {}),
]


def test_every_registered_operator_is_in_the_table(extension):
    """The table holds every operator the extension registers (a new one joins the matrix)."""
    registered = {
        cls.bl_idname.removeprefix("pose.")
        for cls in bpy.types.Operator.__subclasses__()
        if getattr(cls, "__module__", "").startswith(extension)
    }
    assert registered == {name for _, name, _ in OPERATORS}


# --- What a call may change: a snapshot of the file -------------------------------------------------


def _value(value):
    """A plain, comparable form of an RNA value (repr: NaN equals itself)."""
    if isinstance(value, bpy.types.ID):
        return value.name_full
    if isinstance(value, bpy.types.bpy_struct):
        return type(value).__name__
    if hasattr(value, "__len__") and not isinstance(value, str):
        try:
            return repr(tuple(_value(item) for item in value))
        except TypeError:
            return repr(value)
    return repr(value)


def rna_values(struct) -> dict[str, str]:
    """Every property of ``struct`` but its collections, as plain comparable values."""
    values = {}
    for prop in struct.bl_rna.properties:
        if prop.identifier == "rna_type" or prop.type == "COLLECTION":
            continue
        values[prop.identifier] = _value(getattr(struct, prop.identifier))
    return values


def _custom(struct) -> dict[str, str]:
    return {key: repr(struct[key]) for key in struct.keys()}


def _drivers(obj) -> dict:
    animation = obj.animation_data
    found = {}
    for fcurve in animation.drivers if animation is not None else ():
        driver = fcurve.driver
        found[(fcurve.data_path, fcurve.array_index)] = (
            driver.type,
            driver.expression,
            fcurve.mute,
            [
                (variable.name, variable.type, [rna_values(target) for target in variable.targets])
                for variable in driver.variables
            ],
        )
    return found


def file_snapshot() -> dict[str, object]:
    """What an operator may change, flat (key: what, value: plain data): objects, their
    transforms, selection and mode; bones, pose channels, custom properties and constraints;
    chains; drivers; actions' keys; the scene's frame and the active object."""
    view_layer = bpy.context.view_layer
    active = view_layer.objects.active
    shot: dict[str, object] = {
        "objects": sorted(obj.name for obj in bpy.data.objects),
        "actions": sorted(action.name for action in bpy.data.actions),
        "active": active.name if active else None,
        "frame": bpy.context.scene.frame_current,
    }
    for obj in bpy.data.objects:
        key = f"object {obj.name}"
        shot[key] = (
            obj.type,
            obj.mode,
            obj.select_get(view_layer=view_layer),
            _value(obj.parent),
            obj.parent_type,
            obj.parent_bone,
            _value(obj.matrix_basis),
            _custom(obj),
        )
        shot[f"{key} drivers"] = _drivers(obj)
        shot[f"{key} keys"] = repr(keyframe_snapshot(obj))
        shot[f"{key} constraints"] = [rna_values(constraint) for constraint in obj.constraints]
        if obj.type != "ARMATURE":
            continue
        shot[f"{key} chains"] = repr(chain_snapshot(obj))
        shot[f"{key} active chain"] = obj.two_bone_ik.active_chain_index
        shot[f"{key} pose position"] = obj.data.pose_position
        shot[f"{key} bone collections"] = sorted(
            (collection.name, sorted(bone.name for bone in collection.bones))
            for collection in obj.data.collections_all
        )
        for bone in obj.data.bones:
            shot[f"{key} bone {bone.name}"] = rna_values(bone)
        for pose_bone in obj.pose.bones if obj.pose is not None else ():
            where = f"{key} pose bone {pose_bone.name}"
            shot[where] = rna_values(pose_bone)
            shot[f"{where} properties"] = _custom(pose_bone)
            shot[f"{where} constraints"] = [rna_values(constraint) for constraint in pose_bone.constraints]
    return shot


def changes(before: dict, after: dict) -> list[str]:
    """The keys whose values differ (first few details for the message)."""
    found = []
    for key in sorted(set(before) | set(after), key=str):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            inner = [str(name) for name in set(old) | set(new) if old.get(name) != new.get(name)]
            found.append(f"{key}: {', '.join(sorted(inner)[:6])}")
        else:
            found.append(f"{key}: {str(old)[:200]} -> {str(new)[:200]}")
    return found


# --- Building and reopening the states ------------------------------------------------------------


@pytest.fixture(scope="module")
def state_files(extension, tmp_path_factory):
    """{state: saved .blend}, each built on first use."""
    return {"folder": tmp_path_factory.mktemp("operator_states")}


def _state_file(files, state: str) -> pathlib.Path:
    if state not in files:
        _, make, controls, _ = next(entry for entry in STATES if entry[0] == state)
        bpy.ops.wm.read_homefile(use_empty=True)
        obj = leg_rig(controls)
        make(obj)
        bpy.context.view_layer.update()
        path = files["folder"] / f"{state}.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(path), check_existing=False)
        files[state] = path
    return files[state]


def _context(obj) -> dict:
    """The override for a chain operator: the armature active in Pose Mode, the lower bone (or
    the upper one, or any bone) active and selected."""
    override: dict = {"active_object": obj, "object": obj}
    bones = obj.pose.bones if obj.pose is not None else ()
    chosen = next((obj.pose.bones.get(name) for name in ("shin", "thigh", "calf") if name in bones), None)
    if chosen is not None:
        override["active_pose_bone"] = chosen
        override["selected_pose_bones"] = [chosen]
    return override


@pytest.mark.parametrize("state, reported", [(entry[0], entry[3]) for entry in STATES])
def test_each_state_reports_its_status(state_files, state, reported):
    """Each state of the table is the one its chain reports (the matrix tests what it says)."""
    bpy.ops.wm.open_mainfile(filepath=str(_state_file(state_files, state)), load_ui=False)
    bpy.context.view_layer.update()
    assert chain_of(bpy.data.objects["Rig"]).state == reported


# What bpy.ops raises for a Python exception that left an operator (its message quotes it).
TRACEBACK = re.compile(r"Traceback|^\w+Error: ", re.MULTILINE)
REPORT = re.compile(r"^(Info|Warning|Error): (.+)$", re.MULTILINE)


@pytest.mark.parametrize("operator_id, name, properties", OPERATORS, ids=[entry[0] for entry in OPERATORS])
@pytest.mark.parametrize("state", [entry[0] for entry in STATES])
def test_operator_never_raises_and_cancels_cleanly(state_files, capfd, state, operator_id, name, properties):
    """The operator returns FINISHED or CANCELLED (or fails its poll with a message), never a
    traceback; it reports what it did or why not; CANCELLED leaves the file as it was."""
    path = _state_file(state_files, state)
    bpy.ops.wm.open_mainfile(filepath=str(path), load_ui=False)
    obj = bpy.data.objects["Rig"]
    mode = "OBJECT" if operator_id.endswith("_object_mode") else "POSE"
    if obj.mode != mode:
        set_mode(obj, mode)
    # The *_autokey rows run with Auto Keying on: the snaps then key what they moved.
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = operator_id.endswith("_autokey")
    bpy.context.view_layer.update()
    status = (chain_of(obj).state, chain_of(obj).status) if len(obj.two_bone_ik.chains) else ("-", "")
    before = file_snapshot()
    out, err = capfd.readouterr()  # the set-up's own reports are not the operator's
    assert "Traceback" not in out + err, f"[{state}] a traceback reading the state:\n{out}{err}"
    operator = getattr(bpy.ops.pose, name)
    with bpy.context.temp_override(**_context(obj)):
        polled = operator.poll()
        try:
            result = operator(**properties)
            raised = ""
        except RuntimeError as error:
            result, raised = {"RAISED"}, str(error)
    out, err = capfd.readouterr()
    console = out + err
    assert not TRACEBACK.search(raised), f"[{state}: {status}] a traceback left {name}:\n{raised}"
    assert "Traceback" not in console, f"[{state}: {status}] a traceback in the console:\n{console}"
    reports = REPORT.findall(console) + REPORT.findall(raised)
    if not polled:
        assert raised and "poll()" in raised and "context is incorrect" not in raised, (
            f"[{state}] {name} failed its poll without a message: {raised}"
        )
        result = {"POLL"}
    assert result in ({"FINISHED"}, {"CANCELLED"}, {"RAISED"}, {"POLL"}), result
    if result == {"POLL"}:
        assert changes(before, file_snapshot()) == [], (
            f"[{state}] {name} failed its poll but changed the file"
        )
    elif result == {"FINISHED"}:
        assert reports, f"[{state}: {status}] {name} finished without a report"
    else:  # CANCELLED, or an ERROR report (bpy.ops raises it as RuntimeError): a refusal
        assert reports, f"[{state}: {status}] {name} returned CANCELLED without a report"
        after = file_snapshot()
        assert changes(before, after) == [], f"[{state}: {status}] {name} cancelled but changed the file"
    for chain in obj.two_bone_ik.chains:  # what the panel reads next
        assert chain.state and chain.status is not None
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err, f"[{state}] a traceback reading the result:\n{out}{err}"
    print(f"{state} {operator_id}: poll {polled}, {sorted(result)}, {reports}, status {status}")  # with -s

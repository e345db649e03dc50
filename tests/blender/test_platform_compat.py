# SPDX-License-Identifier: GPL-3.0-or-later
"""compat.py picks the right branch on the running Blender (run on every version by
tools/matrix.sh): bone selection, F-Curves through slots or Action.fcurves and the UI list type,
each decided by a feature test, and registration over a half-registered state."""

import importlib

import bpy
import pytest
from blender_rig import MODULE, is_selected, make_empty, make_leg, run_blender, set_mode


@pytest.fixture
def compat(scene):
    return importlib.import_module(f"{MODULE}.compat")


def test_selection_lives_where_the_feature_test_says(compat):
    """POSE_BONE_SELECT is True exactly when PoseBone has ``select`` (5.0+), else Bone carries it."""
    assert compat.POSE_BONE_SELECT == ("select" in bpy.types.PoseBone.bl_rna.properties)
    if not compat.POSE_BONE_SELECT:
        assert "select" in bpy.types.Bone.bl_rna.properties


def test_select_bone_is_the_selection_blender_uses(compat):
    """select_bone() selects a bone so that Pose Mode's selected_pose_bones lists it, and
    bone_selection_owner() reads it back, on every version."""
    obj = make_leg()
    set_mode(obj, "POSE")
    for name in ("thigh", "shin"):
        compat.select_bone(obj, name, False)
    compat.select_bone(obj, "shin")
    assert is_selected(obj, "shin")
    assert not is_selected(obj, "thigh")
    with bpy.context.temp_override(active_object=obj, object=obj):
        selected = bpy.context.selected_pose_bones
        assert selected is not None
        assert [bone.name for bone in selected] == ["shin"]
    compat.select_bone(obj, "shin", False)
    assert not is_selected(obj, "shin")
    set_mode(obj, "OBJECT")


def test_action_fcurves_is_none_without_animation(compat):
    """Without ``create`` nothing is made: an object with no animation has no F-Curves."""
    obj = make_empty("Plain", (0, 0, 0))
    assert compat.action_fcurves(obj) is None
    assert obj.animation_data is None


def test_created_fcurves_animate_the_object(compat, scene):
    """F-Curves made through action_fcurves(create=True) play (the slot is bound on 4.4+)."""
    obj = make_empty("Animated", (0, 0, 0))
    fcurves = compat.action_fcurves(obj, create=True)
    fcurve = compat.new_fcurve(fcurves, "location", 0, group="Object Transforms")
    fcurve.keyframe_points.insert(1, 0.0)
    fcurve.keyframe_points.insert(11, 2.0)
    assert compat.new_fcurve(fcurves, "location", 0) == fcurve  # found, not made twice
    assert len(compat.action_fcurves(obj)) == 1
    scene.frame_set(6)
    assert obj.location.x == pytest.approx(1.0, abs=1e-6)
    assert fcurve.group is None or fcurve.group.name == "Object Transforms"


def test_a_shared_action_gets_a_slot_per_object(compat, scene):
    """Creating F-Curves for an object whose action already animates another object leaves the
    other object's F-Curves as they were (4.4+: a slot of its own; 4.2 has one F-Curve list per
    action, so the two objects necessarily share it there)."""
    target = make_empty("Target", (0, 0, 0))
    fcurve = compat.new_fcurve(compat.action_fcurves(target, create=True), "location", 2)
    fcurve.keyframe_points.insert(1, 0.5)
    other = make_empty("Other", (0, 0, 0))
    other.animation_data_create().action = target.animation_data.action
    made = compat.new_fcurve(compat.action_fcurves(other, create=True), "rotation_euler", 0)
    made.keyframe_points.insert(1, 0.25)
    target_paths = [(f.data_path, f.array_index) for f in compat.action_fcurves(target)]
    if compat.LAYERED_ACTIONS:
        assert target_paths == [("location", 2)]
        assert other.animation_data.action_slot != target.animation_data.action_slot
    else:
        assert ("location", 2) in target_paths


def test_ui_list_type_draws_on_this_version(compat):
    """The list layout the panel uses is one template_list accepts here (GRID is gone in 5.0)."""
    parameter = bpy.types.UILayout.bl_rna.functions["template_list"].parameters["type"]
    assert compat.UI_LIST_TYPE in {item.identifier for item in parameter.enum_items}


@pytest.mark.parametrize("disable", [False, True], ids=["left-enabled", "disabled"])
def test_a_process_that_enabled_the_extension_exits_with_status_0(disable):
    """Enable the extension, solve a leg, (disable it,) and let the script end: the process exits
    0 on every supported Blender. bpy 4.2 crashed at exit here and 4.5 could hang, because Blender
    kept our module globals and so bpy alive past Python's shutdown (docs/blender-4.2-exit-crash.md)."""
    process = run_blender(
        f"""
        import addon_utils
        from blender_rig import add_chain, make_empty, make_leg, world_tail
        bpy.ops.wm.read_homefile(use_empty=True)
        obj = make_leg()
        add_chain(obj, make_empty("Target", (0.2, 0.1, 0.3)), make_empty("Pole", (0, 1, 0.5)))
        bpy.context.view_layer.update()
        print("TAIL", *(round(c, 4) for c in world_tail(obj, "shin")))
        if {disable!r}:
            addon_utils.disable(package().__name__, default_set=True)
        """,
        timeout=120,
    )
    assert process.returncode == 0, process.stdout[-2000:] + process.stderr[-2000:]
    assert "TAIL 0.2 0.1 0.3" in process.stdout

# SPDX-License-Identifier: GPL-3.0-or-later
"""Add places the controls as a rigger would (docs/operators.md, "Each operator"), here its empties
(``controls="EMPTIES"``; its default, control bones, is tested in test_controls_in_the_rig.py).

The new target takes the end bone's world rotation, so End Rotation Target moves nothing; target
and pole are parented to the armature object, so moving or turning the character keeps every chain
on its controls. The parenting can be turned off.
"""

import bpy
from blender_rig import assert_close, make_leg_with_foot, make_legs, set_mode, set_pose, world_tail

TOLERANCE = 1e-5


def add(obj, **properties):
    properties.setdefault("controls", "EMPTIES")
    set_mode(obj, "POSE")
    with bpy.context.temp_override(active_object=obj, object=obj, active_pose_bone=obj.pose.bones["shin"]):
        assert bpy.ops.pose.two_bone_ik_add(**properties) == {"FINISHED"}
    set_mode(obj, "OBJECT")
    return obj.two_bone_ik.chains[-1]


def posed_leg():
    """The leg with a foot, moved, turned and bent by hand so nothing lines up with the world axes."""
    obj = make_leg_with_foot()
    obj.location, obj.rotation_euler = (0.5, -0.3, 0.2), (0.2, 0.1, 0.7)
    set_pose(obj, {"thigh": (0.4, 0.0, 0.2), "shin": (0.9, 0.0, 0.0), "foot": (0.3, -0.5, 0.2)})
    return obj


def test_end_rotation_target_right_after_add_moves_nothing(scene):
    """The target is made with the foot's world rotation: switching End Rotation to Target keeps
    the foot where it was."""
    obj = posed_leg()
    foot = world_tail(obj, "foot")
    chain = add(obj)
    chain.end_rotation = "TARGET"
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_close(world_tail(obj, "foot"), foot, TOLERANCE)


def test_controls_move_with_the_character(scene):
    """Moving and turning the armature object carries target and pole: the chain stays on its
    target, and the pose relative to the rig does not change."""
    obj = posed_leg()
    chain = add(obj)
    assert chain.target.parent == obj and chain.pole.parent == obj
    local_end = obj.matrix_world.inverted() @ world_tail(obj, "shin")
    obj.location, obj.rotation_euler = (4.0, 2.0, -1.0), (0.0, 0.5, 2.0)
    bpy.context.view_layer.update()
    assert chain.status == "" and chain.reachable
    assert_close(world_tail(obj, "shin"), chain.target.matrix_world.translation, TOLERANCE)
    assert_close(obj.matrix_world.inverted() @ world_tail(obj, "shin"), local_end, TOLERANCE)


def test_parenting_can_be_turned_off(scene):
    """Parent to Rig off leaves the new empties unparented, where the tip and bend are."""
    obj = posed_leg()
    end = world_tail(obj, "shin")
    chain = add(obj, parent_controls=False)
    assert chain.target.parent is None and chain.pole.parent is None
    assert_close(chain.target.matrix_world.translation, end, TOLERANCE)


def test_mirror_parents_both_sides(scene):
    """Mirror adds the chain on both legs, each with its controls parented to the rig at its tip."""
    obj = make_legs()
    obj.location = (1.0, 0.0, 0.5)
    bpy.context.view_layer.update()
    ends = {side: world_tail(obj, f"shin{side}") for side in (".L", ".R")}
    set_mode(obj, "POSE")
    with bpy.context.temp_override(active_object=obj, object=obj, active_pose_bone=obj.pose.bones["shin.L"]):
        assert bpy.ops.pose.two_bone_ik_add(mirror=True, controls="EMPTIES") == {"FINISHED"}
    set_mode(obj, "OBJECT")
    for chain in obj.two_bone_ik.chains:
        assert chain.target.parent == obj and chain.pole.parent == obj
        assert_close(chain.target.matrix_world.translation, ends[chain.lower_bone[-2:]], TOLERANCE)


def test_add_that_cannot_build_its_mechanism_leaves_nothing(scene):
    """An armature disabled in the viewport cannot enter Edit Mode to get its mechanism bones: Add
    says so and leaves no chain, no empties."""
    obj = posed_leg()
    set_mode(obj, "POSE")
    obj.hide_viewport = True
    objects = set(bpy.data.objects.keys())
    with bpy.context.temp_override(active_object=obj, object=obj, active_pose_bone=obj.pose.bones["shin"]):
        try:
            result = bpy.ops.pose.two_bone_ik_add()
        except RuntimeError as error:
            assert "Edit Mode" in str(error)
            result = {"CANCELLED"}
    assert result == {"CANCELLED"}
    assert set(bpy.data.objects.keys()) == objects
    assert len(obj.two_bone_ik.chains) == 0

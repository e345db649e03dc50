# SPDX-License-Identifier: GPL-3.0-or-later
"""Snap IK to FK through the controls' own parents and constraints (docs/operators.md, "Each operator").

A target or pole with a Child Of to a prop (the usual parent-space switch), or a control bone with
one, lands where Blender evaluates it on the FK pose, so enabling the chain moves nothing. A control
that cannot be put there (a constraint pins it, a locked channel, a connected bone) is refused with
the reason, and nothing moves.
"""

import math

import bpy
import pytest
from blender_rig import (
    BASE_SHIN,
    BASE_THIGH,
    add_chain_with_operator,
    assert_close,
    fcurves,
    leg_bones,
    leg_with_chain,
    make_armature,
    make_empty,
    make_leg,
    set_pose,
    world_head,
    world_tail,
)
from mathutils import Euler, Matrix

TOLERANCE = 1e-5


def run_snap(obj):
    with bpy.context.temp_override(active_object=obj, object=obj):
        return bpy.ops.pose.two_bone_ik_snap_ik_to_fk()


def posed_leg(foot_tail=None, target=(0, 2, 0), pole=(1, 1, 0)):
    """The base rig's leg (with ``foot_tail``, a foot from the ankle) with a chain on ``target`` and
    ``pole`` (world points or objects), the chain off, posed by hand (FK) so its tip is somewhere new."""
    obj, chain = leg_with_chain(leg_bones(BASE_THIGH, BASE_SHIN[1], foot_tail), target=target, pole=pole)
    chain.enabled = False
    set_pose(obj, {"thigh": (0.4, -0.3, 0.9), "shin": (0.0, 0.0, -1.1)})
    return obj, chain


def child_of(empty, parent) -> None:
    """A Child Of to ``parent`` with its inverse cleared: the empty's channels are in the parent's space."""
    constraint = empty.constraints.new("CHILD_OF")
    constraint.target = parent
    constraint.inverse_matrix = Matrix.Identity(4)


def assert_enabling_moves_nothing(obj, chain, reachable: bool | None = True) -> None:
    """``reachable`` None: either (a soft chain's target may lie past the plain reach)."""
    fk = [(world_head(obj, name), world_tail(obj, name)) for name in ("thigh", "shin")]
    chain.enabled = True
    bpy.context.view_layer.update()
    assert chain.status == "" and reachable in (None, chain.reachable)
    for (head, tail), name in zip(fk, ("thigh", "shin"), strict=True):
        assert_close(world_head(obj, name), head, TOLERANCE)
        assert_close(world_tail(obj, name), tail, TOLERANCE)


def evaluated_position(obj):
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return obj.evaluated_get(depsgraph).matrix_world.translation.copy()


def test_snap_through_a_child_of_to_a_prop(scene):
    """Target and pole each have a Child Of to a prop empty at (5, 0, 0) turned 90 degrees: after
    Snap IK to FK the target is evaluated on the FK tip, and enabling the chain moves nothing."""
    hand = make_empty("Hand", (5, 0, 0))
    hand.rotation_euler = (0.0, 0.0, math.pi / 2)
    obj, chain = posed_leg()
    child_of(chain.target, hand)
    child_of(chain.pole, hand)
    bpy.context.view_layer.update()
    tip = world_tail(obj, "shin")
    assert (evaluated_position(chain.target) - tip).length > 1.0
    assert run_snap(obj) == {"FINISHED"}
    bpy.context.view_layer.update()
    assert_close(evaluated_position(chain.target), tip, TOLERANCE)
    assert_enabling_moves_nothing(obj, chain)


def test_snap_with_end_rotation_target_turns_the_evaluated_target(scene):
    """With End Rotation Target the target's evaluated rotation (through its Child Of) becomes the
    foot's FK rotation: enabling the chain turns no bone."""
    hand = make_empty("Hand", (5, 0, 0))
    hand.rotation_euler = (0.3, 0.0, math.pi / 2)
    obj, chain = posed_leg(foot_tail=(0, 2.3, 0.1))
    child_of(chain.target, hand)
    chain.end_rotation = "TARGET"
    obj.pose.bones["foot"].rotation_quaternion = Euler((0.2, 0.5, 0.0)).to_quaternion()
    bpy.context.view_layer.update()
    foot = world_tail(obj, "foot")
    assert run_snap(obj) == {"FINISHED"}
    chain.enabled = True
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_close(world_tail(obj, "foot"), foot, 2 * TOLERANCE)


def test_snap_through_a_control_bones_child_of(scene):
    """The target is a control bone of another rig with a Child Of to a prop: it lands on the tip."""
    prop = make_empty("Prop", (0, 3, 1))
    prop.rotation_euler = (0.0, 0.6, 0.0)
    controls = make_armature("Controls", [("ctrl", (2, 0, 0), (2, 0.3, 0), None, False)])
    constraint = controls.pose.bones["ctrl"].constraints.new("CHILD_OF")
    constraint.target = prop
    constraint.inverse_matrix = Matrix.Identity(4)
    obj, chain = posed_leg(target=controls)
    chain.target_bone = "ctrl"
    bpy.context.view_layer.update()
    tip = world_tail(obj, "shin")
    assert run_snap(obj) == {"FINISHED"}
    bpy.context.view_layer.update()
    assert_close(world_head(controls, "ctrl"), tip, TOLERANCE)
    assert_enabling_moves_nothing(obj, chain)


@pytest.mark.parametrize("twist, softness", [(0.5, 0.0), (0.0, 0.5), (-1.0, 0.2)])
def test_snap_with_twist_and_softness_gives_back_the_fk_pose(scene, twist, softness):
    """The pole is turned back by the twist and, with softness, the target moved out to where the
    soft end lands on the FK tip: enabling the chain moves nothing."""
    obj, chain = posed_leg()
    chain.twist, chain.softness = twist, softness
    bpy.context.view_layer.update()
    assert run_snap(obj) == {"FINISHED"}
    bpy.context.view_layer.update()
    assert_enabling_moves_nothing(obj, chain, reachable=None if softness else True)


@pytest.mark.parametrize("setting", ["twist", "softness"])
def test_snap_refuses_a_setting_that_is_not_a_number(scene, setting):
    """NaN twist or softness: Snap IK to FK says so, and neither control moves."""
    obj, chain = posed_leg()
    setattr(chain, setting, math.nan)
    before = [chain.target.matrix_basis.copy(), chain.pole.matrix_basis.copy()]
    with pytest.raises(RuntimeError, match=f"{setting.capitalize()} is not a number"):
        run_snap(obj)
    assert [chain.target.matrix_basis.copy(), chain.pole.matrix_basis.copy()] == before


def test_snap_with_softness_on_a_straight_fk_leg(scene):
    """A straight FK leg: the soft end never quite reaches full extension, so the target goes far
    enough out for the end to land on the tip within float precision."""
    obj, chain = posed_leg()
    obj.pose.bones["shin"].rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    chain.softness = 0.3
    bpy.context.view_layer.update()
    assert run_snap(obj) == {"FINISHED"}
    bpy.context.view_layer.update()
    assert_enabling_moves_nothing(obj, chain, reachable=False)


@pytest.mark.parametrize("head_tail", [1.0, 0.4])
def test_snap_puts_a_bone_targets_head_tail_point_on_the_tip(scene, head_tail):
    """The target and pole are control bones read at a Head/Tail point: the target bone's point
    lands on the FK tip (its head does not), and enabling the chain moves nothing."""
    controls = make_armature(
        "Controls",
        [("ctrl", (2, 0, 0), (2, 0.3, 0), None, False), ("knee", (1, 1, 1), (1, 1.5, 1), None, False)],
    )
    obj, chain = posed_leg(target=controls, pole=controls)
    chain.target_bone, chain.target_head_tail = "ctrl", head_tail
    chain.pole_bone, chain.pole_head_tail = "knee", head_tail
    bpy.context.view_layer.update()
    tip = world_tail(obj, "shin")
    assert run_snap(obj) == {"FINISHED"}
    bpy.context.view_layer.update()
    point = world_head(controls, "ctrl").lerp(world_tail(controls, "ctrl"), head_tail)
    assert_close(point, tip, TOLERANCE)
    assert (world_head(controls, "ctrl") - tip).length > 0.1
    assert_enabling_moves_nothing(obj, chain)


@pytest.mark.parametrize(
    "kind, reason",
    [
        ("copy location pins it", "cannot be put on the FK pose"),
        ("location locked", "has its location X locked"),
        ("connected control bone", "cannot be put on the FK pose"),
    ],
)
def test_a_control_that_cannot_be_placed_is_refused_and_nothing_moves(scene, kind, reason):
    """Snap stops with the reason (an error report, so a script gets a RuntimeError), and neither
    control's channels change; with Auto Keying on, nothing is keyed."""
    if kind == "connected control bone":
        controls = make_armature(
            "Controls",
            [("base", (2, 0, 0), (2, 0.5, 0), None, False), ("ctrl", (2, 0.5, 0), (2, 0.8, 0), "base", True)],
        )
        obj, chain = posed_leg(target=controls)
        chain.target_bone = "ctrl"
        moved = controls.pose.bones["ctrl"]
    else:
        obj, chain = posed_leg()
        moved = chain.target
        if kind == "copy location pins it":
            chain.target.constraints.new("COPY_LOCATION").target = make_empty("Anchor", (3, 3, 3))
        else:
            chain.target.lock_location = (True, False, False)
    bpy.context.view_layer.update()
    bpy.context.scene.tool_settings.use_keyframe_insert_auto = True
    before = [moved.matrix_basis.copy(), chain.pole.matrix_basis.copy()]
    with pytest.raises(RuntimeError, match=reason):
        run_snap(obj)
    assert [moved.matrix_basis.copy(), chain.pole.matrix_basis.copy()] == before
    assert all(other.animation_data is None for other in bpy.data.objects if other.type == "EMPTY")


def test_snap_through_a_half_influence_child_of_with_an_inverse(scene):
    """A Child Of at influence 0.5 whose inverse was set before the prop moved (a space switch
    blended halfway): the target still lands on the FK tip."""
    prop = make_empty("Prop", (0.5, 0.5, 0.0))
    obj, chain = posed_leg()
    constraint = chain.target.constraints.new("CHILD_OF")
    constraint.target, constraint.influence = prop, 0.5
    constraint.inverse_matrix = prop.matrix_world.inverted()
    prop.location, prop.rotation_euler = (2.0, -1.0, 0.5), (0.3, 0.0, 0.7)
    bpy.context.view_layer.update()
    tip = world_tail(obj, "shin")
    assert run_snap(obj) == {"FINISHED"}
    assert_close(evaluated_position(chain.target), tip, TOLERANCE)
    assert_enabling_moves_nothing(obj, chain)


def test_snap_keeps_rotation_and_scale_under_an_unevenly_scaled_parent(scene):
    """A target parented to a prop scaled (2, 1, 1) and turned: only its location channel changes,
    its rotation and scale stay what the animator set (locks on them do not stop the snap)."""
    prop = make_empty("Prop", (0.3, 0.2, 0.1))
    prop.scale, prop.rotation_euler = (2.0, 1.0, 1.0), (0.0, 0.0, 0.6)
    obj, chain = posed_leg()
    chain.target.parent = prop
    chain.target.rotation_euler = (0.0, 0.0, 0.5)
    chain.target.lock_rotation = chain.target.lock_scale = (True, True, True)
    bpy.context.view_layer.update()
    tip = world_tail(obj, "shin")
    assert run_snap(obj) == {"FINISHED"}
    assert_close(evaluated_position(chain.target), tip, TOLERANCE)
    assert tuple(chain.target.rotation_euler) == pytest.approx((0.0, 0.0, 0.5), abs=1e-6)
    assert tuple(chain.target.scale) == pytest.approx((1.0, 1.0, 1.0), abs=1e-6)


def test_snap_with_a_damped_track_on_the_pole_far_from_the_origin(scene):
    """A Damped Track on the pole pins only its rotation; a rig 800 m from the origin is placed
    within float32 steps there, not within a share of the distance (millimetres)."""
    obj, chain = posed_leg()
    obj.location = (800.0, 0.0, 0.0)
    chain.target.location.x += 800.0
    chain.pole.location.x += 800.0
    chain.pole.constraints.new("DAMPED_TRACK").target = make_empty("Aim", (802.0, 2.0, 2.0))
    bpy.context.view_layer.update()
    tip = world_tail(obj, "shin")
    assert run_snap(obj) == {"FINISHED"}
    assert (evaluated_position(chain.target) - tip).length < 1e-3 * 0.5  # 0.5 mm at 800 m
    assert_enabling_moves_nothing_far(obj, chain)


def assert_enabling_moves_nothing_far(obj, chain) -> None:
    end = world_tail(obj, "shin").copy()
    chain.enabled = True
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert (world_tail(obj, "shin") - end).length < 5e-4


def test_snap_keys_rotations_continuous_with_the_previous_key(scene, monkeypatch):
    """With Auto Keying, a target keyed at an Euler angle past a full turn gets its next key near
    it, not a turn back."""
    monkeypatch.setattr(bpy.context.preferences.edit, "use_keyframe_insert_available", False)
    obj, chain = posed_leg(foot_tail=(0, 2.3, 0.1))
    chain.end_rotation = "TARGET"
    chain.target.rotation_euler = (0.0, 0.0, 6.5)
    chain.target.keyframe_insert("rotation_euler", frame=1)
    scene = bpy.context.scene
    scene.frame_set(10)
    scene.tool_settings.use_keyframe_insert_auto = True
    assert run_snap(obj) == {"FINISHED"}
    z_keys = [
        point.co.y
        for fcurve in fcurves(chain.target)
        if fcurve.data_path == "rotation_euler" and fcurve.array_index == 2
        for point in fcurve.keyframe_points
    ]
    assert len(z_keys) == 2 and abs(z_keys[1] - z_keys[0]) < math.pi


def test_snap_refuses_a_flat_control_and_moves_nothing(scene):
    """A pole scaled to (1, 1, 0) cannot be placed: Snap IK to FK reports it and cancels with
    nothing moved (it used to raise "Matrix.invert(ed)" out of the operator with the target moved
    0.47 m)."""
    obj = make_leg()
    chain = add_chain_with_operator(obj)
    chain.pole.scale = (1.0, 1.0, 0.0)
    obj.pose.bones["thigh"].rotation_mode = "XYZ"
    obj.pose.bones["thigh"].rotation_euler = (0.3, 0.0, 0.0)
    bpy.context.view_layer.update()
    target_before = chain.target.matrix_world.copy()
    pole_before = chain.pole.matrix_world.copy()
    with bpy.context.temp_override(active_object=obj, object=obj):
        with pytest.raises(RuntimeError, match="cannot be placed"):
            bpy.ops.pose.two_bone_ik_snap_ik_to_fk()
    assert chain.target.matrix_world == target_before
    assert chain.pole.matrix_world == pole_before


FOOT_LEG = [*leg_bones(foot_tail=(0, -0.15, 0)), ("toe", (0, -0.15, 0), (0, -0.25, 0), "foot", True)]


def _toe_tip(obj):
    return world_tail(obj, "toe")


@pytest.mark.parametrize("mirrored", ["armature", "target"])
def test_snap_fk_to_ik_with_end_rotation_target_under_a_mirror_changes_nothing(scene, mirrored):
    """A mirrored armature or target (scale -1 on an axis): Snap FK to IK gives the foot the
    rotation Blender's Copy Rotation gives it (the target's rotation read as Euler angles, a
    mirror taken out), so turning the chain off afterwards moves nothing."""
    obj = make_armature("Leg", FOOT_LEG)
    chain = add_chain_with_operator(obj)
    chain.target.location = (0.05, -0.25, 0.35)
    chain.target.rotation_euler = (0.3, 0.5, -0.2)
    chain.end_rotation = "TARGET"
    if mirrored == "armature":
        obj.scale = (-1, 1, 1)
    else:
        chain.target.scale = (-1, 1, 1)
    bpy.context.view_layer.update()
    on = _toe_tip(obj)
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_snap_fk_to_ik() == {"FINISHED"}
    obj.two_bone_ik.chains[0].enabled = False
    bpy.context.view_layer.update()
    assert_close(_toe_tip(obj), on, TOLERANCE)


def test_snap_ik_to_fk_with_end_rotation_target_on_a_mirrored_target_says_the_foot_turns(scene, capfd):
    """A target under a mirrored armature (Parent to Rig): Blender's Copy Rotation reads a mirrored
    rotation its own way, so Snap IK to FK cannot turn the foot back exactly: its report says so."""
    obj = make_armature("Leg", FOOT_LEG)
    chain = add_chain_with_operator(obj)
    chain.end_rotation = "TARGET"
    obj.scale = (-1, 1, 1)
    chain.enabled = False
    bpy.context.view_layer.update()
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_snap_ik_to_fk() == {"FINISHED"}
    assert "the target is mirrored" in capfd.readouterr().out

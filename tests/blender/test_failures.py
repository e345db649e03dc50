# SPDX-License-Identifier: GPL-3.0-or-later
"""Failures, in real Blender: every broken input becomes the chain's status, never an exception.

Each test breaks the chain of armature "Leg" while armature "Other" keeps a healthy chain. Blender
evaluates the chain's network itself, so a broken input gives Blender's pose: what is guaranteed
is that the broken chain's state says why (never a silent wrong pose), that nothing raises, that
the animator's channels are never written, that it recovers when the input is fixed, and that it
never stops the other chain: deleted or renamed inputs, non-finite values, dependency cycles.
"""

import math

import bpy
import pytest
from blender_rig import (
    UpdateProbe,
    add_chain,
    assert_close,
    assert_console_clean,
    base_rig,
    chain_length,
    delete_constraint,
    expected_world,
    leg_bones,
    leg_with_chain,
    make_armature,
    make_empty,
    make_legs,
    marker_world,
    pose_snapshot,
    set_mode,
    setup_marker_render,
    user_bones,
    world_head,
    world_tail,
)
from mathutils import Vector

POLE = (0.0, 1.0, 0.5)
OTHER_OFFSET = Vector((3.0, 0.0, 0.0))


@pytest.fixture(autouse=True)
def driver_never_raises(capfd):
    """After each test: no traceback or driver error reached the console, no chain hit the catch-all."""
    yield
    assert_console_clean(capfd)


@pytest.fixture
def legs(scene):
    """Armature "Leg" (to break) at the origin and a healthy "Other" 3 m along x, each with a solved chain."""
    leg, _ = leg_with_chain(name="Leg", target=(0.3, 0.1, 0.4), pole=POLE)
    at = [OTHER_OFFSET + Vector(point) for point in ((0.3, 0.0, 0.4), POLE)]
    other, _ = leg_with_chain(
        name="Other", location=OTHER_OFFSET, target=at[0], pole=at[1], names=("Other Target", "Other Pole")
    )
    return leg, other


def tolerance(obj, upper="thigh", lower="shin") -> float:
    return 1e-5 * chain_length(obj, upper, lower)


def assert_solved(obj, target, pole, upper="thigh", lower="shin") -> None:
    joint, end, _ = expected_world(obj, target, pole, upper, lower)
    assert_close(world_tail(obj, upper), joint, tolerance(obj, upper, lower))
    assert_close(world_tail(obj, lower), end, tolerance(obj, upper, lower))


def exercise() -> None:
    """Run every evaluation path once: a depsgraph update and a frame change."""
    scene = bpy.context.scene
    bpy.context.view_layer.update()
    scene.frame_set(scene.frame_current + 1)
    bpy.context.view_layer.update()


def assert_other_solves(step: int = 0) -> None:
    """Armature "Other" follows a target move, whatever happened to "Leg"."""
    other = bpy.data.objects["Other"]
    chain = other.two_bone_ik.chains[0]
    location = OTHER_OFFSET + Vector((0.2 - 0.05 * step, 0.1, 0.3 + 0.02 * step))
    chain.target.location = location
    exercise()
    assert chain.status == ""
    assert_solved(other, location, chain.pole.location)


def chain_of(obj):
    return obj.two_bone_ik.chains[0]


def channels(obj) -> list[tuple]:
    """The animator's channels (every bone's but the network's), bit for bit."""
    return pose_snapshot(obj, user_bones(obj))


def test_deleted_target_is_an_error_and_recovers(legs):
    """Deleting the target is an ERROR naming it, the animator's channels untouched; a new target
    solves again. (Rewritten: the chain no longer keeps its last pose. Blender evaluates the network
    itself, and without a target its Copy Location does nothing: Blender's pose shows.)"""
    leg, _ = legs
    before = channels(leg)
    bpy.data.objects.remove(bpy.data.objects["Target"])
    exercise()
    chain = chain_of(leg)
    assert chain.target is None
    assert chain.state == "ERROR" and "target" in chain.status.lower() and not chain.reachable
    assert channels(leg) == before
    assert_other_solves()
    chain.target = make_empty("New Target", (-0.2, 0.1, 0.4))
    exercise()
    assert chain.status == ""
    assert_solved(leg, (-0.2, 0.1, 0.4), POLE)


def test_deleted_pole_bends_as_in_rest_with_a_status(legs):
    """Deleting the pole keeps solving with the rest-pose bend side (+Y for this leg) and says so."""
    leg, _ = legs
    bpy.data.objects.remove(bpy.data.objects["Pole"])
    chain = chain_of(leg)
    for location in ((0.3, -0.2, 0.5), (-0.4, 0.0, 0.2)):
        chain.target.location = location
        exercise()
        assert chain.pole is None
        assert "pole" in chain.status.lower()
        # The rest joint lies on the +Y side of the root-end line; the root is at (0, 0, 1).
        assert_solved(leg, location, (0.0, 1.0, 1.0))
    assert_other_solves()


@pytest.mark.parametrize("bone", ["thigh", "shin"])
def test_bone_deleted_in_edit_mode_is_a_status(legs, bone):
    """Deleting a chain bone in Edit Mode gives "bone '<name>' not found"; the other bone's channels
    are not written."""
    leg, _ = legs
    kept = "shin" if bone == "thigh" else "thigh"
    before = dict(pose_snapshot(leg))[kept]
    set_mode(leg, "EDIT")
    leg.data.edit_bones.remove(leg.data.edit_bones[bone])
    bpy.data.objects["Target"].location = (-0.3, 0.2, 0.3)
    bpy.context.view_layer.update()  # an update while the armature is in Edit Mode
    set_mode(leg, "OBJECT")
    exercise()
    chain = chain_of(leg)
    assert f"bone '{bone}' not found" in chain.status.lower()
    assert dict(pose_snapshot(leg))[kept] == before
    assert_other_solves()


def test_renamed_objects_keep_following(legs):
    """Renaming the target, pole and armature keeps the chain following, with the new names shown."""
    leg, _ = legs
    bpy.data.objects["Target"].name = "Foot Goal"
    bpy.data.objects["Pole"].name = "Knee Goal"
    leg.name = "Hero Leg"
    leg.data.name = "Hero Leg Bones"
    chain = chain_of(bpy.data.objects["Hero Leg"])
    assert (chain.target.name, chain.pole.name) == ("Foot Goal", "Knee Goal")
    bpy.data.objects["Foot Goal"].location = (-0.25, 0.15, 0.45)
    bpy.data.objects["Knee Goal"].location = (0.1, 1.0, 0.6)
    exercise()
    assert chain.status == ""
    assert_solved(bpy.data.objects["Hero Leg"], (-0.25, 0.15, 0.45), (0.1, 1.0, 0.6))
    assert_other_solves()


def test_renamed_bone_is_a_status_and_recovers(legs):
    """Renaming a chain bone is an ERROR that names the new name (Update Mechanism follows it) and
    writes none of the animator's channels; renaming it back solves."""
    leg, _ = legs
    before = [matrix for _, matrix in channels(leg)]
    leg.data.bones["shin"].name = "calf"
    chain = chain_of(leg)
    chain.target.location = (-0.3, 0.1, 0.2)
    exercise()
    assert chain.state == "ERROR" and "bone 'shin' was renamed 'calf'" in chain.status.lower()
    assert [matrix for _, matrix in channels(leg)] == before
    assert_other_solves()
    leg.data.bones["calf"].name = "shin"
    exercise()
    assert chain.status == ""
    assert_solved(leg, (-0.3, 0.1, 0.2), POLE)


def make_non_finite(obj, how: str) -> None:
    if how == "nan location":
        obj.location = (math.nan, 0.0, 0.5)
    else:  # a finite location under a huge parent scale overflows float32 to inf in the world matrix
        huge = make_empty("Huge", (0.0, 0.0, 0.0))
        huge.scale = (1e30, 1e30, 1e30)
        obj.parent = huge
        obj.location = (1e10, 0.0, 0.0)


def own_pose(obj, bones=("thigh", "shin")) -> list[Vector]:
    """The world heads and tails of ``bones`` with the chains off: the pose their channels give."""
    chains = obj.two_bone_ik.chains
    for chain in chains:
        chain.enabled = False
    bpy.context.view_layer.update()
    points = [point for bone in bones for point in (world_head(obj, bone), world_tail(obj, bone))]
    for chain in chains:
        chain.enabled = True
    bpy.context.view_layer.update()
    return points


def assert_own_pose(obj, expected, bones=("thigh", "shin")) -> None:
    """The chain bones show the pose of their channels, as the chain's ERROR promises."""
    points = [point for bone in bones for point in (world_head(obj, bone), world_tail(obj, bone))]
    for point, own in zip(points, expected, strict=True):
        assert_close(point, own, 1e-6)


@pytest.mark.parametrize("how", ["nan location", "overflowing parent scale"])
@pytest.mark.parametrize("which", ["Target", "Pole"])
def test_non_finite_target_or_pole_is_an_error_and_recovers(legs, which, how):
    """A NaN or infinite target or pole position is an ERROR saying so, with nothing raised and the
    animator's channels untouched, and the chain bones show their own pose (the network's influence
    is 0 there: contract D4); finite again, the chain solves. The network's drivers must not stop on
    it, or the chain would not recover. (Rewritten: the last pose is no longer kept.)"""
    leg, _ = legs
    before, fk = channels(leg), own_pose(leg)
    empty = bpy.data.objects[which]
    make_non_finite(empty, how)
    exercise()
    assert not all(math.isfinite(value) for value in empty.matrix_world.translation)
    chain = chain_of(leg)
    assert chain.state == "ERROR" and "non-finite" in chain.status.lower()
    assert channels(leg) == before
    assert_own_pose(leg, fk)
    assert math.isfinite(chain.shortfall)
    assert_other_solves()
    empty.parent = None
    empty.location = (-0.2, 0.2, 0.4) if which == "Target" else (0.2, 1.0, 0.4)
    exercise()
    assert chain.status == ""
    assert_solved(leg, chain.target.location, chain.pole.location)


@pytest.mark.parametrize("scale", [(0.0, 0.0, 0.0), (1.0, 0.0, 1.0)])
def test_zero_length_chain_is_an_error_with_the_own_pose(scene, scale):
    """A parent's pose scale of 0 along the chain leaves it no length (contract D4: nothing to solve):
    an ERROR saying so, nothing raised (the status once raised the solver's ValueError), the chain
    bones at the pose of their channels; scaled back, the chain solves."""
    obj = make_legs(hips=True)
    target, pole = make_empty("Target", (0.3, 0.1, 0.4)), make_empty("Pole", (0.2, 1.0, 0.5))
    chain = add_chain(obj, target, pole, "thigh.L", "shin.L")
    bpy.context.view_layer.update()
    assert chain.status == ""
    obj.pose.bones["hips"].scale = scale
    fk = own_pose(obj, ("thigh.L", "shin.L"))
    exercise()
    assert chain.state == "ERROR" and "long" in chain.status
    assert_own_pose(obj, fk, ("thigh.L", "shin.L"))
    obj.pose.bones["hips"].scale = (1.0, 1.0, 1.0)
    exercise()
    assert chain.status == ""
    assert_solved(obj, target.location, pole.location, "thigh.L", "shin.L")


def test_nan_influence_is_an_error_and_recovers(scene):
    """An influence set to NaN from Python is an ERROR naming it, the animator's channels untouched;
    a number again, it solves. (Rewritten: the last pose is no longer kept. Blender evaluates the
    network itself: a NaN constraint influence gives Blender's pose.)"""
    obj, chain = base_rig()
    before = channels(obj)
    chain.influence = math.nan
    chain.target.location = (0.4, 0.3, 0.2)
    bpy.context.view_layer.update()
    assert chain.state == "ERROR" and "Influence" in chain.status
    assert channels(obj) == before
    chain.influence = 1.0
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_close(world_tail(obj, "shin"), (0.4, 0.3, 0.2), 2e-5)


@pytest.mark.parametrize("location", [(math.inf, 0.0, 0.5), (1e38, 1e38, 0.0), (2e18, 0.0, 0.0)])
def test_a_target_past_float32s_range_is_an_error_with_the_own_pose(legs, location):
    """A target so far that float32 squares of its distance overflow (past 1e18 root units; a
    location typed as infinity is stored as float32's largest value): an ERROR saying so, the
    chain bones on their own pose, and nothing of the other chain. (Rewritten: the chain pointed
    at a target at float32's largest value; at (1e38, 1e38, 0) the network gave a garbage pose
    with a status blaming an edited network, which Apply then keyed.)"""
    leg, _ = legs
    fk = own_pose(leg)
    target = bpy.data.objects["Target"]
    target.location = location
    exercise()
    chain = chain_of(leg)
    assert chain.state == "ERROR" and "float32" in chain.status, chain.status
    assert all(math.isfinite(value) for value in (*chain.joint, *chain.end, chain.shortfall))
    assert_own_pose(leg, fk)
    assert_other_solves()
    target.location = (1e17, 0.0, 0.5)  # far, within the range: the chain points at it
    exercise()
    assert chain.status == "" and not chain.reachable
    assert_close(world_tail(leg, "shin"), (chain_length(leg), 0.0, 1.0), tolerance(leg))


@pytest.mark.parametrize("scale", [(0.0, 0.0, 0.0), (1.0, 0.0, 1.0), (math.nan, 1.0, 1.0)])
def test_invalid_armature_scale_is_an_error_and_recovers(legs, scale):
    """A zero, flat or NaN armature scale is an ERROR naming the scale, the animator's channels
    untouched; restoring the scale solves again. (Rewritten: nothing is written by the extension
    any more; Blender evaluates the network under that scale and shows what it gives.)"""
    leg, _ = legs
    before = channels(leg)
    leg.scale = scale
    chain = chain_of(leg)
    chain.target.location = (-0.3, 0.0, 0.3)
    exercise()
    assert chain.state == "ERROR" and "scale" in chain.status.lower()
    assert channels(leg) == before
    assert_other_solves()
    leg.scale = (1.0, 1.0, 1.0)
    exercise()
    assert chain.status == ""
    assert_solved(leg, (-0.3, 0.0, 0.3), POLE)


def make_cycle(leg, kind: str):
    """Make the target or pole move with the chain's own bones; returns a function that undoes it."""
    target, pole = bpy.data.objects["Target"], bpy.data.objects["Pole"]
    if kind == "target bone-parented to shin":
        target.parent, target.parent_type, target.parent_bone = leg, "BONE", "shin"
        return lambda: setattr(target, "parent", None)
    if kind == "target Child Of shin":
        constraint = target.constraints.new("CHILD_OF")
        constraint.target, constraint.subtarget = leg, "shin"
        return lambda: delete_constraint(target, constraint.name)
    if kind == "target under an empty on the thigh":
        holder = make_empty("Holder", (0.0, 0.0, 0.0))
        holder.parent, holder.parent_type, holder.parent_bone = leg, "BONE", "thigh"
        target.parent = holder
        return lambda: setattr(target, "parent", None)
    assert kind == "pole bone-parented to shin"
    pole.parent, pole.parent_type, pole.parent_bone = leg, "BONE", "shin"
    return lambda: setattr(pole, "parent", None)


@pytest.mark.parametrize(
    "kind",
    [
        "target bone-parented to shin",
        "target Child Of shin",
        "target under an empty on the thigh",
        "pole bone-parented to shin",
    ],
)
def test_dependency_cycle_is_an_error(legs, kind):
    """A target or pole moved by the chain's own bones is an ERROR saying "cycle", with no endless
    updates and the animator's channels untouched; undoing it solves. (Kept; the count of writes
    is gone: nothing of the extension writes per update.)"""
    leg, _ = legs
    before = channels(leg)
    undo_cycle = make_cycle(leg, kind)
    with UpdateProbe("Leg") as probe:
        bpy.context.view_layer.update()
        chain = chain_of(leg)
        assert chain.state == "ERROR" and "cycle" in chain.status.lower()
        for _ in range(3):
            bpy.context.view_layer.update()
            bpy.context.evaluated_depsgraph_get().update()
        assert probe.calls["depsgraph_update_post"] == 1  # nothing re-triggers an update
        for _ in range(3):
            exercise()
    assert channels(leg) == before
    assert_other_solves()
    undo_cycle()
    bpy.data.objects["Target"].location = (0.2, -0.1, 0.35)
    bpy.data.objects["Pole"].location = POLE
    exercise()
    assert chain.status == ""
    assert_solved(leg, (0.2, -0.1, 0.35), POLE)


def assert_cycle_refused(obj, chain, before) -> None:
    """Over a few updates the chain says it is in a cycle, and the animator's channels stay ``before``."""
    for _ in range(3):
        obj.update_tag()
        bpy.context.view_layer.update()
    assert chain.state == "ERROR" and "cycle" in chain.status
    assert channels(obj) == before


def test_armature_constraint_on_the_target_is_a_cycle(scene):
    """A target that follows the shin through an Armature constraint (constraint.targets) is refused as a
    cycle."""
    obj, chain = base_rig()
    before = channels(obj)
    constraint = chain.target.constraints.new("ARMATURE")
    item = constraint.targets.new()
    item.target, item.subtarget = obj, "shin"
    assert_cycle_refused(obj, chain, before)


def test_vertex_parent_on_a_mesh_the_chain_deforms_is_a_cycle(scene):
    """A target vertex-parented to a mesh skinned by the shin is refused as a cycle; object parenting is
    not."""
    obj, chain = base_rig()
    mesh = bpy.data.meshes.new("Skin")
    mesh.from_pydata([(0, 2, 0), (0, 1, 0)], [], [])
    skin = bpy.data.objects.new("Skin", mesh)
    bpy.context.scene.collection.objects.link(skin)
    skin.vertex_groups.new(name="shin").add([0, 1], 1.0, "REPLACE")
    skin.modifiers.new("Armature", "ARMATURE").object = obj
    target = chain.target
    target.parent = skin
    target.parent_type = "OBJECT"
    bpy.context.view_layer.update()
    assert chain.status == ""
    before = channels(obj)
    target.parent_type = "VERTEX"
    target.parent_vertices[0] = 0
    assert_cycle_refused(obj, chain, before)


def test_broken_chain_never_stops_the_next_on_one_armature(scene):
    """Two chains on one armature: each way of breaking the first still lets the second solve."""
    obj = make_armature("Legs", [*leg_bones(x=0.2, suffix=".L"), *leg_bones(x=-0.2, suffix=".R")])
    left_empties = make_empty("Target.L", (0.3, 0, 0.4)), make_empty("Pole.L", (0.2, 1, 0.5))
    right_empties = make_empty("Target.R", (-0.3, 0, 0.4)), make_empty("Pole.R", (-0.2, 1, 0.5))
    left = add_chain(obj, *left_empties, "thigh.L", "shin.L")
    right = add_chain(obj, *right_empties, "thigh.R", "shin.R")
    bpy.context.view_layer.update()

    def right_solves(step):
        location = (-0.3 + 0.05 * step, 0.1, 0.3)
        bpy.data.objects["Target.R"].location = location
        exercise()
        assert right.status == ""
        assert_solved(obj, location, (-0.2, 1, 0.5), "thigh.R", "shin.R")

    target_left = bpy.data.objects["Target.L"]
    target_left.location = (math.nan, 0, 0)
    right_solves(0)
    assert "non-finite" in left.status.lower()
    target_left.parent, target_left.parent_type, target_left.parent_bone = obj, "BONE", "shin.L"
    right_solves(1)
    assert "cycle" in left.status.lower()
    obj.data.bones["shin.L"].name = "calf.L"
    right_solves(2)
    assert "bone 'shin.l' was renamed 'calf.l'" in left.status.lower()
    obj.data.bones["calf.L"].name = "shin.L"
    bpy.data.objects.remove(target_left)
    right_solves(3)
    assert "target" in left.status.lower()


def test_render_with_a_broken_chain_never_raises(legs, tmp_path):
    """Rendering an animation with a broken chain (a cycle) raises nothing, and each rendered frame
    shows the healthy chain's solve. (Rewritten: there are no update handlers left to call during
    the render; Blender's render depsgraph evaluates the networks itself.)"""
    leg, other = legs
    make_cycle(leg, "target bone-parented to shin")
    scene = bpy.context.scene
    other_target = chain_of(other).target
    for frame, x in ((1, 3.2), (3, 3.6)):
        other_target.location = OTHER_OFFSET + Vector((x - 3.0, 0.0, 0.3))
        other_target.keyframe_insert("location", index=0, frame=frame)
    center = (3.5, 0.5)
    setup_marker_render(scene, other, "shin", center)
    scene.frame_start, scene.frame_end, scene.frame_step = 1, 3, 2
    scene.render.filepath = str(tmp_path / "frame_")
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    assert "cycle" in chain_of(leg).status.lower()
    pole = chain_of(other).pole.location
    for frame, x in ((1, 3.2), (3, 3.6)):
        _, end, _ = expected_world(other, OTHER_OFFSET + Vector((x - 3.0, 0.0, 0.3)), pole)
        found = marker_world(tmp_path / f"frame_{frame:04d}.png", center)
        assert found is not None
        assert_close((found[0], 0.0, found[1]), (end.x, 0.0, end.z), 2.0 / 256 / 2)  # half a pixel


def foot_orientation(obj):
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return (evaluated.matrix_world @ evaluated.pose.bones["foot"].matrix).to_3x3().normalized()


@pytest.mark.parametrize("how", ["nan scale", "zero scale", "nan rotation"])
def test_invalid_target_rotation_with_end_rotation_is_an_error(scene, how):
    """End Rotation = Target with a NaN/zero target scale or NaN rotation is an ERROR naming the
    target, the animator's channels untouched; then it recovers. (Rewritten: the last pose is no
    longer kept. Blender's Copy Rotation copies what it gets: the state must say so.)"""
    obj = make_armature("Leg", leg_bones(foot_tail=(0, -0.2, 0)))
    target = make_empty("Target", (0.3, 0.1, 0.4))
    target.rotation_euler = (0.3, -0.2, 0.5)
    chain = add_chain(obj, target, make_empty("Pole", POLE))
    chain.end_rotation = "TARGET"
    bpy.context.view_layer.update()
    assert chain.status == ""
    before = channels(obj)
    if how == "nan scale":
        target.scale = (math.nan, 1.0, 1.0)
    elif how == "zero scale":
        target.scale = (0.0, 0.0, 0.0)
    else:
        target.rotation_euler = (math.nan, 0.0, 0.0)
    exercise()
    assert chain.state == "ERROR" and "target" in chain.status.lower()
    assert channels(obj) == before
    target.scale = (1.0, 1.0, 1.0)
    target.rotation_euler = (-0.4, 0.1, 0.2)
    target.location = (-0.2, 0.2, 0.3)
    exercise()
    assert chain.status == ""
    assert_solved(obj, (-0.2, 0.2, 0.3), POLE)
    difference = foot_orientation(obj) - target.matrix_world.to_3x3().normalized()
    assert max(abs(value) for row in difference for value in row) < 1e-5


@pytest.mark.parametrize("bone", ["nope", ""])
def test_target_bone_not_found_keeps_the_own_pose(legs, bone, capfd):
    """A target bone that is not in the target armature, or the armature itself as the target (no
    bone), is an ERROR, and the chain bones show the pose of their channels: the network's target
    Copy Location is invalid there, which its influence drivers read (docs/design.md). Blender
    prints that it cannot add the Copy Location's relation to the missing bone; nothing else."""
    leg, _ = legs
    fk = own_pose(leg)
    chain = chain_of(leg)
    chain.target, chain.target_bone = leg, bone
    exercise()
    assert chain.state == "ERROR"
    assert_own_pose(leg, fk)
    console = capfd.readouterr()
    assert "Traceback" not in console.out + console.err
    chain.target = bpy.data.objects["Target"]
    exercise()
    assert chain.status == ""
    assert_solved(leg, chain.target.location, POLE)


def test_a_cycle_shows_the_solve_one_update_late(legs):
    """docs/panel.md's account of a cycle (the pole parented to the thigh): Blender evaluates the
    parts in an order of its own, and the chain shows the solve of the inputs of the update before:
    a target move shows after one more update."""
    leg, _ = legs
    chain = chain_of(leg)
    make_cycle(leg, "pole bone-parented to shin")
    target = chain.target
    for _ in range(2):
        leg.update_tag()
        bpy.context.view_layer.update()
    assert chain.state == "ERROR" and "cycle" in chain.status
    before = world_tail(leg, "shin")
    assert_close(before, target.location, tolerance(leg))
    target.location = (-0.2, 0.2, 0.3)
    bpy.context.view_layer.update()
    assert_close(world_tail(leg, "shin"), before, tolerance(leg))
    leg.update_tag()
    bpy.context.view_layer.update()
    assert_close(world_tail(leg, "shin"), target.location, tolerance(leg))

# SPDX-License-Identifier: GPL-3.0-or-later
"""Chains that feed other chains, and every rig in the scene (docs/how-it-works.md, "Chains that feed
other chains").

A chain whose root, target or pole moves with another chain's bones is solved after it, from its
new pose, in the same update: Blender's depsgraph orders the chains' networks, through parenting,
constraints and drivers alike, so the chain is exact after one update, in every played frame and
in a background animation render. A target parented to the chain's own bones is a cycle (ERROR);
other dependency cycles are Blender's, and the chains' states stay honest. Rigs in collection
instances and in scenes without the target solve. A bone two chains drive belongs to the first
chain in the list.
"""

import bpy
import pytest
from blender_rig import (
    BASE_SHIN,
    BASE_THIGH,
    add_chain,
    assert_close,
    delete_constraint,
    leg_bones,
    make_armature,
    make_empty,
    marker_world,
    setup_marker_render,
    update_mechanism,
    world_head,
    world_tail,
)
from mathutils import Vector

TOLERANCE = 1e-5  # x chain length (metres here: every chain below is 1 or 2 m long)

# A leg of four connected bones along +Y: thigh/shin carry one chain, foot/toe the one below it.
LEG = [*leg_bones(BASE_THIGH, BASE_SHIN[1], (0, 2.5, 0)), ("toe", (0, 2.5, 0), (0, 3, 0), "foot", True)]
# Two arms holding one prop: the left hand's target is the right hand's bone.
ARMS = [
    ("upper.R", (0, 0, 0), (0, 1, 0), None, False),
    ("fore.R", (0, 1, 0), (0, 2, 0), "upper.R", True),
    ("hand.R", (0, 2, 0), (0, 2.2, 0), "fore.R", True),
    ("upper.L", (0.5, 0, 0), (0.5, 1, 0), None, False),
    ("fore.L", (0.5, 1, 0), (0.5, 2, 0), "upper.L", True),
]


def reach_point(root, target, length: float) -> Vector:
    """Where a chain of ``length`` rooted at ``root`` puts its end for ``target`` (the solver's
    clamp: on the root-target line, at most ``length`` away)."""
    offset = Vector(target) - Vector(root)
    return Vector(root) + offset.normalized() * min(offset.length, length)


def stacked_leg(order: str):
    """A leg with chain "upper" on thigh/shin and chain "lower" on foot/toe, listed in ``order``."""
    obj = make_armature("Leg", LEG)
    empties = {
        "upper": (make_empty("tA", (0, 2, 0)), make_empty("pA", (1, 1, 0)), "thigh", "shin"),
        "lower": (make_empty("tB", (0, 3, 0)), make_empty("pB", (1, 2.5, 0)), "foot", "toe"),
    }
    names = ("upper", "lower") if order == "upper first" else ("lower", "upper")
    for name in names:
        target, pole, upper, lower = empties[name]
        add_chain(obj, target, pole, upper, lower).name = name
    bpy.context.view_layer.update()
    return obj, obj.two_bone_ik.chains["upper"], obj.two_bone_ik.chains["lower"]


def assert_stacked_solved(obj, upper_chain, lower_chain) -> None:
    """The upper chain's end on its target (or clamped), the lower chain's end where its own solve
    from the foot's new head puts it, and its reachable flag honest."""
    target_a = upper_chain.target.matrix_world.translation
    assert_close(world_tail(obj, "shin"), reach_point(Vector((0, 0, 0)), target_a, 2.0), TOLERANCE * 2)
    foot_head = world_head(obj, "foot")
    target_b = lower_chain.target.matrix_world.translation
    assert_close(world_tail(obj, "toe"), reach_point(foot_head, target_b, 1.0), TOLERANCE * 3)
    assert lower_chain.reachable == ((target_b - foot_head).length <= 1.0)
    assert lower_chain.status == "" and upper_chain.status == ""


@pytest.mark.parametrize("order", ["upper first", "lower first"])
def test_chain_below_another_chain_is_exact_after_one_update(scene, order):
    """A chain on foot/toe below a thigh/shin chain is exact after one update, in either list
    order; its reachable flag follows the distance from the foot's new head."""
    obj, upper, lower = stacked_leg(order)
    upper.target.location = (1.2, 0, 0.5)
    upper.pole.location = (1.2, 0.5, 0.5)
    bpy.context.view_layer.update()
    foot_head = world_head(obj, "foot")
    assert (Vector((0, 3, 0)) - foot_head).length > 1.0  # the foot's target is out of its reach now
    assert_stacked_solved(obj, upper, lower)
    assert not lower.reachable
    lower.target.location = foot_head + Vector((0.3, 0.2, 0.1))
    bpy.context.view_layer.update()
    assert_stacked_solved(obj, upper, lower)
    assert lower.reachable


def two_handed_arms(order: str):
    """Two arms holding one prop: chain "right" on upper.R/fore.R reaching for tR, chain "left" on
    upper.L/fore.L reaching for the right hand's bone; listed in ``order``."""
    obj = make_armature("Arms", ARMS)
    right_target, right_pole = make_empty("tR", (0, 2, 0)), make_empty("pR", (1, 1, 0))
    left_pole = make_empty("pL", (1.5, 1, 0))
    chains = {
        "right": lambda: add_chain(obj, right_target, right_pole, "upper.R", "fore.R"),
        "left": lambda: add_chain(obj, obj, left_pole, "upper.L", "fore.L"),
    }
    for name in ("right", "left") if order == "right first" else ("left", "right"):
        chains[name]().name = name
    left = obj.two_bone_ik.chains["left"]
    left.target_bone = "hand.R"
    bpy.context.view_layer.update()
    return obj, obj.two_bone_ik.chains["right"], left


def assert_hands_together(obj, left) -> None:
    """The left hand on the right hand's head (or as near as its reach allows), reachable honest."""
    hand = world_head(obj, "hand.R")
    root = world_head(obj, "upper.L")
    assert_close(world_tail(obj, "fore.L"), reach_point(root, hand, 2.0), 3 * TOLERANCE)
    assert left.reachable == ((hand - root).length <= 2.0) and left.status == ""


@pytest.mark.parametrize("order", ["right first", "left first"])
def test_off_hand_on_a_bone_under_another_chain(scene, order):
    """The left arm's target is the right hand's bone: after one update the left hand is on
    the right hand's head, (1.0, 1.2, 0.3), 1.334 m from its root (reach 2)."""
    obj, right, left = two_handed_arms(order)
    right_target, right_pole = right.target, right.pole
    right_target.location = (1.0, 1.2, 0.3)
    right_pole.location = (1.0, 1.2, 1.3)
    bpy.context.view_layer.update()
    assert_close(world_head(obj, "hand.R"), (1.0, 1.2, 0.3), 2 * TOLERANCE)
    assert_close(world_tail(obj, "fore.L"), (1.0, 1.2, 0.3), 2 * TOLERANCE)
    assert left.reachable and left.status == ""
    assert_hands_together(obj, left)


def riding_rigs():
    """A horse leg with a chain, and a rider armature bone-parented to the horse's shin with a chain
    of its own reaching for a world-space empty."""
    horse = make_armature("Horse", LEG[:2])
    add_chain(horse, make_empty("Horse Target", (0, 2, 0)), make_empty("Horse Pole", (1, 1, 0)))
    rider = make_armature("Rider", LEG[:2])
    rider.parent, rider.parent_type, rider.parent_bone = horse, "BONE", "shin"
    rider_chain = add_chain(rider, make_empty("Rider Target", (0, 3, 1)), make_empty("Rider Pole", (1, 3, 0)))
    bpy.context.view_layer.update()
    return horse, rider, rider_chain


def assert_rider_solved(rider, chain) -> None:
    """The rider's chain solved from where the horse's chain put its root; reachable honest."""
    root = world_head(rider, "thigh")
    target = chain.target.matrix_world.translation
    assert_close(world_tail(rider, "shin"), reach_point(root, target, 2.0), 3 * TOLERANCE)
    assert chain.reachable == ((target - root).length <= 2.0) and chain.status == ""


def test_rider_parented_to_another_rigs_chain(scene):
    """A rig bone-parented to another rig's chain bone solves from where that chain puts it after
    one update; out of reach it says so."""
    horse, rider, chain = riding_rigs()
    horse_target = horse.two_bone_ik.chains[0].target
    horse_target.location = (1.2, 0.3, 0.5)
    bpy.context.view_layer.update()
    assert_rider_solved(rider, chain)
    chain.target.location = world_head(rider, "thigh") + Vector((0.4, 0.9, 0.2))
    bpy.context.view_layer.update()
    assert chain.reachable
    assert_close(world_tail(rider, "shin"), chain.target.location, 3 * TOLERANCE)
    horse_target.location = (0.0, 0.3, -1.6)  # carries the rider's root away from its target
    bpy.context.view_layer.update()
    root = world_head(rider, "thigh")
    assert (chain.target.location - root).length > 2.0
    assert not chain.reachable
    assert_close(world_tail(rider, "shin"), reach_point(root, chain.target.location, 2.0), 3 * TOLERANCE)


def follower_setups():
    """Each kind of chain following another, as (name, build): build returns the animated source,
    its two keys, a check of the follower at the current frame, and the bone to render."""

    def stacked():
        obj, upper, lower = stacked_leg("lower first")
        lower.target.location = (0.6, 2.6, 0.4)
        keys = ((1, (-0.8, 0.4, 0.5)), (20, (1.2, 0.4, 0.5)))
        return upper.target, keys, lambda: assert_stacked_solved(obj, upper, lower), (obj, "toe")

    def off_hand():
        obj, right, left = two_handed_arms("left first")
        right.pole.location = (1.0, 1.2, 1.3)
        keys = ((1, (1.0, 1.2, 0.3)), (20, (0.2, 1.5, -0.6)))
        return right.target, keys, lambda: assert_hands_together(obj, left), (obj, "fore.L")

    def rider():
        horse, rider, chain = riding_rigs()
        keys = ((1, (1.2, 0.3, 0.5)), (20, (-0.5, 1.0, 1.2)))
        return (
            horse.two_bone_ik.chains[0].target,
            keys,
            lambda: assert_rider_solved(rider, chain),
            (rider, "shin"),
        )

    return {"chain below a chain": stacked, "off-hand on a bone under a chain": off_hand, "rider": rider}


@pytest.mark.parametrize("setup", list(follower_setups()))
def test_following_chains_in_playback_and_render(scene, tmp_path, setup):
    """In each of 20 played frames, and in a background animation render started elsewhere in the
    timeline, a chain following another is where its solve from the other's new pose puts it."""
    source, keys, check, (obj, bone) = follower_setups()[setup]()
    for frame, location in keys:
        source.location = location
        source.keyframe_insert("location", frame=frame)
    scene = bpy.context.scene
    for frame in range(1, 21):
        scene.frame_set(frame)
        check()
    expected = {}
    for frame in (2, 17):
        scene.frame_set(frame)
        expected[frame] = world_tail(obj, bone)
    center = ((expected[2].x + expected[17].x) / 2, (expected[2].z + expected[17].z) / 2)
    setup_marker_render(scene, obj, bone, center, size=4.0)
    scene.frame_set(9)  # each rendered frame solves its own inputs
    scene.render.filepath = str(tmp_path / "frame_")
    for frame in (2, 17):
        scene.frame_start = scene.frame_end = frame
        assert bpy.ops.render.render(animation=True) == {"FINISHED"}
        found = marker_world(tmp_path / f"frame_{frame:04d}.png", center, size=4.0)
        assert found is not None
        # One pixel is 4 m / 256 = 1.6 cm; the marker's centroid is good to about half of it.
        assert abs(found[0] - expected[frame].x) < 0.02 and abs(found[1] - expected[frame].z) < 0.02


def test_a_constraint_between_chains_is_exact_after_one_update(scene):
    """A target that follows another chain's bone through a constraint (Copy Location) is exact
    after one update. (It used to be one update late and say "Waits on chain": the network is
    evaluated by Blender's depsgraph, which orders the constraint after the chain above.)"""
    obj, upper, lower = stacked_leg("upper first")
    follower = lower.target
    follower.location = (0, 0, 0)
    constraint = follower.constraints.new("COPY_LOCATION")
    constraint.target, constraint.subtarget, constraint.use_offset = obj, "shin", True
    follower.location = (0.2, 0.6, 0.1)
    bpy.context.view_layer.update()
    for location in ((0.8, 0.5, 0.6), (1.2, 0.0, 0.5)):
        upper.target.location = location
        bpy.context.view_layer.update()
        assert_close(
            follower.matrix_world.translation, world_head(obj, "shin") + Vector((0.2, 0.6, 0.1)), 1e-6
        )
        assert_stacked_solved(obj, upper, lower)
    follower.constraints.remove(constraint)
    bpy.context.view_layer.update()
    assert_stacked_solved(obj, upper, lower)


def target_world(obj, chain) -> Vector:
    """World position of a chain's target bone's head on ``obj`` (Head/Tail 0), evaluated."""
    return world_head(obj, chain.target_bone)


def assert_honest(obj, chain, upper: str, lower: str, length: float) -> None:
    """A chain whose state says it can be right (OK, NOTE, WARNING) has its end where the solver
    puts it for its evaluated root and target; any other chain says OFF_TARGET or ERROR and is
    never reachable."""
    if chain.state in {"OK", "NOTE", "WARNING"}:
        root, target = world_head(obj, upper), target_world(obj, chain)
        assert_close(world_tail(obj, lower), reach_point(root, target, length), 3 * TOLERANCE)
    else:
        assert chain.state in {"OFF_TARGET", "ERROR"} and not chain.reachable, (chain.state, chain.status)
        assert chain.state != "ERROR" or "a cycle" in chain.status, chain.status


def test_control_bone_following_the_chain_is_a_cycle(scene):
    """A control bone of the same rig parented to the chain's own shin, as the chain's target: a
    cycle, ERROR. Through a Child Of or Copy Location to the shin it is a Blender dependency cycle
    the readout cannot name (check_sources follows parenting only): the chain's state is then
    never a false OK. (The handler used to name both and write nothing; nothing of ours writes
    now.)"""
    obj = make_armature(
        "Leg",
        [
            *LEG[:2],
            ("ctrl", (0, 2, 0), (0, 2, 0.3), None, False),
            ("ctrl.child", (0, 2, 0), (0, 2, 0.3), "shin", False),
        ],
    )
    chain = add_chain(obj, obj, make_empty("Pole", (1, 1, 0)))
    chain.target_bone = "ctrl"
    bpy.context.view_layer.update()
    assert chain.status == ""
    chain.target_bone = "ctrl.child"
    bpy.context.view_layer.update()
    assert chain.state == "ERROR" and not chain.reachable
    assert chain.status.endswith("moves with the chain's own bones: a cycle"), chain.status
    chain.target_bone = "ctrl"
    for kind in ("CHILD_OF", "COPY_LOCATION"):
        constraint = obj.pose.bones["ctrl"].constraints.new(kind)
        constraint.target, constraint.subtarget = obj, "shin"
        bpy.context.view_layer.update()
        assert_honest(obj, chain, "thigh", "shin", 2.0)
        delete_constraint(obj, constraint.name, "ctrl")
        bpy.context.view_layer.update()
        assert chain.status == ""


def test_chains_moving_each_other_are_a_cycle(scene):
    """Two chains each reaching for a bone of the other: a Blender dependency cycle, not one the
    readout names (check_sources follows parenting only), so each chain's state is honest: OK only
    with its end on its solve, else OFF_TARGET and not reachable. (The handler used to say "move
    each other: a cycle" for both.)"""
    obj = make_armature("Arms", ARMS)
    add_chain(obj, obj, make_empty("pR", (1, 1, 0)), "upper.R", "fore.R")
    add_chain(obj, obj, make_empty("pL", (1.5, 1, 0)), "upper.L", "fore.L")
    right, left = obj.two_bone_ik.chains
    right.target_bone, left.target_bone = "fore.L", "hand.R"
    for _ in range(2):
        bpy.context.view_layer.update()
        assert_honest(obj, right, "upper.R", "fore.R", 2.0)
        assert_honest(obj, left, "upper.L", "fore.L", 2.0)
    assert {right.state, left.state} & {"OFF_TARGET", "ERROR"}  # a cycle cannot satisfy both


def test_rig_in_a_collection_instance_solves(scene):
    """A rig and its empties in a collection placed by a collection instance (not in the scene
    themselves) solve."""
    collection = bpy.data.collections.new("Character")
    obj = make_armature("Leg", LEG[:2])
    target, pole = make_empty("Target", (0.5, 1.5, 0.3)), make_empty("Pole", (1, 1, 0))
    chain = add_chain(obj, target, pole)
    for item in (obj, target, pole):
        collection.objects.link(item)
        bpy.context.scene.collection.objects.unlink(item)
    instance = bpy.data.objects.new("Character Instance", None)
    instance.instance_type, instance.instance_collection = "COLLECTION", collection
    instance.location = (3, 0, 0)
    bpy.context.scene.collection.objects.link(instance)
    bpy.context.view_layer.update()
    target.location = (0.6, 1.2, -0.4)
    bpy.context.view_layer.update()
    assert chain.status == "" and chain.reachable
    assert_close(world_tail(obj, "shin"), target.location, 2 * TOLERANCE)  # the rig's own space


def test_target_outside_the_evaluated_scene_still_solves(scene):
    """A rig linked into two scenes, its target in the first only: the second scene's depsgraph
    pulls the target in through the network's constraint, so it shows the solve too. (The handler
    used to say "not in scene" and keep the pose: nothing of ours evaluates now.)"""
    obj = make_armature("Leg", LEG[:2])
    target, pole = make_empty("Target", (0.5, 1.5, 0.3)), make_empty("Pole", (1, 1, 0))
    chain = add_chain(obj, target, pole)
    bpy.context.view_layer.update()
    other = bpy.data.scenes.new("Other")
    other.collection.objects.link(obj)
    other.collection.objects.link(pole)
    other.view_layers[0].update()
    target.location = (-0.5, 1.0, 0.8)
    other.view_layers[0].update()
    evaluated = obj.evaluated_get(other.view_layers[0].depsgraph)
    assert_close(evaluated.matrix_world @ evaluated.pose.bones["shin"].tail, target.location, 2 * TOLERANCE)
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_close(world_tail(obj, "shin"), target.location, 2 * TOLERANCE)


def test_rig_in_a_background_set_scene_solves(scene):
    """A rig in the scene set as the background of the evaluated scene solves there."""
    obj = make_armature("Leg", LEG[:2])
    target, pole = make_empty("Target", (0.5, 1.5, 0.3)), make_empty("Pole", (1, 1, 0))
    chain = add_chain(obj, target, pole)
    props = bpy.context.scene
    shot = bpy.data.scenes.new("Shot")
    shot.background_set = props
    bpy.context.window.scene = shot
    bpy.context.view_layer.update()
    target.location = (-0.4, 1.1, 0.6)
    bpy.context.view_layer.update()
    assert chain.status == "" and chain.reachable
    assert_close(world_tail(obj, "shin"), target.location, 2 * TOLERANCE)


def test_chain_below_a_blended_chain_is_exact(scene):
    """The chain above at influence 0.5: Blender blends its bones and then evaluates the chain
    below from the blended pose, exact after one update; under an uneven armature scale too at
    influence 1. (The handler could not predict Blender's world-space blend under an uneven scale
    and said the chain below "Waits on chain"; Blender orders the chains now. Between influence 0
    and 1 under an uneven scale the blend shears the bones above: docs/limits.md.)"""
    obj, upper, lower = stacked_leg("upper first")
    upper.influence = 0.5
    upper.target.location = (1.2, 0.0, 0.5)
    bpy.context.view_layer.update()
    assert lower.status == ""
    assert_stacked_solved_at_influence(obj, lower)
    obj.scale = (1.0, 1.3, 0.8)
    upper.influence = 1.0
    upper.target.location = (0.9, 0.4, 0.6)
    bpy.context.view_layer.update()
    assert lower.status == ""
    assert_stacked_solved_at_influence(obj, lower)


def assert_stacked_solved_at_influence(obj, lower) -> None:
    """The foot chain's end where its own solve from the foot's evaluated head puts it."""
    foot_head = world_head(obj, "foot")
    to_armature = obj.matrix_world.inverted()
    reach = (to_armature @ lower.target.matrix_world.translation) - (to_armature @ foot_head)
    expected = obj.matrix_world @ ((to_armature @ foot_head) + reach.normalized() * min(reach.length, 1.0))
    assert_close(world_tail(obj, "toe"), expected, 3 * TOLERANCE)


def test_renaming_bones_is_caught_by_the_readout(scene):
    """A rig's target bone renamed away, and a bone under another chain renamed to its name:
    Blender renames the network's constraint target with the bone, while the chain's target bone
    keeps its name, so the chain says it is off its solve (never a false OK); Update Mechanism
    points the network at the chain's bone, and the chain follows the other chain exactly after one
    update. (The handler read targets by name and re-planned.)"""
    leg = make_armature("Leg", [*LEG, ("ctrl", (2, 0, 0), (2, 0.3, 0), None, False)])
    add_chain(leg, make_empty("tA", (0, 2, 0)), make_empty("pA", (1, 1, 0))).name = "upper"
    arm = make_armature("Arm", LEG[:2])
    arm.location = (0.5, 0.0, 0.0)
    chain = add_chain(arm, leg, make_empty("pArm", (1.5, 1, 0)))
    chain.target_bone = "ctrl"
    bpy.context.view_layer.update()
    leg.data.bones["ctrl"].name = "ctrl.old"
    leg.data.bones["foot"].name = "ctrl"
    leg.two_bone_ik.chains["upper"].target.location = (1.0, 1.2, 0.3)
    bpy.context.view_layer.update()
    assert chain.state == "OFF_TARGET" and not chain.reachable
    assert "Update Mechanism" in chain.status
    update_mechanism(arm)
    chain = arm.two_bone_ik.chains[0]
    leg.two_bone_ik.chains["upper"].target.location = (0.9, 1.1, 0.4)
    bpy.context.view_layer.update()
    hand = world_head(leg, "ctrl")
    root = world_head(arm, "thigh")
    assert_close(world_tail(arm, "shin"), reach_point(root, hand, 2.0), 3 * TOLERANCE)
    assert chain.status == ""


@pytest.mark.parametrize("kind", ["driver reading a bone's tail", "shrinkwrap onto a skinned mesh"])
def test_dependencies_through_drivers_and_deformed_meshes_are_exact(scene, kind):
    """A target moved by a driver reading the chain above's bone (a single property), or
    shrinkwrapped onto a mesh that chain deforms, is exact after one update: Blender's depsgraph
    orders it after the chain above. (It used to wait on that chain, one update late.)"""
    obj, upper, lower = stacked_leg("upper first")
    follower = lower.target
    if kind == "driver reading a bone's tail":
        fcurve = follower.driver_add("location", 0)
        variable = fcurve.driver.variables.new()
        variable.type = "SINGLE_PROP"
        variable.targets[0].id = obj
        variable.targets[0].data_path = 'pose.bones["shin"].tail[0]'
        fcurve.driver.expression = variable.name
    else:
        import bmesh

        mesh = bpy.data.meshes.new("Skin")
        builder = bmesh.new()
        bmesh.ops.create_cube(builder, size=0.5)
        builder.to_mesh(mesh)
        builder.free()
        skin = bpy.data.objects.new("Skin", mesh)
        bpy.context.scene.collection.objects.link(skin)
        skin.location = (0.0, 1.5, 0.0)
        group = skin.vertex_groups.new(name="shin")
        group.add(list(range(len(mesh.vertices))), 1.0, "REPLACE")
        skin.modifiers.new("Armature", "ARMATURE").object = obj
        follower.constraints.new("SHRINKWRAP").target = skin
    bpy.context.view_layer.update()
    for location, pole in (((1.2, 0.0, 0.5), (1.2, 0.5, 0.5)), ((0.8, 0.5, 0.6), (1.0, 0.5, 1.0))):
        upper.target.location, upper.pole.location = location, pole
        bpy.context.view_layer.update()
        if kind == "driver reading a bone's tail":
            assert follower.matrix_world.translation.x == pytest.approx(world_tail(obj, "shin").x, abs=1e-6)
        assert_stacked_solved(obj, upper, lower)


def test_a_chain_after_a_cycle_is_honest(scene):
    """Two chains in a Blender dependency cycle, and a third reading one of them: each chain's
    state is honest (OK only with its end on its solve, ERROR only naming the cycle). (The
    handler used to say the third "Follows chain ..., which is in a cycle" and write nothing.)"""
    obj = make_armature(
        "Arms",
        [
            *ARMS,
            *[
                (f"{n}.X", (3 + h[0], h[1], h[2]), (3 + t[0], t[1], t[2]), p and f"{p}.X", c)
                for n, h, t, p, c in LEG[:2]
            ],
        ],
    )
    add_chain(obj, obj, make_empty("pR", (1, 1, 0)), "upper.R", "fore.R")
    add_chain(obj, obj, make_empty("pL", (1.5, 1, 0)), "upper.L", "fore.L")
    add_chain(obj, obj, make_empty("pX", (4, 1, 0)), "thigh.X", "shin.X")
    right, left, third = obj.two_bone_ik.chains
    right.target_bone, left.target_bone, third.target_bone = "fore.L", "hand.R", "hand.R"
    bpy.context.view_layer.update()
    for chain, upper, lower in (
        (right, "upper.R", "fore.R"),
        (left, "upper.L", "fore.L"),
        (third, "thigh.X", "shin.X"),
    ):
        assert_honest(obj, chain, upper, lower, 2.0)
    assert {right.state, left.state} & {"OFF_TARGET", "ERROR"}


def test_a_bone_a_thousand_parents_below_a_chain(scene):
    """A target bone 1,100 bones below the chain above (deeper than Python's recursion limit) is
    read without an error."""
    bones = list(LEG[:2])
    parent = "shin"
    for index in range(1100):
        name = f"link.{index}"
        bones.append((name, (0, 2 + 0.001 * index, 0), (0, 2.001 + 0.001 * index, 0), parent, True))
        parent = name
    obj = make_armature("Long", bones)
    add_chain(obj, make_empty("tA", (0, 2, 0)), make_empty("pA", (1, 1, 0))).name = "upper"
    other = make_armature("Other", LEG[:2])
    chain = add_chain(other, obj, make_empty("pO", (1, 1, 0)))
    chain.target_bone = parent
    bpy.context.view_layer.update()
    obj.two_bone_ik.chains["upper"].target.location = (0.8, 1.0, 0.5)
    bpy.context.view_layer.update()
    assert chain.status == ""
    root, tip = world_head(other, "thigh"), world_head(obj, parent)
    assert_close(world_tail(other, "shin"), reach_point(root, tip, 2.0), 3 * TOLERANCE)


def test_chains_sharing_a_bone_solve_only_the_first(scene):
    """Two chains on the same bone (the second made by script): the first keeps its network and
    solves; the later one says so (ERROR) until the first is removed and Update Mechanism runs.
    (Their networks share a bone name, MCH-IK-shin, which the later build must not take.)"""
    obj = make_armature("Leg", LEG[:3])
    add_chain(obj, make_empty("Target", (1.2, 0, 0.5)), make_empty("Pole", (1.2, 0.5, 0.5)))
    add_chain(obj, make_empty("FootTarget", (0.5, 2.0, 0.2)), None, upper="shin", lower="foot")
    leg, foot_chain = obj.two_bone_ik.chains
    bpy.context.view_layer.update()
    assert leg.status == ""
    assert foot_chain.state == "ERROR" and "'shin'" in foot_chain.status
    assert not foot_chain.reachable
    assert_close(world_tail(obj, "shin"), (1.2, 0, 0.5), 2e-5)
    # The first chain keeps the bone, enabled or not (as a bone's constraint belongs to its stack).
    leg.enabled = False
    bpy.context.view_layer.update()
    assert foot_chain.state == "ERROR"
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_remove(chain="shin") == {"FINISHED"}
    update_mechanism(obj)
    bpy.context.view_layer.update()
    assert obj.two_bone_ik.chains[0].status == "No pole: the joint bends as in the rest pose"

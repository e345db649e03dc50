# SPDX-License-Identifier: GPL-3.0-or-later
"""Bake: pose.two_bone_ik_bake keys the solve so the animation plays without the extension.

Slotted actions, re-baking part of a range and continuity across frames, with their right values;
baking then disabling gives the same pose on every frame to 1e-5 m; undo; cancelling changes nothing.
"""

import itertools
import math
import re

import bpy
import pytest
from blender_rig import (
    BASE_POLE,
    BASE_SHIN,
    BASE_TARGET,
    BASE_THIGH,
    add_chain,
    add_chain_at,
    assert_close,
    base_rig,
    expected_world,
    fcurves,
    key_setting,
    keyframe_snapshot,
    make_empty,
    make_leg,
    make_leg_with_foot,
    make_legs,
    package,
    world_head,
    world_tail,
)
from mathutils import Matrix

TOLERANCE = 1e-5  # metres, on chains about 2 m long


def key_location(obj, frames_locations, interpolation: str = "BEZIER") -> None:
    """Key ``obj.location`` at each (frame, location)."""
    for frame, location in frames_locations:
        obj.location = location
        obj.keyframe_insert("location", frame=frame)
    for fcurve in fcurves(obj):
        for point in fcurve.keyframe_points:
            point.interpolation = interpolation


def live_positions(obj, frames, bones=("thigh", "shin")) -> dict:
    """World (head, tail) of ``bones`` per frame, as the live driver solves them."""
    positions = {}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        bpy.context.view_layer.update()
        positions[frame] = [(world_head(obj, bone), world_tail(obj, bone)) for bone in bones]
    return positions


def assert_plays_like(obj, live: dict, bones=("thigh", "shin")) -> None:
    """With the chain disabled, every frame shows the pose the live driver solved, to 1e-5 m."""
    assert not any(chain.enabled for chain in obj.two_bone_ik.chains)
    for frame, expected in live.items():
        bpy.context.scene.frame_set(frame)
        bpy.context.view_layer.update()
        for bone, (head, tail) in zip(bones, expected, strict=True):
            assert_close(world_head(obj, bone), head, TOLERANCE)
            assert_close(world_tail(obj, bone), tail, TOLERANCE)


def run_bake(obj, **properties):
    with bpy.context.temp_override(active_object=obj, object=obj):
        return bpy.ops.pose.two_bone_ik_bake(**properties)


def rotation_curves(obj, bone: str) -> list:
    pose_bone = obj.pose.bones[bone]
    path = pose_bone.path_from_id(package().animation.bake.rotation_channel(pose_bone.rotation_mode)[0])
    return sorted(
        (fcurve for fcurve in fcurves(obj) if fcurve.data_path == path), key=lambda f: f.array_index
    )


def key_frames(fcurve) -> list[float]:
    return [point.co.x for point in fcurve.keyframe_points]


def test_bake_plays_the_live_pose_on_every_frame(scene):
    """Baking the scene range keys every frame; disabled, each frame shows the live solve to 1e-5 m."""
    obj, _ = base_rig()
    target = bpy.data.objects["Target"]
    key_location(target, [(1, (0.5, 0, 0.5)), (10, (1.9, 0.3, 0.2)), (20, (0.2, -0.4, 1.1))])
    scene.frame_start, scene.frame_end = 1, 20
    scene.frame_set(7)
    live = live_positions(obj, range(1, 21))
    scene.frame_set(7)
    assert run_bake(obj) == {"FINISHED"}
    assert scene.frame_current == 7
    for bone in ("thigh", "shin"):
        curves = rotation_curves(obj, bone)
        assert len(curves) == 4
        for fcurve in curves:
            assert key_frames(fcurve) == [float(frame) for frame in range(1, 21)]
    assert_plays_like(obj, live)


def test_bake_plays_animated_twist_and_softness(scene):
    """Keyed twist and softness (and a target sliding out of reach): the baked keys play the live
    solve of every frame."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    key_location(bpy.data.objects["Target"], [(1, (0.5, 0, 0.5)), (12, (3.0, 0.5, 0.2))])
    for frame, twist, softness in ((1, 0.0, 0.0), (12, 1.2, 0.4)):
        chain.twist, chain.softness = twist, softness
        key_setting(chain, "twist", frame)
        key_setting(chain, "softness", frame)
    live = live_positions(obj, range(1, 13))
    assert run_bake(obj, frame_start=1, frame_end=12) == {"FINISHED"}
    assert_plays_like(obj, live)


def test_bake_then_disable_matches_out_of_reach_and_euler(scene):
    """An unreachable stretch and Euler bones bake to the same pose as the live clamp: the base rig
    with its bones in XYZ Euler before the chain is added."""
    obj = make_leg(thigh=BASE_THIGH, shin=BASE_SHIN)
    for pose_bone in obj.pose.bones:
        pose_bone.rotation_mode = "XYZ"
    add_chain_at(obj, BASE_TARGET, BASE_POLE)
    target = bpy.data.objects["Target"]
    key_location(target, [(1, (1.2, 0, 0.5)), (12, (3.0, 1.0, -1.0))])
    live = live_positions(obj, range(1, 13))
    assert not obj.two_bone_ik.chains[0].reachable  # frame 12 is out of reach
    assert run_bake(obj, frame_start=1, frame_end=12) == {"FINISHED"}
    assert len(rotation_curves(obj, "thigh")) == 3
    assert_plays_like(obj, live)


def test_baked_slot_is_bound(scene):
    """The baked slot is bound to the armature, so the keys play: every frame shows the live solve."""
    obj, _ = base_rig()
    target = bpy.data.objects["Target"]
    key_location(target, [(1, (1.2, 0, 0.5)), (10, (1.5, 0, 0.8))])
    live = live_positions(obj, range(1, 11))
    assert run_bake(obj, frame_start=1, frame_end=10) == {"FINISHED"}
    animation = obj.animation_data
    if hasattr(animation, "action_slot"):
        slot = animation.action_slot
        assert slot is not None
        assert slot in list(animation.action.slots)
        assert obj in slot.users()
    assert_plays_like(obj, live)


def test_bake_into_an_action_that_animates_another_object(scene):
    """Baking into an action that animates the target keeps its keys and adds the armature's own slot."""
    obj, _ = base_rig()
    target = bpy.data.objects["Target"]
    key_location(target, [(1, (1.2, 0, 0.5)), (10, (1.5, 0, 0.8))])
    action = target.animation_data.action
    target_keys = keyframe_snapshot(target)
    obj.animation_data_create().action = action
    live = live_positions(obj, range(1, 11))
    assert run_bake(obj, frame_start=1, frame_end=10) == {"FINISHED"}
    assert obj.animation_data.action == action
    # Without slots (4.2, 4.3) the armature's curves share the action: compare the target's own.
    after = {key: keys for key, keys in keyframe_snapshot(target).items() if not key[0].startswith("pose.")}
    assert after == target_keys
    if hasattr(obj.animation_data, "action_slot"):
        assert obj.animation_data.action_slot != target.animation_data.action_slot
        assert target.animation_data.action_slot.users() == [target]
    assert_plays_like(obj, live)
    scene.frame_set(10)
    assert_close(target.matrix_world.translation, (1.5, 0, 0.8), 1e-6)


def test_rebake_part_of_a_range(scene):
    """Re-baking 5-15 of a 1-30 bake replaces only those keys, once per frame, with the new solve."""
    obj, _ = base_rig()
    target = bpy.data.objects["Target"]
    key_location(target, [(1, (1.2, 0, 0.5)), (10, (0.9, 0.4, 0.9)), (30, (0.4, 1.0, -0.3))])
    assert run_bake(obj, frame_start=1, frame_end=30) == {"FINISHED"}
    before = {(f.data_path, f.array_index): {p.co.x: p.co.y for p in f.keyframe_points} for f in fcurves(obj)}
    location_curves = [f for f in fcurves(target) if f.data_path == "location"]
    for fcurve in location_curves:
        for point in fcurve.keyframe_points:
            if point.co.x == 10:
                point.co.y += (0.3, -0.2, 0.25)[fcurve.array_index]
                point.handle_left.y = point.handle_right.y = point.co.y
        fcurve.update()
    scene.frame_set(10)
    moved = target.matrix_world.translation.copy()

    assert run_bake(obj, frame_start=5, frame_end=15) == {"FINISHED"}
    for fcurve in fcurves(obj):
        frames = key_frames(fcurve)
        assert frames == sorted(set(frames)) == [float(frame) for frame in range(1, 31)]
        old = before[(fcurve.data_path, fcurve.array_index)]
        for point in fcurve.keyframe_points:
            if not 5 <= point.co.x <= 15:
                assert point.co.y == old[point.co.x]
    joint, end, _ = expected_world(obj, moved, bpy.data.objects["Pole"].location)
    scene.frame_set(10)
    bpy.context.view_layer.update()
    assert_close(world_tail(obj, "thigh"), joint, TOLERANCE)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)


@pytest.mark.parametrize("rotation_mode", ["XYZ", "QUATERNION"])
def test_bake_continuity(scene, rotation_mode):
    """An orbiting pole bakes with no channel jumping over 0.2 rad; frame 10.5 is on the solve ±1e-3."""
    # At frame 10.5, t = 95°: the thigh tail is (0.6 cos 95°, 0.8, 0.6 sin 95°) = (-0.0523, 0.8, 0.5977).
    # (x is negative: cos 95° < 0 on the orbit (cos t, 0.8, sin t).)
    obj = make_leg(thigh=BASE_THIGH, shin=BASE_SHIN)
    obj.pose.bones["thigh"].rotation_mode = rotation_mode
    pole = make_empty("Pole", (1, 0.8, 0))
    add_chain(obj, make_empty("Target", (0, 1.6, 0)), pole)
    orbit = []
    for frame in range(1, 38):
        angle = math.radians(10 * (frame - 1))
        orbit.append((frame, (math.cos(angle), 0.8, math.sin(angle))))
    key_location(pole, orbit, interpolation="LINEAR")
    scene.frame_set(10, subframe=0.5)
    bpy.context.view_layer.update()
    live_half = world_tail(obj, "thigh")
    expected = (0.6 * math.cos(math.radians(95)), 0.8, 0.6 * math.sin(math.radians(95)))
    assert_close(live_half, expected, 1e-5)

    assert run_bake(obj, frame_start=1, frame_end=37) == {"FINISHED"}
    for bone in ("thigh", "shin"):
        for fcurve in rotation_curves(obj, bone):
            values = [point.co.y for point in fcurve.keyframe_points]
            assert len(values) == 37
            jump = max(abs(b - a) for a, b in itertools.pairwise(values))
            assert jump <= 0.2, f"{fcurve.data_path}[{fcurve.array_index}] jumps {jump:.3f}"
    scene.frame_set(10, subframe=0.5)
    bpy.context.view_layer.update()
    assert_close(world_tail(obj, "thigh"), expected, 1e-3)


def test_rotation_values_keep_euler_and_quaternion_continuous(scene):
    """Fresh Euler angles jump a turn; baked Euler, quaternion and axis-angle values stay continuous."""
    rotation_values = package().animation.bake.rotation_values
    matrices = [Matrix.Rotation(math.radians(170 + 5 * step), 4, "Z") for step in range(5)]
    fresh = [matrix.to_euler("XYZ").z for matrix in matrices]
    assert max(abs(b - a) for a, b in itertools.pairwise(fresh)) > 6.0
    eulers = rotation_values(matrices, "XYZ")
    assert max(abs(b[2] - a[2]) for a, b in itertools.pairwise(eulers)) < 0.1
    quaternions = rotation_values(matrices, "QUATERNION")
    assert all(sum(p * q for p, q in zip(a, b, strict=True)) > 0 for a, b in itertools.pairwise(quaternions))
    axis_angles = rotation_values(matrices, "AXIS_ANGLE", previous=(math.radians(165), 0, 0, 1))
    assert max(abs(b[0] - a[0]) for a, b in itertools.pairwise(axis_angles)) < 0.1


def test_bake_keys_the_end_bone_when_it_follows_the_target(scene):
    """With End Rotation 'Target' the foot turns with the target: it is baked too and plays back."""
    obj = make_leg_with_foot()
    target = make_empty("Target", (1.2, 0, 0.5))
    chain = add_chain(obj, target, make_empty("Pole", (1.2, 0.5, 0.5)))
    chain.end_rotation = "TARGET"
    for frame, rotation in ((1, (0, 0, 0)), (8, (0.6, -0.4, 1.2))):
        target.rotation_euler = rotation
        target.keyframe_insert("rotation_euler", frame=frame)
    bones = ("thigh", "shin", "foot")
    live = live_positions(obj, range(1, 9), bones)
    assert run_bake(obj, frame_start=1, frame_end=8) == {"FINISHED"}
    assert len(rotation_curves(obj, "foot")) == 4
    assert_plays_like(obj, live, bones)


def test_bake_all_chains(scene):
    """All Chains bakes every enabled chain of the armature in one step."""
    obj = make_legs()
    for side, x in (("L", 0.2), ("R", -0.2)):
        target = make_empty(f"Target.{side}", (x + 1.0, 0, 0.5))
        add_chain(
            obj, target, make_empty(f"Pole.{side}", (x + 1.0, 0.5, 0.5)), f"thigh.{side}", f"shin.{side}"
        )
        key_location(target, [(1, (x + 1.0, 0, 0.5)), (6, (x, 1.2, 0.9))])
    obj.two_bone_ik.chains[1].name = "shin.R"
    bones = ("thigh.L", "shin.L", "thigh.R", "shin.R")
    live = live_positions(obj, range(1, 7), bones)
    assert run_bake(obj, frame_start=1, frame_end=6, all_chains=True) == {"FINISHED"}
    assert_plays_like(obj, live, bones)


def test_bake_undo_restores_the_chain_and_removes_the_keys(scene):
    """Undo after a bake: no keys, the chain enabled and solving again; redo brings the bake back."""
    obj, _ = base_rig()
    key_location(bpy.data.objects["Target"], [(1, (1.2, 0, 0.5)), (5, (0.4, 1.2, 0.6))])
    bpy.ops.ed.undo_push(message="Before")
    bpy.ops.ed.undo_push(message="Before")
    assert run_bake(obj, frame_start=1, frame_end=5) == {"FINISHED"}
    bpy.ops.ed.undo_push(message="Bake Two-Bone IK")  # the interface pushes this step after the operator
    bpy.ops.ed.undo()
    obj = bpy.data.objects["Leg"]
    assert fcurves(obj) == []
    assert obj.two_bone_ik.chains[0].enabled
    bpy.ops.ed.redo()
    obj = bpy.data.objects["Leg"]
    assert not obj.two_bone_ik.chains[0].enabled
    assert all(len(fcurve.keyframe_points) == 5 for fcurve in fcurves(obj))


def test_cancelled_bake_changes_nothing(scene):
    """Cancelling a bake part-way (Esc) keys nothing and puts back the chains and the frame."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    chain.enabled = False
    scene.frame_set(3)
    job = package().animation.bake.BakeJob(bpy.context, obj, [chain.name], 1, 20)
    assert chain.enabled  # a re-bake solves the chain while it runs
    for _ in range(5):
        assert not job.step(bpy.context)
    assert job.done == 5
    job.cancel(bpy.context)
    assert fcurves(obj) == []
    assert not chain.enabled
    assert scene.frame_current == 3


@pytest.mark.parametrize("operator", ["two_bone_ik_bake", "two_bone_ik_apply", "two_bone_ik_snap_fk_to_ik"])
def test_channels_under_a_constraint_before_the_chains_are_refused(scene, operator):
    """A constraint before the chain's on a chain bone (as Rigify's ORG bones carry Copy Transforms)
    is overridden while the chain is on and sets the bone once it is off: Bake, Apply and Snap FK
    to IK cannot give the chain's pose through channels there, so they say so and change nothing."""
    obj, _ = base_rig()
    control = make_empty("FK control", (0, 0, 0))
    shin = obj.pose.bones["shin"]
    copy = shin.constraints.new("COPY_ROTATION")
    copy.target = control
    shin.constraints.move(len(shin.constraints) - 1, 0)  # before the chain's (Constraint Position Last)
    bpy.context.view_layer.update()
    before = keyframe_snapshot(obj), [tuple(bone.matrix_basis.col[0]) for bone in obj.pose.bones]
    with bpy.context.temp_override(active_object=obj, object=obj):
        with pytest.raises(RuntimeError, match="before the chain's, which overrides it"):
            getattr(bpy.ops.pose, operator)()
    assert (keyframe_snapshot(obj), [tuple(bone.matrix_basis.col[0]) for bone in obj.pose.bones]) == before
    assert len(obj.two_bone_ik.chains) == 1 and obj.two_bone_ik.chains[0].enabled
    copy.mute = True  # muted, it is not in the way
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert getattr(bpy.ops.pose, operator)() == {"FINISHED"}


def test_bake_refuses_an_armature_outside_the_scene(scene):
    """Frames set in a scene do not evaluate an armature of another scene: Bake there says so and
    keys nothing."""
    obj, _ = base_rig()
    other = bpy.data.scenes.new("Other")
    with bpy.context.temp_override(scene=other, active_object=obj, object=obj):
        with pytest.raises(RuntimeError, match="is not in the scene 'Other'"):
            bpy.ops.pose.two_bone_ik_bake(frame_start=1, frame_end=3)
    assert fcurves(obj) == []


def test_bake_refuses_an_empty_range(scene):
    """An end frame before the start frame is refused with a message; nothing is keyed."""
    obj, _ = base_rig()
    with pytest.raises(RuntimeError, match="before the start frame"):
        run_bake(obj, frame_start=10, frame_end=5)
    assert fcurves(obj) == []  # no key (the armature's animation data holds the chain's drivers)
    assert obj.two_bone_ik.chains[0].enabled


def test_bake_poll_needs_a_chain(scene):
    """Bake cannot run without an armature that has a chain, and says why."""
    obj = make_leg()
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert not bpy.ops.pose.two_bone_ik_bake.poll()
        with pytest.raises(RuntimeError, match="has no two-bone IK chain"):
            bpy.ops.pose.two_bone_ik_bake()


# --- Refusals: a bake never keys a pose the chain did not solve ------------------------------------


def bone_rotation_curves(obj) -> list:
    """The F-curves keying a pose bone's rotation (what a bake writes)."""
    return [fcurve for fcurve in fcurves(obj) if fcurve.data_path.startswith("pose.bones")]


@pytest.mark.parametrize(
    "how, status",
    [
        ("target is the armature", "The target is this armature"),
        ("target bone is the shin", "The target bone 'shin' moves with the chain's own bones: a cycle"),
        ("target parented to the shin", "The target 'Target' moves with the chain's own bones: a cycle"),
        ("target bone misspelt on another rig", "Target bone 'hand_typo' not found in 'Other'"),
        ("pole is the armature", "The pole is this armature"),
    ],
)
def test_bake_refuses_a_chain_that_cannot_solve(scene, how, status):
    """A chain the network cannot solve (its status is a failure) is not baked: the bake is refused
    with the chain's status, nothing is keyed, the chain stays enabled and the frame is kept."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    target = chain.target
    if how == "target is the armature":
        chain.target = obj
    elif how == "target bone is the shin":
        chain.target, chain.target_bone = obj, "shin"
    elif how == "target parented to the shin":
        target.parent, target.parent_type, target.parent_bone = obj, "BONE", "shin"
    elif how == "target bone misspelt on another rig":
        chain.target, chain.target_bone = make_leg("Other"), "hand_typo"
    elif how == "pole is the armature":
        chain.pole = obj
    bpy.context.view_layer.update()
    scene.frame_set(3)
    with pytest.raises(RuntimeError, match=f"Chain 'shin' cannot be baked: {re.escape(status)}"):
        run_bake(obj, frame_start=1, frame_end=5)
    assert fcurves(obj) == []  # no key (the armature's animation data holds the chain's drivers)
    assert chain.enabled and scene.frame_current == 3
    with pytest.raises(package().animation.bake.BakeError, match=re.escape(status)):
        package().animation.bake.BakeJob(bpy.context, obj, ["shin"], 1, 5)


def test_bake_refuses_a_chain_that_stops_solving_on_a_frame(scene):
    """A chain that solves on frame 1 but not on frame 3 (the armature's scale is keyed to zero there)
    stops the bake at frame 3 with its status: nothing is keyed, every chain is as it was. All Chains
    is refused as a whole, and so is the step-by-step (interactive) bake."""
    obj = make_legs()
    for side, x in (("L", 0.2), ("R", -0.2)):
        target = make_empty(f"Target.{side}", (x + 1.0, 0, 0.5))
        pole = make_empty(f"Pole.{side}", (x + 1.0, 0.5, 0.5))
        add_chain(obj, target, pole, f"thigh.{side}", f"shin.{side}").name = f"shin.{side}"
    obj.two_bone_ik.chains["shin.R"].enabled = False
    for frame, scale in ((1, (1, 1, 1)), (3, (0, 0, 0))):
        obj.scale = scale
        obj.keyframe_insert("scale", frame=frame)
    for fcurve in fcurves(obj):
        for point in fcurve.keyframe_points:
            point.interpolation = "CONSTANT"
    scene.frame_set(1)
    bpy.context.view_layer.update()
    assert all(chain.status == "" for chain in obj.two_bone_ik.chains if chain.enabled)
    failure = "Chain 'shin.L' is not applied at frame 3: Armature 'Legs' has zero or invalid scale"
    with pytest.raises(RuntimeError, match=re.escape(failure)):
        run_bake(obj, frame_start=1, frame_end=5, all_chains=True)
    assert bone_rotation_curves(obj) == []
    assert [chain.enabled for chain in obj.two_bone_ik.chains] == [True, False]
    assert scene.frame_current == 1

    bake = package().animation.bake
    job = bake.BakeJob(bpy.context, obj, ["shin.R"], 1, 5)  # a re-bake of the disabled chain
    assert not job.step(bpy.context) and not job.step(bpy.context)
    with pytest.raises(bake.BakeError, match=re.escape("Chain 'shin.R' is not applied at frame 3")):
        job.step(bpy.context)
    job.cancel(bpy.context)
    assert bone_rotation_curves(obj) == []
    assert not obj.two_bone_ik.chains["shin.R"].enabled


def test_bake_refuses_frames_outside_blenders_range(scene):
    """Blender's frames end at ±1048574 (frame_set clamps beyond): a range past either end is refused
    with nothing keyed, and a range up to the last frame bakes that frame's own solve."""
    bake = package().animation.bake
    assert (bake.FRAME_MIN, bake.FRAME_MAX) == (-1048574, 1048574)
    obj, _ = base_rig()
    target = bpy.data.objects["Target"]
    key_location(target, [(1048570, (1.2, 0, 0.5)), (1048580, (0.2, 0, 0.5))], interpolation="LINEAR")
    for start, end, frame in ((1048572, 1048578, "end frame 1048578"), (-1048575, 1, "start frame -1048575")):
        refused = f"The {frame} is outside Blender's frame range -1048574 to 1048574"
        with pytest.raises(RuntimeError, match=refused):
            run_bake(obj, frame_start=start, frame_end=end)
        with pytest.raises(bake.BakeError, match="outside Blender's frame range"):
            bake.bake(bpy.context, obj, ["shin"], start, end)
    assert fcurves(obj) == []  # no key (the armature's animation data holds the chain's drivers)
    live = live_positions(obj, range(1048572, 1048575))
    assert run_bake(obj, frame_start=1048572, frame_end=1048574) == {"FINISHED"}
    assert key_frames(rotation_curves(obj, "thigh")[0]) == [1048572.0, 1048573.0, 1048574.0]
    assert_plays_like(obj, live)


def walk_strip(obj, blend_type: str = "REPLACE"):
    """A walk in the NLA: the shin keyed at frames 1 and 20 in action "Walk", pushed to an NLA strip
    that starts at scene frame 11, the active action cleared, and tweak mode entered on the strip."""
    animation = obj.animation_data_create()
    walk = bpy.data.actions.new("Walk")
    animation.action = walk
    shin = obj.pose.bones["shin"]
    for frame, angle in ((1, 0.0), (20, 0.8)):
        shin.rotation_quaternion = Matrix.Rotation(angle, 3, "X").to_quaternion()
        shin.keyframe_insert("rotation_quaternion", frame=frame)
    track = animation.nla_tracks.new()
    strip = track.strips.new("Walk", 11, walk)
    strip.blend_type = blend_type
    animation.action = None
    animation.nla_tracks.active = track
    strip.select = True
    animation.use_tweak_mode = True
    return walk


def test_bake_in_nla_tweak_mode_keys_the_strips_own_time(scene):
    """Baking scene frames 11 to 20 while tweaking a strip that starts at 11 keys the action at its
    own frames 1 to 10; out of tweak mode, with the chain off, frames 11 to 20 play the live solve."""
    obj, _ = base_rig()
    target = obj.two_bone_ik.chains[0].target
    key_location(target, [(11, (1.2, 0.0, 0.5)), (20, (0.4, 0.6, 1.1))])
    walk = walk_strip(obj)
    frames = range(11, 21)
    live = live_positions(obj, frames)
    assert run_bake(obj, frame_start=11, frame_end=20) == {"FINISHED"}
    assert obj.animation_data.action == walk  # the keys went into the tweaked action
    for bone in ("thigh", "shin"):
        for fcurve in rotation_curves(obj, bone):
            frames = key_frames(fcurve)
            assert [frame for frame in frames if frame <= 10] == [float(f) for f in range(1, 11)]
            assert not [frame for frame in frames if 10 < frame < 20]
    obj.animation_data.use_tweak_mode = False
    assert_plays_like(obj, live)


@pytest.mark.parametrize("blend_type", ["ADD", "COMBINE"])
def test_bake_over_nla_strips_refuses_a_blend_it_cannot_reproduce(scene, blend_type):
    """The active action adds or combines over an NLA strip below it: the bake refuses with the
    reason and writes nothing."""
    obj, _ = base_rig()
    walk_strip(obj)
    obj.animation_data.use_tweak_mode = False
    obj.animation_data.action = bpy.data.actions.new("Layer")
    obj.animation_data.action_blend_type = blend_type
    before = keyframe_snapshot(obj)
    with pytest.raises(RuntimeError, match=f"blends by {blend_type.title()}"):
        run_bake(obj, frame_start=1, frame_end=5)
    assert keyframe_snapshot(obj) == before


@pytest.mark.parametrize(
    "layout, reason",
    [
        ("repeated strip", "repeats 2 times"),
        ("blend-in", "varying influence or time"),
        ("action used by two strips", "is used by 2 NLA strips"),
        ("track above plays", "is below an NLA track that plays during the range"),
    ],
)
def test_bake_in_tweak_mode_refuses_strips_keys_cannot_reproduce(scene, layout, reason):
    """In tweak mode: a repeated strip, a strip blending in, an action used by two strips, or a
    track above that plays over the range would each make the keys play back something else: the
    bake refuses with the reason and writes nothing."""
    obj, _ = base_rig()
    walk = walk_strip(obj)
    animation = obj.animation_data
    animation.use_tweak_mode = False
    track = animation.nla_tracks[0]
    strip = track.strips[0]
    if layout == "repeated strip":
        strip.repeat = 2.0
    elif layout == "blend-in":
        strip.blend_in = 4.0
    elif layout == "action used by two strips":
        track.strips.new("Walk again", 40, walk)
    else:
        above = animation.nla_tracks.new()
        above.strips.new("Over", 11, bpy.data.actions.new("Over"))
    animation.nla_tracks.active = track
    strip.select = True
    animation.use_tweak_mode = True
    before = keyframe_snapshot(obj)
    with pytest.raises(RuntimeError, match=reason):
        run_bake(obj, frame_start=11, frame_end=20)
    assert keyframe_snapshot(obj) == before

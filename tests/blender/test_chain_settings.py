# SPDX-License-Identifier: GPL-3.0-or-later
"""The rigger's settings and the honest readouts: twist, softness, bone targets and poles at a
Head/Tail point, shortfall and its cause under influence, softness and clamps, Rest Position.

Each setting is checked on the evaluated world-space pose against the solver with the same
setting (docs/contract.md D9, D10).
"""

import itertools
import math

import bpy
import pytest
from blender_rig import (
    add_chain,
    assert_close,
    base_rig,
    expected_world,
    leg_with_chain,
    make_armature,
    make_empty,
    make_leg_with_foot,
    package,
    pose_snapshot,
    solve_miss,
    update_mechanism,
    user_bones,
    world_head,
    world_tail,
)
from mathutils import Vector

TOLERANCE = 2e-5
TARGET, POLE = (0.2, 0.3, 0.3), (0.0, 1.0, 0.5)


def leg(target=TARGET, pole=POLE):
    """The default leg (hip (0,0,1), knee (0,0.05,0.5), ankle at the origin) with a chain
    (blender_rig.leg_with_chain), updated once more; ``pole`` None for none. Solved."""
    obj, chain = leg_with_chain(target=target, pole=pole)
    bpy.context.view_layer.update()
    return obj, chain


def update():
    bpy.context.view_layer.update()
    bpy.context.view_layer.update()


def bend_axis(obj) -> Vector:
    """The evaluated shin's X axis in world space (its hinge, which follows the bend plane)."""
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return (
        evaluated.matrix_world.to_3x3() @ evaluated.pose.bones["shin"].matrix.to_3x3().col[0]
    ).normalized()


@pytest.mark.parametrize("twist", [0.4, -1.2, math.pi])
def test_twist_turns_the_knee_about_the_root_target_axis(scene, twist):
    """The knee is where the solver puts it with that twist: turned by exactly the angle about
    hip -> target, at the same distance from that axis; the ankle stays on the target."""
    obj, chain = leg()
    knee_before = world_head(obj, "shin").copy()
    chain.twist = twist
    update()
    joint, end, reachable = expected_world(obj, TARGET, POLE, twist=twist)
    assert reachable and chain.reachable and chain.state == "OK"
    assert_close(world_head(obj, "shin"), joint, TOLERANCE)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)
    hip, axis = Vector((0, 0, 1)), (Vector(TARGET) - Vector((0, 0, 1))).normalized()
    before, after = knee_before - hip, world_head(obj, "shin") - hip
    before -= before.dot(axis) * axis
    after -= after.dot(axis) * axis
    assert after.length == pytest.approx(before.length, abs=TOLERANCE)
    angle = math.atan2(before.cross(after).dot(axis), before.dot(after))
    assert math.remainder(angle - twist, math.tau) == pytest.approx(0.0, abs=1e-4)


def test_a_straight_twisted_leg_keeps_turning_its_hinge_as_it_straightens(scene):
    """Sliding the target out of reach with a twist of 50 degrees: the shin's hinge axis never
    jumps (the straight leg's roll comes from the twisted pole side, as the bent one's does), and
    the straight leg's hinge is turned 50 degrees from the untwisted straight leg's."""
    obj, chain = leg(target=(0.0, 0.0, 0.2), pole=(0.0, 1.0, 0.5))
    chain.twist = math.radians(50)
    axes = []
    for step in range(40):
        chain.target.location = (0.0, 0.0, 0.25 - step * 0.01)  # reach is about 1.0: straight from z = 0
        update()
        axes.append(bend_axis(obj))
    assert max(a.angle(b) for a, b in itertools.pairwise(axes)) < math.radians(5)
    twisted = axes[-1]
    chain.twist = 0.0
    update()
    assert twisted.angle(bend_axis(obj)) == pytest.approx(math.radians(50), abs=1e-3)


def test_twist_is_animatable(scene):
    """Keyed twist (on the lower bone, settings.path): each frame poses the knee as the
    solver does with that frame's value."""
    obj, chain = leg()
    owner, path = package().chain.settings.path(chain, "twist")
    assert owner == obj.pose.bones["shin"]
    for frame, value in ((1, 0.0), (11, 1.0)):
        chain.twist = value
        owner.keyframe_insert(path, frame=frame)
    scene.frame_set(6)
    update()
    assert chain.twist == pytest.approx(0.5, abs=1e-6)
    joint, _, _ = expected_world(obj, TARGET, POLE, twist=chain.twist)
    assert_close(world_head(obj, "shin"), joint, TOLERANCE)


@pytest.mark.parametrize("softness", [0.1, 0.3])
def test_softness_stops_the_end_short_and_says_so(scene, softness):
    """A target at full reach: the ankle stops where the solver's soft curve puts it, short of the
    target by at most softness x reach / e; reachable stays the plain solve's, the shortfall is the
    world distance and its cause is Softness."""
    obj, chain = leg()
    reach = 2 * (Vector((0, 0.05, 0.5)) - Vector((0, 0, 1))).length  # both bones ~0.5025
    target = Vector((0, 0, 1)) + Vector((0.3, 0.4, -1.0)).normalized() * reach
    chain.target.location = target
    chain.softness = softness
    update()
    joint, end, reachable = expected_world(obj, target, POLE, softness=softness)
    assert_close(world_head(obj, "shin"), joint, TOLERANCE)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)
    assert reachable and chain.reachable
    shortfall = (world_tail(obj, "shin") - target).length
    assert 0.0 < shortfall <= softness * reach / math.e + TOLERANCE
    assert chain.shortfall == pytest.approx(shortfall, abs=TOLERANCE)
    assert chain.shortfall_cause == "SOFTNESS"
    assert package().ui.status.chain_state(bpy.context, chain).kind == "SOFTNESS"


@pytest.mark.parametrize("head_tail", [0.0, 0.5, 1.0])
def test_bone_target_and_pole_at_head_tail(scene, head_tail):
    """A target bone and a pole bone of a control armature: the ankle reaches the point of the target
    bone Head/Tail picks, and the knee bends toward the pole bone's point, as the solver does."""
    controls = make_armature(
        "Controls",
        [
            ("ik", (0.2, 0.3, 0.1), (0.2, 0.3, 0.5), None, False),
            ("pole", (0.0, 2.0, 0.5), (0.5, 1.0, 0.5), None, False),
        ],
    )
    obj, chain = leg()
    chain.target, chain.target_bone, chain.target_head_tail = controls, "ik", head_tail
    chain.pole, chain.pole_bone, chain.pole_head_tail = controls, "pole", head_tail
    update()
    target = Vector((0.2, 0.3, 0.1 + 0.4 * head_tail))
    pole = Vector((0.0, 2.0, 0.5)).lerp(Vector((0.5, 1.0, 0.5)), head_tail)
    joint, end, _ = expected_world(obj, target, pole)
    assert chain.state == "OK", chain.status
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)
    assert_close(world_head(obj, "shin"), joint, TOLERANCE)
    assert chain.shortfall_cause == "NONE" and chain.shortfall < TOLERANCE


@pytest.mark.parametrize("influence, far", [(0.5, False), (0.0, False), (0.5, True)])
def test_shortfall_is_the_world_distance_whatever_the_cause(scene, influence, far):
    """Influence below 1 blends toward the FK pose: the shortfall is the evaluated ankle's world
    distance to the target (not 0), reachable is the solve's reach, and the cause is Influence."""
    obj, chain = leg(target=(0.0, 2.0, 0.5) if far else TARGET)
    chain.influence = influence
    update()
    target = chain.target.matrix_world.translation
    distance = (world_tail(obj, "shin") - target).length
    assert distance > 0.1
    assert chain.shortfall == pytest.approx(distance, abs=TOLERANCE)
    assert chain.reachable is (not far)
    assert chain.shortfall_cause == "INFLUENCE"
    assert package().ui.status.chain_state(bpy.context, chain).kind == "INFLUENCE"
    chain.influence = 1.0
    update()
    assert chain.shortfall_cause == ("TOO_FAR" if far else "NONE")


def test_rest_position_is_a_state_not_a_reach(scene):
    """Rest Position: the chain's state and status say so, its shortfall's cause is Rest Position,
    the overlay draws nothing for it; posing again solves again."""
    obj, chain = leg()
    obj.data.pose_position = "REST"
    update()
    assert chain.state == "REST" and "Rest Position" in chain.status
    assert chain.shortfall_cause == "REST"
    assert package().ui.status.chain_state(bpy.context, chain).kind == "REST"
    assert package().ui.overlay.overlay_lines(bpy.context) == []
    obj.data.pose_position = "POSE"
    update()
    assert chain.state == "OK" and chain.status == ""
    _, end, _ = expected_world(obj, TARGET, POLE)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)


def test_state_is_read_only(scene):
    """chain.state is a readout of the evaluated pose; a script cannot set it."""
    _, chain = leg()
    with pytest.raises(AttributeError):
        chain.state = "ERROR"


@pytest.mark.parametrize("setting", ["twist", "softness"])
def test_a_setting_that_is_not_a_number_is_an_error_and_recovers(scene, setting):
    """NaN typed into twist or softness by script: the chain's state is ERROR naming the setting,
    the animator's channels are untouched, and it solves again once the value is fixed.
    (Rewritten: the last pose is no longer kept. Blender evaluates the network itself and shows
    what its drivers give for a NaN; they must not stop on it. The batched variant is gone.)"""
    obj, chain = leg()
    channels = pose_snapshot(obj, user_bones(obj))
    setattr(chain, setting, math.nan)
    chain.target.location = (0.1, 0.3, 0.2)
    update()
    assert chain.state == "ERROR" and setting.capitalize() in chain.status, chain.status
    assert pose_snapshot(obj, user_bones(obj)) == channels
    setattr(chain, setting, 0.0)
    update()
    assert chain.state == "OK"
    _, end, _ = expected_world(obj, (0.1, 0.3, 0.2), POLE)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)


def test_a_non_finite_network_pose_is_rewritten_or_reported(scene):
    """A network bone holding NaN (a broken file, a script): a driven channel (the hinge bone's
    angle) is rewritten by its driver on the next update; an undriven one (a location, the solved
    upper bone's rotation) is an edited network, which the chain reports (never a silent NaN pose)
    until Update Mechanism rebuilds it, with the roll back at 0: ERROR, "keyed or turned", since
    every network bone's own channels are checked against what the build set (they were
    OFF_TARGET, from the pose's miss, until an attack on the network found a turn the joints do
    not show). (Rewritten: Blender
    evaluates the network itself, so nothing of the extension rewrites the mechanism bones; the
    batched variant is gone. The rolls are the lower bone's properties now: the solved upper bone's
    channel is a quaternion with no roll.)"""
    obj, chain = leg()
    _, end, _ = expected_world(obj, TARGET, POLE)
    obj.pose.bones["MCH-IK-shin-hinge"].rotation_euler[0] = math.nan
    update()
    assert chain.state == "OK", chain.status
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)
    for bone, path, value in (
        ("MCH-IK-shin-roll", "location", (math.nan, 0.0, 0.0)),
        ("MCH-IK-thigh", "rotation_quaternion", (math.nan, 0.0, 1.0, 0.0)),
    ):
        setattr(obj.pose.bones[bone], path, value)
        update()
        assert chain.state == "ERROR" and "keyed or turned" in chain.status, chain.status
        update_mechanism(obj)
        update()
        chain = obj.two_bone_ik.chains[0]
        assert chain.state == "OK", chain.status
        assert_close(world_tail(obj, "shin"), end, TOLERANCE)


@pytest.mark.parametrize(
    "target, softness, cause",
    [((0.0, 2.0, 0.5), 0.0, "TOO_FAR"), (None, 0.3, "SOFTNESS"), (TARGET, 0.0, "NONE")],
    ids=["out-of-reach", "soft", "on-target"],
)
def test_a_constraint_that_changes_nothing_changes_no_readout(scene, target, softness, cause):
    """A Limit Rotation on the shin that limits nothing: the readouts are those of the plain chain
    (reach, softness), not "constraints move the chain"."""
    obj, chain = leg()
    obj.pose.bones["shin"].constraints.new("LIMIT_ROTATION")
    if target is None:
        reach = 2 * (Vector((0, 0.05, 0.5)) - Vector((0, 0, 1))).length
        target = Vector((0, 0, 1)) + Vector((0.3, 0.4, -1.0)).normalized() * reach
    chain.target.location = target
    chain.softness = softness
    for _ in range(3):
        update()
        assert chain.state == "OK", chain.status
        assert chain.shortfall_cause == cause
        assert chain.reachable is (cause != "TOO_FAR")


def test_the_chains_own_mechanism_bone_as_target_is_a_status(scene):
    """A mechanism bone picked as the target (it follows the solve) is refused with a status."""
    obj, chain = leg()
    chain.target, chain.target_bone = obj, "MCH-IK-shin"
    update()
    assert chain.state == "ERROR" and "mechanism bone" in chain.status


@pytest.mark.parametrize("twist", [1e6, 1e15])
def test_a_twist_of_many_turns_is_solved_or_reported(scene, twist):
    """A huge twist on a bent leg: the knee is where the solver puts it, or the chain says it is
    off its solve; never a silent wrong knee. (Rewritten: the exact and batched paths it compared
    are gone. The network reads the twist through a float32 driver variable, which cannot hold
    1e15 to the radian.)"""
    obj, chain = leg()
    chain.twist = twist
    update()
    joint, end, _ = expected_world(obj, TARGET, POLE, twist=twist)
    assert_close(world_tail(obj, "shin"), end, TOLERANCE)
    if chain.state == "OK":
        assert_close(world_head(obj, "shin"), joint, TOLERANCE)
    else:
        assert chain.state == "OFF_TARGET", chain.status
        assert (world_head(obj, "shin") - joint).length > 1e-4 * 1.005


def test_changing_target_or_pole_keeps_what_the_rigger_set_on_end_rotation(scene):
    """End Rotation's Copy Rotation follows a new target or pole in place, as a constraint's own
    target field would: what the rigger set on it (an axis left out) stays; Update Mechanism
    makes it to its spec again."""
    obj = make_leg_with_foot()
    chain = add_chain(obj, make_empty("Target", (0.6, 0.3, 0.4)), make_empty("Pole", (0.6, 1.0, 0.5)))
    chain.end_rotation = "TARGET"
    end_rotation = obj.pose.bones["foot"].constraints["Two-Bone IK End Rotation"]
    end_rotation.use_y = False
    chain.pole = make_empty("Other pole", (0.6, -1.0, 0.5))
    chain.target = make_empty("Other target", (0.5, 0.2, 0.3))
    end_rotation = obj.pose.bones["foot"].constraints["Two-Bone IK End Rotation"]
    assert not end_rotation.use_y and end_rotation.target == chain.target
    update_mechanism(obj)
    assert obj.pose.bones["foot"].constraints["Two-Bone IK End Rotation"].use_y


def test_end_rotation_turned_off_on_one_chain_leaves_the_next_chains_drivers_working(scene):
    """Switching End Rotation back to FK removes its constraint's driver outside Edit Mode: the
    armature's other chains keep valid drivers and solve at the next update (Blender evaluates an
    armature's drivers by position in its evaluated copy, which the removal has to refresh)."""
    obj = make_armature(
        "Legs",
        [
            (f"{part}{side}", head, tail, parent, connected)
            for side, x in ((".L", 0.2), (".R", -0.2))
            for part, head, tail, parent, connected in (
                ("thigh", (x, 0, 1), (x, 0.05, 0.5), None, False),
                ("shin", (x, 0.05, 0.5), (x, 0, 0), f"thigh{side}", True),
                ("foot", (x, 0, 0), (x, -0.2, 0), f"shin{side}", True),
            )
        ],
    )
    for side, x in ((".L", 0.2), (".R", -0.2)):
        target, pole = make_empty(f"Target{side}", (x, 0.2, 0.2)), make_empty(f"Pole{side}", (x, 1, 0.5))
        add_chain(obj, target, pole, f"thigh{side}", f"shin{side}")
        if side == ".L":  # its End Rotation driver comes before the next chain's drivers
            obj.two_bone_ik.chains[0].end_rotation = "TARGET"
            update()
    obj.two_bone_ik.chains[0].end_rotation = "FK"
    update()
    for chain in obj.two_bone_ik.chains:
        chain.target.location.z += 0.1
    update()
    assert all(fcurve.driver.is_valid for fcurve in obj.animation_data.drivers)
    for chain in obj.two_bone_ik.chains:
        assert chain.state == "OK", chain.status
        assert solve_miss(obj, chain) < TOLERANCE


@pytest.mark.parametrize(
    ("key", "value", "named"), [("IK Twist", 0.4, "twist"), ("IK Influence", 0.5, "influence")]
)
def test_a_setting_a_script_wrote_without_an_update_is_named(scene, key, value, named):
    """A custom property set from Python tags nothing, so the drivers have not read it: the status
    names the setting and the remedy, not an edited network; after obj.update_tag() all is well."""
    obj, chain = base_rig()
    obj.pose.bones["shin"][key] = value
    bpy.context.view_layer.update()
    assert chain.state == "OFF_TARGET"
    assert f"its {named} changed since Blender last evaluated the rig" in chain.status
    assert "obj.update_tag()" in chain.status and "network was edited" not in chain.status
    obj.update_tag()
    bpy.context.view_layer.update()
    assert chain.state == "OK", chain.status

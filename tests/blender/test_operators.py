# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain operators through bpy.ops: add (selection, mirror), remove, snap, select, undo.

Each runs in real Blender with a context override and is checked on the resulting data and on
evaluated world positions. Undo: background Blender pushes no undo step after an operator called
from Python, so each undo test pushes the step the interface would push, then undoes and redoes it.
"""

import re

import bpy
import pytest
from blender_rig import (
    BASE_SHIN,
    BASE_THIGH,
    add_chain,
    assert_close,
    assert_console_clean,
    base_rig,
    fcurves,
    is_selected,
    key_setting,
    leg_bones,
    make_armature,
    make_empty,
    make_leg,
    make_leg_with_foot,
    make_legs,
    package,
    pose_snapshot,
    run,
    select_only,
    set_mode,
    user_bones,
    world_head,
    world_tail,
)
from mathutils import Euler, Matrix, Vector

TOLERANCE = 1e-5  # metres, on chains about 2 m long


def bone_positions(obj) -> dict:
    """World (head, tail) and armature-space pose matrix of every bone of the animator's rig (not the
    chains' mechanism bones, which only carry the solve), evaluated."""
    bpy.context.view_layer.update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    return {
        bone.name: (
            world_head(obj, bone.name),
            world_tail(obj, bone.name),
            Matrix(evaluated.pose.bones[bone.name].matrix),
        )
        for bone in user_bones(obj)
    }


def fk_positions(obj, chain) -> dict:
    """:func:`bone_positions` with ``chain`` disabled (its constraints off): the animator's FK pose."""
    enabled = chain.enabled
    chain.enabled = False
    try:
        return bone_positions(obj)
    finally:
        chain.enabled = enabled
        bpy.context.view_layer.update()


MECHANISM_CONSTRAINTS = ("Two-Bone IK", "Two-Bone IK End Rotation")


def unconstrained_positions(obj) -> dict:
    """:func:`bone_positions` with the chains' constraints muted: the animator's FK pose, measured
    without the chain's settings (a chain whose bone field is cleared no longer reaches its root
    bone's Enabled)."""
    constraints = [
        constraint
        for pose_bone in obj.pose.bones
        for constraint in pose_bone.constraints
        if constraint.name in MECHANISM_CONSTRAINTS and constraint.enabled
    ]
    for constraint in constraints:
        constraint.enabled = False
    try:
        return bone_positions(obj)
    finally:
        for constraint in constraints:
            constraint.enabled = True
        bpy.context.view_layer.update()


def mechanism_parts(obj) -> tuple[list, list, list]:
    """What the chains add to ``obj``, sorted: the network bones ("MCH-IK-..."), the chains'
    constraints on the chain bones as (bone, constraint name), and the data paths of the
    armature's drivers but those on network bones that exist (the network's own workings, which
    go with its bones; a driver left on a removed bone is listed)."""
    bones = sorted(bone.name for bone in obj.data.bones if bone.name.startswith("MCH-IK-"))
    constraints = sorted(
        (pose_bone.name, constraint.name)
        for pose_bone in obj.pose.bones
        for constraint in pose_bone.constraints
        if constraint.name in MECHANISM_CONSTRAINTS
    )
    animation = obj.animation_data
    network = tuple(f'pose.bones["{name}"]' for name in bones)
    drivers = sorted(
        fcurve.data_path
        for fcurve in (animation.drivers if animation is not None else ())
        if not fcurve.data_path.startswith(network)
    )
    return bones, constraints, drivers


def chain_parts(upper: str, lower: str, end: str = "") -> tuple[list, list, list]:
    """The :func:`mechanism_parts` of the chain on ``upper``/``lower``: its native network's bones
    (network/build.py's table), the Copy Transforms on both chain bones (and End Rotation's Copy
    Rotation on ``end`` when given) and their influence drivers."""
    names = package().network.naming.parts(upper, lower)
    constraints = [(upper, "Two-Bone IK"), (lower, "Two-Bone IK")]
    if end:
        constraints.append((end, "Two-Bone IK End Rotation"))
    drivers = [f'pose.bones["{bone}"].constraints["{name}"].influence' for bone, name in constraints]
    return sorted(names), sorted(constraints), sorted(drivers)


def assert_same_positions(obj, before: dict, tolerance: float = TOLERANCE) -> None:
    """Every bone that was there is where it was (head and tail to ``tolerance``) and turned the same
    (roll too); bones made since (Add's control bones) are not compared."""
    now = bone_positions(obj)
    for name in before:
        head, tail, matrix = now[name]
        assert_close(head, before[name][0], tolerance)
        assert_close(tail, before[name][1], tolerance)
        difference = matrix.to_3x3() - before[name][2].to_3x3()
        turn = max(abs(value) for row in difference for value in row)
        assert turn < 1e-5, f"{name} turned by {turn:.3g}"


def push_before() -> None:
    """Undo needs two pushed steps in background before ed.undo polls True."""
    bpy.ops.ed.undo_push(message="Before")
    bpy.ops.ed.undo_push(message="Before")


def undo_and_redo(label: str, check_undone, check_redone) -> None:
    """Push the step the interface pushes after an operator, undo it and redo it, checking each."""
    bpy.ops.ed.undo_push(message=label)
    bpy.ops.ed.undo()
    check_undone()
    bpy.ops.ed.redo()
    check_redone()


# --- Add --------------------------------------------------------------------------------------------


def test_add_every_selected_lower_bone_at_once(scene):
    """Both shins and one thigh selected: one step adds a chain per shin, and no bone moves."""
    obj = make_legs(hips=True)
    obj.pose.bones["shin.L"].rotation_quaternion = Euler(
        (0.4, 0, 0)
    ).to_quaternion()  # the way the knee bends
    before = bone_positions(obj)
    select_only(obj, {"shin.L", "shin.R", "thigh.L"})
    assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"FINISHED"}
    chains = obj.two_bone_ik.chains
    assert sorted((chain.upper_bone, chain.lower_bone) for chain in chains) == [
        ("thigh.L", "shin.L"),
        ("thigh.R", "shin.R"),
    ]
    assert all(chain.target is not None and chain.pole is not None for chain in chains)
    bpy.context.view_layer.update()
    assert all(chain.status == "" and chain.reachable for chain in chains)
    assert_same_positions(obj, before)


@pytest.mark.parametrize("left, right", [(".L", ".R"), ("_l", "_r"), ("-L", "-R")])
def test_add_mirrored_chain_in_the_same_step(scene, left, right):
    """Mirror also adds the chain on the mirrored bones (.L/.R, _l/_r, -L/-R), and nothing moves."""
    obj = make_legs(left, right, hips=True)
    obj.pose.bones[f"thigh{right}"].rotation_quaternion = Euler((0, 0.3, 0.2)).to_quaternion()
    before = bone_positions(obj)
    select_only(obj, {f"shin{left}"})
    assert run(bpy.ops.pose.two_bone_ik_add, obj, mirror=True) == {"FINISHED"}
    assert [chain.lower_bone for chain in obj.two_bone_ik.chains] == [f"shin{left}", f"shin{right}"]
    assert_same_positions(obj, before)


def test_add_with_only_the_shin_selected(scene):
    """In Pose Mode with only the shin selected (no active bone), upper = thigh, lower = shin."""
    obj = make_leg()
    select_only(obj, {"shin"})
    obj.data.bones.active = None
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert [bone.name for bone in bpy.context.selected_pose_bones] == ["shin"]
        assert bpy.ops.pose.two_bone_ik_add() == {"FINISHED"}
    chain = obj.two_bone_ik.chains[0]
    assert (chain.upper_bone, chain.lower_bone) == ("thigh", "shin")
    assert is_selected(obj, "shin")


def test_add_poll_in_object_mode_is_false_and_says_why(scene):
    """Headless in Object Mode (selected_pose_bones is None), poll is False without raising and says
    to enter Pose Mode."""
    obj = make_leg()
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.context.selected_pose_bones is None
        assert not bpy.ops.pose.two_bone_ik_add.poll()
        with pytest.raises(RuntimeError, match="Pose Mode"):
            bpy.ops.pose.two_bone_ik_add()


def test_add_poll_without_a_usable_bone(scene):
    """A selected root bone (no parent) cannot be a lower bone: poll says to select the lower bone."""
    obj = make_leg()
    select_only(obj, {"thigh"})
    obj.data.bones.active = obj.data.bones["thigh"]
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert not bpy.ops.pose.two_bone_ik_add.poll()
        with pytest.raises(RuntimeError, match="lower bone"):
            bpy.ops.pose.two_bone_ik_add()


def test_add_does_not_duplicate_a_chain(scene, capfd):
    """Adding again on a bone that has a chain adds nothing and warns."""
    obj = make_leg()
    select_only(obj, {"shin"})
    assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"FINISHED"}
    assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"CANCELLED"}
    assert len(obj.two_bone_ik.chains) == 1
    assert "Already a chain on shin" in capfd.readouterr().out


@pytest.mark.parametrize("first, second", [("shin", "foot"), ("foot", "shin")])
def test_add_refuses_a_chain_sharing_a_bone(scene, capfd, first, second):
    """A chain whose upper or lower bone is already a bone of another chain is not added: it warns,
    adds no empties, and the existing chain keeps solving alone. The leg's foot ends at (0,2.5,0);
    shin and foot are bent so that a chain on either could solve."""
    obj = make_leg_with_foot(foot_tail=(0, 2.5, 0))
    for name in ("shin", "foot"):
        obj.pose.bones[name].rotation_quaternion = (0.95, 0.3, 0, 0)
    select_only(obj, {first})
    assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"FINISHED"}
    capfd.readouterr()
    objects = set(bpy.data.objects.keys())
    select_only(obj, {second})
    assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"CANCELLED"}
    assert [chain.lower_bone for chain in obj.two_bone_ik.chains] == [first]
    assert set(bpy.data.objects.keys()) == objects
    assert "two chains must not share a bone" in capfd.readouterr().out
    with pytest.raises(ValueError, match="already a bone of chain"):
        package().chain.chains.add_chain(bpy.context, obj, second)
    assert len(obj.two_bone_ik.chains) == 1


def test_add_on_a_bone_named_too_long_for_the_network_leaves_nothing(scene):
    """A lower bone whose name leaves no room for the network's bone names: Add reports it and
    cancels, with no chain and no empties left behind (a cancelled operator has no undo step)."""
    obj = make_leg_with_foot()
    set_mode(obj, "EDIT")
    obj.data.edit_bones["shin"].name = "S" * 50
    objects = set(bpy.data.objects.keys())
    select_only(obj, {"S" * 50})
    with pytest.raises(RuntimeError, match="is too long for the network's bone"):
        run(bpy.ops.pose.two_bone_ik_add, obj)
    assert not len(obj.two_bone_ik.chains)
    assert set(bpy.data.objects.keys()) == objects
    assert not [bone.name for bone in obj.data.bones if bone.name.startswith("MCH-")]


@pytest.mark.parametrize("selected", [("Leg 2",), ("Leg", "Leg 2")])
def test_add_in_multi_object_pose_mode_adds_on_each_armatures_own_selected_bones(scene, selected):
    """Two armatures in Pose Mode with bones of the same names: Add puts a chain on the selected
    bones of each armature (matched to their own armature, not by name), whichever one is active,
    and each leg keeps its pose."""
    legs = [make_leg_with_foot("Leg"), make_leg_with_foot("Leg 2")]
    legs[1].location.x = 3.0
    for leg in legs:
        leg.select_set(True)
    bpy.context.view_layer.objects.active = legs[0]
    bpy.ops.object.mode_set(mode="POSE")
    select_bone = package().compat.select_bone
    for leg in legs:
        for bone in leg.pose.bones:
            select_bone(leg, bone.name, leg.name in selected and bone.name == "shin")
    legs[0].data.bones.active = None
    before = {leg.name: world_tail(leg, "shin") for leg in legs}
    assert bpy.ops.pose.two_bone_ik_add() == {"FINISHED"}
    for leg in legs:
        assert [chain.lower_bone for chain in leg.two_bone_ik.chains] == (
            ["shin"] if leg.name in selected else []
        )
        assert_close(world_tail(leg, "shin"), before[leg.name], TOLERANCE)
        for chain in leg.two_bone_ik.chains:
            assert chain.state == "OK", chain.status


def test_add_skips_only_the_chains_sharing_a_bone(scene, capfd):
    """Mirror on foot.L: the mirrored foot.R chain would share shin.R with a leg chain, so only it is
    skipped, with a warning naming the bone and the chain; foot.L's chain is added."""
    bones = []
    for side, x in ((".L", 0.2), (".R", -0.2)):
        bones += [
            (f"thigh{side}", (x, 0, 0), (x, 1, 0), None, False),
            (f"shin{side}", (x, 1, 0), (x, 2, 0), f"thigh{side}", True),
            (f"foot{side}", (x, 2, 0), (x, 2.5, 0), f"shin{side}", True),
        ]
    obj = make_armature("Legs", bones)
    for name in ("shin.L", "shin.R", "foot.L", "foot.R"):
        obj.pose.bones[name].rotation_quaternion = (0.95, 0.3, 0, 0)
    add_chain(obj, make_empty("Target", (-0.2, 1.5, 0.5)), None, "thigh.R", "shin.R").name = "leg.R"
    bpy.context.view_layer.update()
    select_only(obj, {"foot.L"})
    assert run(bpy.ops.pose.two_bone_ik_add, obj, mirror=True) == {"FINISHED"}
    assert [(chain.upper_bone, chain.lower_bone) for chain in obj.two_bone_ik.chains] == [
        ("thigh.R", "shin.R"),
        ("shin.L", "foot.L"),
    ]
    assert "No chain added on foot.R ('shin.R' is a bone of chain 'leg.R')" in capfd.readouterr().out


def test_add_warns_about_other_constraints(scene, capfd):
    """Adding a chain on bones that carry other constraints warns about them."""
    obj = make_leg()
    constraint = obj.pose.bones["shin"].constraints.new("LIMIT_ROTATION")
    constraint.use_limit_x = True
    select_only(obj, {"shin"})
    assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"FINISHED"}
    assert "Bone shin carries other constraints" in capfd.readouterr().out


def test_add_undo_and_redo(scene):
    """Undo removes the chain and its empties; redo brings them back and the chain solves."""
    obj = make_leg()
    select_only(obj, {"shin"})
    push_before()
    assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"FINISHED"}

    def undone():
        assert len(bpy.data.objects["Leg"].two_bone_ik.chains) == 0
        assert bpy.data.objects.get("IK Target shin") is None

    def redone():
        leg = bpy.data.objects["Leg"]
        assert len(leg.two_bone_ik.chains) == 1
        leg.two_bone_ik.chains[0].target.location.x += 0.1
        bpy.context.view_layer.update()
        assert leg.two_bone_ik.chains[0].status == ""
        assert_close(world_tail(leg, "shin"), leg.two_bone_ik.chains[0].target.location, TOLERANCE)

    undo_and_redo("Add Two-Bone IK Chain", undone, redone)


# --- Remove -----------------------------------------------------------------------------------------


def test_remove_shows_the_fk_pose_and_keeps_target_and_pole(scene):
    """Removing a chain shows the animator's FK pose, exactly the bones' own channels (the chain never
    writes them, so nothing is restored), deletes its mechanism bones, constraints (End Rotation's
    too) and drivers, and keeps the target and pole by default."""
    obj = make_leg_with_foot()
    chain = add_chain(obj, make_empty("Target", (1.2, 0, 0.5)), make_empty("Pole", (1.2, 0.5, 0.5)))
    chain.end_rotation = "TARGET"
    pose_fk(obj)
    obj.pose.bones["foot"].rotation_quaternion = Euler((0.3, 0.4, -0.2)).to_quaternion()
    channels = pose_snapshot(obj, user_bones(obj))
    fk = fk_positions(obj, chain)
    solved = bone_positions(obj)
    assert chain.status == ""
    assert (solved["shin"][1] - fk["shin"][1]).length > 0.5  # the solve moves the leg
    turn = solved["foot"][2].to_3x3() - fk["foot"][2].to_3x3()
    assert max(abs(value) for row in turn for value in row) > 0.1  # and turns the foot
    assert mechanism_parts(obj) == chain_parts("thigh", "shin", end="foot")
    assert run(bpy.ops.pose.two_bone_ik_remove, obj) == {"FINISHED"}
    assert len(obj.two_bone_ik.chains) == 0
    assert bpy.data.objects.get("Target") and bpy.data.objects.get("Pole")
    assert mechanism_parts(obj) == ([], [], [])
    assert pose_snapshot(obj) == channels  # only the user's bones are left, their channels untouched
    assert_same_positions(obj, fk)
    bpy.data.objects["Target"].location = (0, 0, 1)
    assert_same_positions(obj, fk)


def test_remove_deletes_only_its_mechanism_and_unshared_empties(scene):
    """Delete Target and Pole deletes the removed chain's target but keeps a pole another chain uses;
    the removed chain's bones show their FK channels, and the other chain keeps its mechanism and
    solves. (Restore FK Pose is gone: the chain never writes the channels, so removing it shows the
    FK pose.)"""
    obj = make_legs()
    obj.pose.bones["thigh.L"].rotation_quaternion = Euler((0.3, 0, 0.1)).to_quaternion()
    channels = pose_snapshot(obj)
    fk = bone_positions(obj)
    shared = make_empty("Shared Pole", (0, 0.5, 0.5))
    add_chain(obj, make_empty("Target.L", (1.2, 0, 0.5)), shared, "thigh.L", "shin.L")
    add_chain(obj, make_empty("Target.R", (-1.2, 0, 0.5)), shared, "thigh.R", "shin.R")
    bpy.context.view_layer.update()
    assert (world_tail(obj, "shin.L") - fk["shin.L"][1]).length > 0.5  # the solve moved the leg
    obj.two_bone_ik.active_chain_index = 0
    assert run(bpy.ops.pose.two_bone_ik_remove, obj, delete_empties=True) == {"FINISHED"}
    assert bpy.data.objects.get("Target.L") is None
    assert bpy.data.objects.get("Shared Pole") is not None
    assert [chain.lower_bone for chain in obj.two_bone_ik.chains] == ["shin.R"]
    assert obj.two_bone_ik.active_chain_index == 0
    assert mechanism_parts(obj) == chain_parts("thigh.R", "shin.R")
    assert pose_snapshot(obj, user_bones(obj)) == channels
    positions = bone_positions(obj)
    for bone in ("thigh.L", "shin.L"):
        assert_close(positions[bone][0], fk[bone][0], TOLERANCE)
        assert_close(positions[bone][1], fk[bone][1], TOLERANCE)
    bpy.data.objects["Target.R"].location = (-0.5, 1.2, 0.6)
    bpy.context.view_layer.update()
    assert obj.two_bone_ik.chains[0].status == ""
    assert_close(world_tail(obj, "shin.R"), (-0.5, 1.2, 0.6), TOLERANCE)


@pytest.mark.parametrize(
    "broken", ["renamed lower bone", "deleted upper bone", "empty upper bone", "empty lower bone"]
)
def test_remove_a_broken_chain_shows_the_fk_pose(scene, broken):
    """A chain whose bone is renamed, deleted or unset can still be removed: its bones show their FK
    pose, exactly their channels, and none of its mechanism bones, constraints or drivers is left.
    (Restore FK Pose's "nothing to restore" warning is gone: the chain never writes the channels.)"""
    obj, _ = base_rig()
    pose_fk(obj)
    chain = obj.two_bone_ik.chains[0]
    if broken == "renamed lower bone":
        obj.data.bones["shin"].name = "shin.L"
    elif broken == "deleted upper bone":
        set_mode(obj, "EDIT")
        obj.data.edit_bones.remove(obj.data.edit_bones["thigh"])
        set_mode(obj, "OBJECT")
    else:
        setattr(chain, "upper_bone" if broken == "empty upper bone" else "lower_bone", "")
    bpy.context.view_layer.update()
    assert chain.status  # the readout already says the chain is broken
    fk = unconstrained_positions(obj)
    channels = pose_snapshot(obj, user_bones(obj))
    assert run(bpy.ops.pose.two_bone_ik_remove, obj) == {"FINISHED"}
    assert len(obj.two_bone_ik.chains) == 0
    assert pose_snapshot(obj, user_bones(obj)) == channels
    assert_same_positions(obj, fk)
    assert mechanism_parts(obj) == ([], [], [])


def test_remove_a_named_chain(scene):
    """The chain property picks the chain to remove instead of the active one."""
    obj, _ = base_rig()
    add_chain(obj, None, None).name = "spare"
    obj.two_bone_ik.active_chain_index = 0
    assert run(bpy.ops.pose.two_bone_ik_remove, obj, chain="spare") == {"FINISHED"}
    assert [chain.name for chain in obj.two_bone_ik.chains] == ["shin"]
    with pytest.raises(RuntimeError, match="No chain 'gone'"):
        run(bpy.ops.pose.two_bone_ik_remove, obj, chain="gone")


def test_remove_keeps_each_chains_animation(scene):
    """Removing the first chain deletes the keys and drivers on its settings and leaves the second
    chain's untouched, so it keeps playing its own twist and softness. (Rewritten: settings were
    chain properties addressed by position, ``two_bone_ik.chains[1].twist``, which Remove
    renumbered; they are now custom properties on each chain's own root bone, whose paths no
    removal changes.)"""
    obj = make_legs()
    first = add_chain(obj, make_empty("Target.L", (0.2, 1.5, 0.5)), None, "thigh.L", "shin.L")
    second = add_chain(obj, make_empty("Target.R", (-0.2, 1.5, 0.5)), None, "thigh.R", "shin.R")
    settings = package().chain.settings
    for chain, values in ((first, (0.1, 0.2)), (second, (0.7, 0.9))):
        owner, path = settings.path(chain, "twist")
        for frame, value in zip((1, 11), values, strict=True):
            chain.twist = value
            owner.keyframe_insert(path, frame=frame)
    for chain, expression in ((first, "0.5"), (second, "0.25")):
        owner, path = settings.path(chain, "softness")
        owner.driver_add(path).driver.expression = expression
    obj.two_bone_ik.active_chain_index = 0
    assert run(bpy.ops.pose.two_bone_ik_remove, obj) == {"FINISHED"}
    (remaining,) = obj.two_bone_ik.chains
    paths = sorted(
        fcurve.data_path
        for fcurves in package().compat.animation_fcurves(obj)
        for fcurve in fcurves
        if '"]["IK ' in fcurve.data_path
    )
    assert paths == [f'pose.bones["shin.R"]["IK {name}"]' for name in ("Softness", "Twist")]
    bpy.context.scene.frame_set(11)
    assert remaining.lower_bone == "shin.R"
    assert remaining.twist == pytest.approx(0.9)
    assert remaining.softness == pytest.approx(0.25)


def test_remove_undo_and_redo(scene):
    """Undo brings the chain and its empties back, solving; redo removes them again."""
    obj, _ = base_rig()
    push_before()
    assert run(bpy.ops.pose.two_bone_ik_remove, obj, delete_empties=True) == {"FINISHED"}

    def undone():
        leg = bpy.data.objects["Leg"]
        assert [chain.name for chain in leg.two_bone_ik.chains] == ["shin"]
        bpy.data.objects["Target"].location = (0.5, 1.0, 0.2)
        bpy.context.view_layer.update()
        assert_close(world_tail(leg, "shin"), (0.5, 1.0, 0.2), TOLERANCE)

    def redone():
        assert len(bpy.data.objects["Leg"].two_bone_ik.chains) == 0
        assert bpy.data.objects.get("Target") is None

    undo_and_redo("Remove Two-Bone IK Chain", undone, redone)


# --- Snap -------------------------------------------------------------------------------------------


def pose_fk(obj) -> None:
    """A bent FK pose on thigh and shin (quaternion channels); the shin turns about its X axis the
    way the hinge bends (a hyperextended knee would need a half-turn of the thigh to solve)."""
    obj.pose.bones["thigh"].rotation_quaternion = Euler((0.5, -0.2, 0.3)).to_quaternion()
    obj.pose.bones["shin"].rotation_quaternion = Euler((1.1, 0.0, 0.0)).to_quaternion()


def test_snap_ik_to_fk_then_enable_changes_nothing(scene):
    """Snap IK to FK on a disabled, hand-posed chain: enabling it then moves and turns no bone."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    chain.enabled = False
    pose_fk(obj)
    fk = bone_positions(obj)
    assert run(bpy.ops.pose.two_bone_ik_snap_ik_to_fk, obj) == {"FINISHED"}
    bpy.context.view_layer.update()
    assert_close(chain.target.matrix_world.translation, fk["shin"][1], TOLERANCE)
    root, joint, end = fk["thigh"][0], fk["shin"][0], fk["shin"][1]
    normal = (joint - root).cross(end - joint).normalized()
    pole = chain.pole.matrix_world.translation
    assert abs((pole - root).dot(normal)) < TOLERANCE
    assert (pole - root).dot(joint - root) > 0
    chain.enabled = True
    bpy.context.view_layer.update()
    assert chain.status == "" and chain.reachable
    assert_same_positions(obj, fk)


def test_snap_ik_to_fk_on_an_enabled_blended_chain(scene):
    """Snap IK to FK on a chain at influence 0.4: afterwards every influence shows the FK pose."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    pose_fk(obj)
    chain.influence = 0.0
    fk = bone_positions(obj)
    chain.influence = 0.4
    bpy.context.view_layer.update()
    assert (world_tail(obj, "shin") - fk["shin"][1]).length > 0.1
    assert run(bpy.ops.pose.two_bone_ik_snap_ik_to_fk, obj) == {"FINISHED"}
    for influence in (0.4, 1.0, 0.0):
        chain.influence = influence
        assert_same_positions(obj, fk)


def test_snap_ik_to_fk_turns_a_target_the_foot_follows(scene):
    """With End Rotation 'Target', Snap IK to FK turns the target so the foot keeps its FK rotation."""
    obj = make_leg_with_foot()
    chain = add_chain(obj, make_empty("Target", (1.2, 0, 0.5)), make_empty("Pole", (1.2, 0.5, 0.5)))
    chain.end_rotation = "TARGET"
    chain.enabled = False
    pose_fk(obj)
    obj.pose.bones["foot"].rotation_quaternion = Euler((0.3, 0.4, -0.2)).to_quaternion()
    fk = bone_positions(obj)
    assert run(bpy.ops.pose.two_bone_ik_snap_ik_to_fk, obj) == {"FINISHED"}
    chain.enabled = True
    assert_same_positions(obj, fk)


def test_snap_fk_to_ik_then_disable_changes_nothing(scene):
    """Snap FK to IK at influence 0.6: influence 0, 1 or a disabled chain all show the full solve."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    solved = bone_positions(obj)
    pose_fk(obj)
    chain.influence = 0.6
    bpy.context.view_layer.update()
    assert (world_tail(obj, "shin") - solved["shin"][1]).length > 0.1
    assert run(bpy.ops.pose.two_bone_ik_snap_fk_to_ik, obj) == {"FINISHED"}
    assert chain.influence == pytest.approx(0.6)
    for influence in (0.6, 0.0, 1.0):
        chain.influence = influence
        assert_same_positions(obj, solved)
    chain.enabled = False
    chain.target.location = (0, 0, 2)
    assert_same_positions(obj, solved)


def test_snap_fk_to_ik_with_auto_keying_keys_the_rotations(scene, monkeypatch):
    """With Auto Keying on, Snap FK to IK keys the chain bones' rotations at the current frame (with
    "Only Insert Available" off, which Blender 5.2 turns on by default)."""
    monkeypatch.setattr(bpy.context.preferences.edit, "use_keyframe_insert_available", False)
    obj, _ = base_rig()
    scene.tool_settings.use_keyframe_insert_auto = True
    scene.frame_set(4)
    assert run(bpy.ops.pose.two_bone_ik_snap_fk_to_ik, obj) == {"FINISHED"}
    keyed = {
        (fcurve.data_path, tuple(point.co.x for point in fcurve.keyframe_points)) for fcurve in fcurves(obj)
    }
    assert keyed == {
        ('pose.bones["thigh"].rotation_quaternion', (4.0,)),
        ('pose.bones["shin"].rotation_quaternion', (4.0,)),
    }


def test_snap_reports_a_chain_without_target(scene):
    """Snapping a chain that has no target changes nothing and says why."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    target = chain.target
    chain.target = None
    for operator in (bpy.ops.pose.two_bone_ik_snap_ik_to_fk, bpy.ops.pose.two_bone_ik_snap_fk_to_ik):
        with pytest.raises(RuntimeError, match="Set a target object"):
            run(operator, obj)
    assert chain.pole.location == Vector((1.2, 0.5, 0.5))
    assert target.location == Vector((1.2, 0, 0.5))


def _break_chain(obj, chain, how: str) -> None:
    """Break the base rig's chain so that its target or pole cannot be snapped (its status is ERROR)."""
    if how == "target is the armature":
        chain.target, chain.target_bone = obj, ""
    elif how == "pole is the armature":
        chain.pole, chain.pole_bone = obj, ""
    elif how == "target bone misspelt on another rig":
        chain.target, chain.target_bone = make_leg("Other"), "hand_typo"
    elif how == "pole bone misspelt on another rig":
        chain.pole, chain.pole_bone = make_leg("Other"), "knee_typo"
    elif how == "target bone is the shin":
        chain.target, chain.target_bone = obj, "shin"
    elif how == "target parented to the shin":
        target = chain.target
        target.parent, target.parent_type, target.parent_bone = obj, "BONE", "shin"
    bpy.context.view_layer.update()


BROKEN_SOURCES = [
    ("target is the armature", "The target is this armature"),
    ("pole is the armature", "The pole is this armature"),
    ("target bone misspelt on another rig", "Target bone 'hand_typo' not found in 'Other'"),
    ("pole bone misspelt on another rig", "Pole bone 'knee_typo' not found in 'Other'"),
    ("target bone is the shin", "The target bone 'shin' moves with the chain's own bones: a cycle"),
    ("target parented to the shin", "The target 'Target' moves with the chain's own bones: a cycle"),
]


def _object_state() -> dict:
    """Every object's world matrix, and every armature's pose channels (its user bones'), as plain
    values."""
    return {
        obj.name: (
            [tuple(row) for row in obj.matrix_world],
            pose_snapshot(obj, user_bones(obj)) if obj.type == "ARMATURE" else None,
        )
        for obj in bpy.data.objects
    }


@pytest.mark.parametrize("how, status", BROKEN_SOURCES)
@pytest.mark.parametrize("operator", ["snap_ik_to_fk", "snap_fk_to_ik"])
def test_snap_refuses_a_chain_it_cannot_snap_and_moves_nothing(scene, how, status, operator):
    """A target or pole the status refuses (the rig itself, a misspelt bone, a cycle): both snaps
    stop with the chain's status and move no object, no bone and no rig, with Auto Keying on too."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    chain.enabled = False
    pose_fk(obj)
    _break_chain(obj, chain, how)
    scene.tool_settings.use_keyframe_insert_auto = True
    before = _object_state()
    with pytest.raises(RuntimeError, match=re.escape(status)):
        run(getattr(bpy.ops.pose, f"two_bone_ik_{operator}"), obj)
    bpy.context.view_layer.update()
    assert _object_state() == before
    assert all(fcurves(other) == [] for other in bpy.data.objects)  # nothing keyed


def test_snap_refuses_a_zero_scale_armature(scene):
    """Snap IK to FK on an armature scaled to zero refuses with the chain's status and moves nothing."""
    obj, _ = base_rig()
    obj.scale = (1, 0, 1)
    bpy.context.view_layer.update()
    before = _object_state()
    with pytest.raises(RuntimeError, match="has zero or invalid scale"):
        run(bpy.ops.pose.two_bone_ik_snap_ik_to_fk, obj)
    assert _object_state() == before


def test_select_refuses_a_misspelt_bone(scene):
    """Select Target with a misspelt target bone on another rig says so; the rig is not selected instead."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    _break_chain(obj, chain, "target bone misspelt on another rig")
    set_mode(obj, "POSE")
    with pytest.raises(RuntimeError, match="Target bone 'hand_typo' not found in 'Other'"):
        run(bpy.ops.pose.two_bone_ik_select_target, obj)
    assert bpy.context.view_layer.objects.active == obj
    assert not bpy.data.objects["Other"].select_get()


def test_snap_undo_and_redo(scene):
    """Undo after Snap IK to FK puts the target back; redo snaps it again."""
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    chain.enabled = False
    pose_fk(obj)
    tip = bone_positions(obj)["shin"][1]
    push_before()
    assert run(bpy.ops.pose.two_bone_ik_snap_ik_to_fk, obj) == {"FINISHED"}

    def undone():
        assert_close(bpy.data.objects["Target"].location, (1.2, 0, 0.5), 1e-6)

    def redone():
        assert_close(bpy.data.objects["Target"].location, tip, TOLERANCE)

    undo_and_redo("Snap IK to FK", undone, redone)


# --- Select -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["target", "pole"])
def test_select_target_and_pole(scene, role):
    """Select Target/Pole leaves Pose Mode, selects only the empty, makes it active; the panel stays."""
    obj, _ = base_rig()
    set_mode(obj, "POSE")
    obj.select_set(True)
    operator = getattr(bpy.ops.pose, f"two_bone_ik_select_{role}")
    assert run(operator, obj) == {"FINISHED"}
    source = bpy.data.objects[role.capitalize()]
    assert obj.mode == "OBJECT"
    assert bpy.context.view_layer.objects.active == source
    assert [other.name for other in bpy.context.selected_objects] == [source.name]
    assert bpy.types.VIEW3D_PT_two_bone_ik.poll(bpy.context)


def test_select_a_pole_bone(scene):
    """A pole that is a control bone of the same rig is selected as a bone, in Pose Mode."""
    knee_pole = ("knee_pole", (1.2, 0.5, 0.5), (1.2, 0.5, 0.7), None, False)
    obj = make_armature("Leg", [*leg_bones(BASE_THIGH, BASE_SHIN[1]), knee_pole])
    chain = add_chain(obj, make_empty("Target", (1.2, 0, 0.5)), obj)
    chain.pole_bone = "knee_pole"
    select_only(obj, {"shin"})
    assert run(bpy.ops.pose.two_bone_ik_select_pole, obj) == {"FINISHED"}
    assert obj.mode == "POSE"
    assert [bone.name for bone in obj.pose.bones if is_selected(obj, bone.name)] == ["knee_pole"]
    assert obj.data.bones.active.name == "knee_pole"


def test_select_target_of_a_hidden_armature_in_pose_mode_is_a_report(scene):
    """An armature hidden in the viewport cannot leave Pose Mode: Select Target says so and changes
    nothing (no traceback)."""
    obj, _ = base_rig()
    set_mode(obj, "POSE")
    obj.hide_viewport = True
    with pytest.raises(RuntimeError, match="cannot leave Pose Mode") as raised:
        run(bpy.ops.pose.two_bone_ik_select_target, obj)
    assert "Traceback" not in str(raised.value)
    assert obj.mode == "POSE" and not bpy.data.objects["Target"].select_get()


def test_select_a_pole_bone_of_a_linked_armature_is_a_report(scene, tmp_path):
    """A pole bone of an armature linked from a library (no override) cannot be selected in Pose
    Mode: Select Pole says so before the rig leaves its mode."""
    prop = make_armature("Prop", [("ctrl", (1, -1, 0.5), (1, -1, 0.7), None, False)])
    path = str(tmp_path / "prop.blend")
    bpy.data.libraries.write(path, {prop})
    bpy.data.objects.remove(prop)
    with bpy.data.libraries.load(path, link=True) as (_, linked):
        linked.objects = ["Prop"]
    scene.collection.objects.link(linked.objects[0])
    obj, _ = base_rig()
    chain = obj.two_bone_ik.chains[0]
    chain.pole, chain.pole_bone = linked.objects[0], "ctrl"
    set_mode(obj, "POSE")
    with pytest.raises(RuntimeError, match="linked from a library") as raised:
        run(bpy.ops.pose.two_bone_ik_select_pole, obj)
    assert "Traceback" not in str(raised.value)
    assert obj.mode == "POSE" and bpy.context.view_layer.objects.active == obj


def test_select_poll_without_pole(scene):
    """Select Pole cannot run for a chain without a pole, and says so."""
    obj, _ = base_rig()
    obj.two_bone_ik.chains[0].pole = None
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_select_target.poll()
        assert not bpy.ops.pose.two_bone_ik_select_pole.poll()
        with pytest.raises(RuntimeError, match="has no pole"):
            bpy.ops.pose.two_bone_ik_select_pole()


def test_select_undo_and_redo(scene):
    """Undo after Select Target gives back the armature in Pose Mode; redo selects the target again."""
    obj, _ = base_rig()
    set_mode(obj, "POSE")
    push_before()
    assert run(bpy.ops.pose.two_bone_ik_select_target, obj) == {"FINISHED"}

    def undone():
        assert bpy.context.view_layer.objects.active.name == "Leg"
        assert bpy.data.objects["Leg"].mode == "POSE"

    def redone():
        assert bpy.context.view_layer.objects.active.name == "Target"

    undo_and_redo("Select Two-Bone IK Target", undone, redone)


# --- Every operator ---------------------------------------------------------------------------------

OPERATORS = (
    "add",
    "remove",
    "bake",
    "snap_ik_to_fk",
    "snap_fk_to_ik",
    "select_target",
    "select_pole",
)


@pytest.mark.parametrize("name", OPERATORS)
def test_operator_conventions(extension, name):
    """Each operator has Blender's naming, a tooltip, REGISTER and UNDO, and an entry in the Pose submenu
    (F3)."""
    cls = getattr(bpy.types, f"POSE_OT_two_bone_ik_{name}")
    assert cls.bl_idname == f"pose.two_bone_ik_{name}"
    assert {"REGISTER", "UNDO"} <= cls.bl_options
    assert cls.__doc__ and cls.__doc__.strip()
    assert f'"pose.two_bone_ik_{name}"' in _menu_source()


def _menu_source() -> str:
    import inspect

    return inspect.getsource(bpy.types.VIEW3D_MT_pose_two_bone_ik.draw)


def test_pose_menu_lists_the_submenu_once(extension):
    """The Pose menu carries our submenu exactly once."""
    functions = [
        f for f in bpy.types.VIEW3D_MT_pose._dyn_ui_initialize() if getattr(f, "__name__", "") == "_pose_menu"
    ]
    assert len(functions) == 1


def test_operators_refuse_a_linked_armature(scene, tmp_path):
    """On a rig linked from another file, Add Chain and Bake are refused with a clear message."""
    base_rig()
    library = tmp_path / "rig.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(library), copy=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_data_from, data_to):
        data_to.objects = ["Leg"]
    obj = data_to.objects[0]
    scene = bpy.context.scene
    scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.context.view_layer.update()
    with bpy.context.temp_override(active_object=obj, object=obj):
        for operator in (bpy.ops.pose.two_bone_ik_bake, bpy.ops.pose.two_bone_ik_remove):
            assert not operator.poll()
            with pytest.raises(RuntimeError, match="linked from a library"):
                operator()
        with pytest.raises(RuntimeError, match="linked from a library"):
            bpy.ops.pose.two_bone_ik_add()
    assert len(obj.two_bone_ik.chains) == 1


def test_remove_all_chains_takes_every_network_and_its_collection(scene):
    """Remove with All Chains: every chain, constraint, driver and network bone in one go, and the
    network's bone collection with the last chain; the legs show their own pose."""
    obj = make_legs()
    before = pose_snapshot(obj)
    for name in ("shin.L", "shin.R"):
        select_only(obj, {name})
        assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"FINISHED"}
    assert run(bpy.ops.pose.two_bone_ik_remove, obj, all_chains=True, delete_empties=True) == {"FINISHED"}
    assert not len(obj.two_bone_ik.chains)
    assert mechanism_parts(obj) == ([], [], [])
    assert obj.data.collections_all.get("Two-Bone IK Mechanism") is None
    assert obj.data.collections_all.get("IK Controls") is None  # Add's control bones went too
    bpy.context.view_layer.update()
    assert pose_snapshot(obj) == before


def test_remove_on_both_linked_duplicates_leaves_no_network_bones(scene):
    """A linked duplicate (Alt+D: one armature, two objects, a chain each) shares the network's
    bones: Remove on the duplicate keeps them for the original, which still solves; Remove on the
    original then deletes them, leaving the rigger's bones."""
    obj = make_leg_with_foot()
    chain = add_chain(obj, make_empty("Target", (0.6, 0.3, 0.4)), make_empty("Pole", (0.6, 1.0, 0.5)))
    user = sorted(bone.name for bone in obj.data.bones if not bone.name.startswith("MCH-"))
    duplicate = obj.copy()
    scene.collection.objects.link(duplicate)
    assert duplicate.data == obj.data and len(duplicate.two_bone_ik.chains) == 1
    assert run(bpy.ops.pose.two_bone_ik_remove, duplicate) == {"FINISHED"}
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_close(world_tail(obj, "shin"), (0.6, 0.3, 0.4), TOLERANCE)
    assert run(bpy.ops.pose.two_bone_ik_remove, obj) == {"FINISHED"}
    assert sorted(bone.name for bone in obj.data.bones) == user


def test_remove_on_a_linked_duplicate_keeps_its_other_chain_solving(scene):
    """Remove on a linked duplicate keeps the shared network bones and takes only the removed
    chain's drivers (outside Edit Mode): the duplicate's other chain keeps valid drivers and
    follows its target at the next update."""
    obj = make_legs(hips=True)
    for side, x in ((".L", 0.5), (".R", -0.5)):
        add_chain(
            obj,
            make_empty(f"Target{side}", (x, 1.5, 0.5)),
            make_empty(f"Pole{side}", (x, 1, 1)),
            f"thigh{side}",
            f"shin{side}",
        )
    duplicate = obj.copy()
    scene.collection.objects.link(duplicate)
    assert run(bpy.ops.pose.two_bone_ik_remove, duplicate, chain="shin.L") == {"FINISHED"}
    for chain in obj.two_bone_ik.chains:
        chain.target.location.z += 0.2
    bpy.context.view_layer.update()
    assert all(fcurve.driver.is_valid for fcurve in duplicate.animation_data.drivers)
    for each, names in ((obj, ("shin.L", "shin.R")), (duplicate, ("shin.R",))):
        assert [chain.name for chain in each.two_bone_ik.chains] == list(names)
        for chain in each.two_bone_ik.chains:
            assert chain.status == "", (each.name, chain.status)
            assert_close(world_tail(each, chain.lower_bone), chain.target.matrix_world.translation, TOLERANCE)


def test_remove_keeps_a_riggers_switch_driven_by_the_chains_influence(scene):
    """A rigger's own constraint whose influence driver reads the chain's Influence (an IK/FK
    switch) is theirs: Remove takes the chain's constraints, found by their drivers, but not it."""
    obj = make_leg_with_foot()
    chain = add_chain(obj, make_empty("Target", (0.6, 0.3, 0.4)), make_empty("Pole", (0.6, 1.0, 0.5)))
    switch = obj.pose.bones["foot"].constraints.new("COPY_LOCATION")
    switch.name = "Rigger's switch"
    driver = switch.driver_add("influence").driver
    driver.expression = "1 - ik"
    variable = driver.variables.new()
    variable.name, variable.targets[0].id = "ik", obj
    owner, path = package().chain.settings.path(chain, "influence")
    variable.targets[0].data_path = owner.path_from_id(path)
    assert run(bpy.ops.pose.two_bone_ik_remove, obj) == {"FINISHED"}
    assert [constraint.name for constraint in obj.pose.bones["foot"].constraints] == ["Rigger's switch"]


def test_remove_refused_before_anything_changes_when_edit_mode_cannot_be_entered(scene):
    """An armature whose collection is excluded from the view layer cannot enter Edit Mode to
    delete the network's bones: Remove says so and changes nothing (keys, drivers, constraints)."""
    obj = make_leg_with_foot()
    chain = add_chain(obj, make_empty("Target", (0.6, 0.3, 0.4)), make_empty("Pole", (0.6, 1.0, 0.5)))
    key_setting(chain, "influence", 1)
    collection = bpy.data.collections.new("Rig collection")
    scene.collection.children.link(collection)
    collection.objects.link(obj)
    scene.collection.objects.unlink(obj)
    before = (sorted(f.data_path for f in fcurves(obj)), {b.name: len(b.constraints) for b in obj.pose.bones})
    bpy.context.view_layer.layer_collection.children["Rig collection"].exclude = True
    with pytest.raises(RuntimeError, match="cannot enter Edit Mode"):
        run(bpy.ops.pose.two_bone_ik_remove, obj)
    assert len(obj.two_bone_ik.chains) == 1
    assert (
        sorted(f.data_path for f in fcurves(obj)),
        {b.name: len(b.constraints) for b in obj.pose.bones},
    ) == before


@pytest.mark.parametrize("mode", ["POSE", "OBJECT"])
def test_remove_all_keeps_the_riggers_constraints_on_chain_bones(scene, capfd, mode):
    """Remove with All Chains, from Pose Mode (where bones left with no constraint of their own are
    cleared in one call) and from Object Mode: a Limit Rotation the rigger put on a chain bone
    stays, with its place in the stack, every chain constraint goes, and the depsgraph never meets
    a constraint aimed at a deleted network bone."""
    obj = make_legs()
    for name in ("shin.L", "shin.R"):
        select_only(obj, {name})
        assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"FINISHED"}
    limit = obj.pose.bones["thigh.L"].constraints.new("LIMIT_ROTATION")
    limit.name = "Rigger's limit"
    capfd.readouterr()
    set_mode(obj, mode)
    assert run(bpy.ops.pose.two_bone_ik_remove, obj, all_chains=True) == {"FINISHED"}
    bpy.context.view_layer.update()
    stacks = {bone.name: [constraint.name for constraint in bone.constraints] for bone in obj.pose.bones}
    assert stacks == {name: (["Rigger's limit"] if name == "thigh.L" else []) for name in stacks}
    assert obj.mode == mode
    assert_console_clean(capfd)


def test_add_warns_when_the_new_chain_cannot_give_its_pose(scene, capfd):
    """A thigh scaled on its own channel, which the network does not read, is off the chain's
    solve: Add says so with the chain's status. (Rewritten: it was a parent's uneven scale, which
    the chain now solves exactly, docs/contract.md D6.)"""
    obj = make_armature("Leg", leg_bones(hips="hip"))
    obj.pose.bones["thigh"].scale = (1.0, 2.0, 1.0)
    select_only(obj, {"shin"})
    assert run(bpy.ops.pose.two_bone_ik_add, obj) == {"FINISHED"}
    assert "Warning: Chain 'shin': The chain is" in capfd.readouterr().out

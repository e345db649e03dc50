# SPDX-License-Identifier: GPL-3.0-or-later
"""Evaluation paths and lifecycle, in real Blender.

Every way Blender evaluates a scene shows the pose solved for that moment (depsgraph updates, frame
changes, playback-like stepping, still and animation renders), and files, undo, keyframes, linked
and overridden rigs leave the chains correct.
"""

import importlib

import addon_utils
import bpy
import pytest
from blender_rig import (
    MODULE,
    add_chain,
    add_chain_with_operator,
    assert_close,
    assert_console_clean,
    chain_length,
    chain_snapshot,
    expected_handlers,
    expected_world,
    fcurves,
    handler_names,
    keyframe_snapshot,
    leg_bones,
    leg_with_chain,
    make_armature,
    make_empty,
    make_leg,
    marker_world,
    our_handlers,
    package,
    pose_snapshot,
    set_mode,
    setup_marker_render,
    user_bones,
    world_tail,
)
from mathutils import Euler, Vector

# The animated target: its x is keyed 0.5 at frame 1 and 1.9 at frame 20 (y and z fixed).
TARGET_X = {1: 0.5, 20: 1.9}
TARGET_YZ = (0.0, 0.5)
POLE = (0.0, 1.0, 0.5)
# The marker render: an orthographic view of world x, z around CENTER, SIZE metres wide.
CENTER, SIZE, RESOLUTION = (0.5, 0.5), 2.0, 256
PIXEL = SIZE / RESOLUTION


@pytest.fixture(autouse=True)
def driver_never_raises(capfd):
    """After each test: no traceback or driver error reached the console, no chain hit the catch-all."""
    yield
    assert_console_clean(capfd)


def tolerance(obj) -> float:
    return 1e-5 * chain_length(obj)


def original_tail(obj, bone: str) -> Vector:
    """World tail from the original pose bone, without triggering an evaluation."""
    return obj.matrix_world @ obj.pose.bones[bone].tail


def assert_solved(obj, target, pole, evaluate: bool = True) -> None:
    """The chain's joint and end sit where the solver puts them for world ``target`` and ``pole``.

    With ``evaluate`` False the original pose is read, so nothing is evaluated by the check itself.
    """
    joint, end, _ = expected_world(obj, target, pole)
    read = world_tail if evaluate else original_tail
    assert_close(read(obj, "thigh"), joint, tolerance(obj))
    assert_close(read(obj, "shin"), end, tolerance(obj))


def key_target(target) -> None:
    for frame, x in TARGET_X.items():
        target.location.x = x
        target.keyframe_insert("location", index=0, frame=frame)


def animated_leg():
    """The default leg with a pole and a target whose x is keyed 0.5 (frame 1) to 1.9 (frame 20)."""
    target = make_empty("Target", (TARGET_X[1], *TARGET_YZ))
    key_target(target)
    obj, chain = leg_with_chain(target=target, pole=POLE)
    return obj, target, chain.pole, chain


def target_at(target, frame: float) -> Vector:
    """The target's world position at ``frame``, from its F-curve (independent of the depsgraph)."""
    (curve,) = fcurves(target)
    return Vector((curve.evaluate(frame), *TARGET_YZ))


def test_every_depsgraph_update_path_solves_the_edit(scene):
    """view_layer.update(), evaluated_depsgraph_get() and depsgraph.update() each solve a target edit."""
    obj = make_leg()
    target = make_empty("Target", (0.3, 0.1, 0.4))
    pole = make_empty("Pole", POLE)
    chain = add_chain(obj, target, pole)
    paths = (
        lambda: bpy.context.view_layer.update(),
        lambda: bpy.context.evaluated_depsgraph_get(),
        lambda: bpy.context.evaluated_depsgraph_get().update(),
    )
    for index, evaluate in enumerate(paths):
        target.location = (0.2 + 0.15 * index, -0.1, 0.3 + 0.1 * index)
        pole.location = (0.1 * index, 1.0, 0.6)
        evaluate()
        assert chain.status == ""
        assert_solved(obj, target.location, pole.location, evaluate=False)
        assert_solved(obj, target.location, pole.location)


def test_frame_set_shows_that_frame_without_lag(scene):
    """frame_set(10) gives the pose solved for the target at frame 10, not frame 9's or the rest pose."""
    obj, target, _pole, chain = animated_leg()
    scene.frame_set(1)
    scene.frame_set(10)
    _, end_10, _ = expected_world(obj, target_at(target, 10), POLE)
    _, end_9, _ = expected_world(obj, target_at(target, 9), POLE)
    assert (end_10 - end_9).length > 100 * tolerance(obj)  # a one-frame lag would show
    assert_close(target.matrix_world.translation, target_at(target, 10), 1e-6)
    assert chain.status == ""
    assert_solved(obj, target_at(target, 10), POLE, evaluate=False)
    assert_solved(obj, target_at(target, 10), POLE)
    assert_close(chain.end, end_10, tolerance(obj))


def test_frame_set_in_any_order_matches_every_frame(scene):
    """Playback-like frame_set forwards, backwards and in jumps: each frame shows its own solve
    (contract D7)."""
    obj, target, _pole, chain = animated_leg()
    frames = [*range(1, 21), *range(20, 0, -3), 17, 3, 12, 10]
    for frame in frames:
        scene.frame_set(frame)
        assert chain.status == ""
        assert_solved(obj, target_at(target, frame), POLE, evaluate=False)


def test_frame_current_and_update_stepping_solves_each_frame(scene):
    """Setting frame_current then view_layer.update() (how playback and scripts step) solves each frame."""
    obj, target, _pole, _chain = animated_leg()
    scene.frame_set(1)
    for frame in (2, 5, 6, 11, 20, 4):
        scene.frame_current = frame
        bpy.context.view_layer.update()
        assert_solved(obj, target_at(target, frame), POLE, evaluate=False)
        assert_solved(obj, target_at(target, frame), POLE)


def render_scene():
    """The animated leg with a marker cube bone-parented at the shin's tail and an orthographic
    Workbench camera."""
    obj, target, _pole, _chain = animated_leg()
    setup_marker_render(bpy.context.scene, obj, "shin", CENTER, SIZE, RESOLUTION)
    return obj, target


def assert_marker_at(path, end) -> None:
    """The rendered marker's centroid is within half a pixel of the world point ``end`` (x, z)."""
    found = marker_world(path, CENTER, SIZE)
    assert found is not None, f"nothing rendered in {path}"
    assert_close((found[0], 0.0, found[1]), (end.x, 0.0, end.z), PIXEL / 2)


@pytest.mark.parametrize("prepare", ["frame_set", "frame_current", "reopened"])
def test_still_render_of_frame_10_shows_its_solve(scene, tmp_path, prepare):
    """render(write_still=True) of frame 10 shows the marker where the frame-10 solve puts the shin's
    tail."""
    # Prepared by frame_set(10), by only setting frame_current (the scene evaluated at frame 1), or by
    # re-opening a file saved at frame 1 and setting the frame, as a render farm does.
    obj, target = render_scene()
    _, end_10, _ = expected_world(obj, target_at(target, 10), POLE)
    _, end_9, _ = expected_world(obj, target_at(target, 9), POLE)
    assert (end_10 - end_9).length > 3 * PIXEL  # a one-frame lag would show in the image
    scene.frame_set(1 if prepare != "frame_set" else 10)
    if prepare == "reopened":
        bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "animated_leg.blend"))
        bpy.ops.wm.open_mainfile(filepath=str(tmp_path / "animated_leg.blend"))
        scene = bpy.context.scene
    scene.frame_current = 10
    scene.render.filepath = str(tmp_path / "still.png")
    assert bpy.ops.render.render(write_still=True) == {"FINISHED"}
    assert_marker_at(tmp_path / "still.png", end_10)
    assert (
        end_10 - Vector((0, 0, 0))
    ).length > 10 * PIXEL  # and not the rest pose, whose tail is at the origin


def test_animation_render_shows_each_frame_solve(scene, tmp_path):
    """render(animation=True) frames 10 and 20 each show their own solve; afterwards frame 1 shows its
    own."""
    obj, target = render_scene()
    scene.frame_start, scene.frame_end, scene.frame_step = 10, 20, 10
    scene.frame_set(1)
    scene.render.filepath = str(tmp_path / "frame_")
    assert bpy.ops.render.render(animation=True) == {"FINISHED"}
    ends = {frame: expected_world(obj, target_at(target, frame), POLE)[1] for frame in (10, 20)}
    assert (ends[10] - ends[20]).length > 10 * PIXEL
    for frame, end in ends.items():
        assert_marker_at(tmp_path / f"frame_{frame:04d}.png", end)
    assert scene.frame_current == 1
    assert_solved(obj, target_at(target, 1), POLE, evaluate=False)


def test_save_and_reopen_keeps_and_solves_chains(scene, tmp_path):
    """A saved file re-opens with its chain (bones, target, pole, pose) and the chain solves new edits."""
    obj = make_leg()
    target = make_empty("Target", (0.4, 0.1, 0.3))
    pole = make_empty("Pole", POLE)
    add_chain(obj, target, pole)
    bpy.context.view_layer.update()
    saved = pose_snapshot(obj)
    path = str(tmp_path / "saved.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Leg"]
    (chain,) = obj.two_bone_ik.chains
    assert (chain.upper_bone, chain.lower_bone) == ("thigh", "shin")
    assert chain.target == bpy.data.objects["Target"] and chain.pole == bpy.data.objects["Pole"]
    assert pose_snapshot(obj) == saved
    assert_solved(obj, chain.target.location, chain.pole.location)
    chain.target.location = (-0.3, 0.2, 0.5)
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_solved(obj, (-0.3, 0.2, 0.5), POLE)


def disable_extension() -> None:
    addon_utils.disable(MODULE, default_set=True)
    assert all(not found for found in our_handlers().values()), our_handlers()
    assert not hasattr(bpy.types.Object, "two_bone_ik")


def enable_extension() -> None:
    assert addon_utils.enable(MODULE, default_set=True, handle_error=None) is not None
    assert handler_names() == expected_handlers()


def test_file_saved_with_extension_disabled_solves_on_open(scene, tmp_path):
    """A target moved and the file saved while the extension was off: Blender kept solving the
    network, so the pose was never stale, and the file opens solved. (The handler used to leave
    the pose stale until the file was opened with the extension on.)"""
    obj = make_leg()
    target = make_empty("Target", (0.4, 0.1, 0.3))
    add_chain(obj, target, make_empty("Pole", POLE))
    bpy.context.view_layer.update()
    path = str(tmp_path / "stale.blend")
    disable_extension()
    try:
        target.location = (-0.2, 0.1, 0.4)
        bpy.context.view_layer.update()
        assert_solved(obj, (-0.2, 0.1, 0.4), POLE)
        bpy.ops.wm.save_as_mainfile(filepath=path)
    finally:
        enable_extension()
    bpy.ops.wm.open_mainfile(filepath=path)
    bpy.context.view_layer.update()
    obj = bpy.data.objects["Leg"]
    assert obj.two_bone_ik.chains[0].status == ""
    assert_solved(obj, (-0.2, 0.1, 0.4), POLE)


def test_a_chain_solves_while_the_extension_is_off(scene):
    """The target moved while the extension was off: the chain solved it all the same (Blender
    evaluates the network), and enabling the extension again changes no channel. (Enabling used
    to write the solve the handler had missed.)"""
    obj = make_leg()
    target = make_empty("Target", (0.4, 0.1, 0.3))
    add_chain(obj, target, make_empty("Pole", POLE))
    bpy.context.view_layer.update()
    disable_extension()
    try:
        target.location = (-0.2, 0.1, 0.4)
        bpy.context.view_layer.update()
        assert_solved(obj, (-0.2, 0.1, 0.4), POLE, evaluate=False)
        assert_solved(obj, (-0.2, 0.1, 0.4), POLE)
        solved = pose_snapshot(obj)
    finally:
        enable_extension()
    assert pose_snapshot(obj) == solved
    assert obj.two_bone_ik.chains[0].status == ""
    assert_solved(obj, (-0.2, 0.1, 0.4), POLE)


def test_a_failed_enable_takes_back_what_it_registered(scene, monkeypatch):
    """A module that fails part-way through its registration (here the menu, after its class):
    the enable raises, and nothing of the extension stays registered (classes, properties,
    handlers), so the next enable works and solves."""
    disable_extension()
    try:
        root = package()
        menu = importlib.import_module(f"{MODULE}.ui.menu")

        def failing_register():
            bpy.utils.register_class(menu.VIEW3D_MT_pose_two_bone_ik)
            raise RuntimeError("the menu failed to register")

        monkeypatch.setattr(menu, "register", failing_register)
        with pytest.raises(RuntimeError, match="the menu failed"):
            root.register()
        assert not menu.VIEW3D_MT_pose_two_bone_ik.is_registered
        assert not any(cls.is_registered for cls in root.operators.classes + root.ui.panel.classes)
        assert not hasattr(bpy.types.Object, "two_bone_ik")
        assert all(not found for found in our_handlers().values()), our_handlers()
        monkeypatch.undo()
    finally:
        enable_extension()
    obj = make_leg()
    add_chain(obj, make_empty("Target", (0.4, 0.1, 0.3)), make_empty("Pole", POLE))
    bpy.context.view_layer.update()
    assert_solved(obj, (0.4, 0.1, 0.3), POLE)


def save_leg_file(path, name: str, target_location) -> None:
    """A file holding one armature ``name`` with a chain whose target is ``<name> Target``."""
    bpy.ops.wm.read_homefile(use_empty=True)
    leg_with_chain(name=name, target=target_location, pole=POLE, names=(f"{name} Target", f"{name} Pole"))
    bpy.ops.wm.save_as_mainfile(filepath=str(path))


def move_and_check(name: str, location) -> None:
    """Move armature ``name``'s target, update, and check the chain solved it."""
    obj = bpy.data.objects[name]
    chain = obj.two_bone_ik.chains[0]
    chain.target.location = location
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_solved(obj, location, chain.pole.location)


def test_new_file_and_other_files_leave_no_state(scene, tmp_path):
    """Files A and B each solve after open, File > New and re-open; toggling twice leaves one handler
    each."""
    file_a, file_b = tmp_path / "a.blend", tmp_path / "b.blend"
    save_leg_file(file_a, "LegA", (0.3, 0.0, 0.4))
    save_leg_file(file_b, "LegB", (0.2, 0.2, 0.3))
    bpy.ops.wm.open_mainfile(filepath=str(file_b))
    assert "LegA" not in bpy.data.objects
    move_and_check("LegB", (-0.2, 0.1, 0.4))
    bpy.ops.wm.read_homefile(use_empty=True)
    assert not bpy.data.objects
    assert handler_names() == expected_handlers()
    bpy.ops.wm.open_mainfile(filepath=str(file_a))
    assert "LegB" not in bpy.data.objects
    move_and_check("LegA", (0.1, -0.2, 0.3))
    try:
        for round_trip in range(2):
            disable_extension()
            enable_extension()
            move_and_check("LegA", (0.25 - 0.1 * round_trip, 0.1, 0.35))
    finally:
        if MODULE not in {addon.module for addon in bpy.context.preferences.addons}:
            enable_extension()


def test_undo_and_redo_never_leave_a_stale_pose(scene):
    """Add with the operator, move the target, undo, redo, undo the add: each step shows its own pose."""
    obj = make_leg()
    thigh = obj.pose.bones["thigh"]
    thigh.rotation_mode = "XYZ"
    thigh.rotation_euler = (0.3, 0.0, 0.2)  # a hand-set FK pose to come back to
    bpy.context.view_layer.update()
    fk_pose = pose_snapshot(obj)
    fk_tail = world_tail(obj, "shin").copy()
    set_mode(obj, "POSE")
    bpy.ops.ed.undo_push(message="FK pose")
    bpy.ops.ed.undo_push(message="FK pose")  # background undo polls True after two pushes
    chain = add_chain_with_operator(obj)
    bpy.context.view_layer.update()
    first = chain.target.location.copy()
    pole = chain.pole.location.copy()
    bpy.ops.ed.undo_push(message="Add chain")
    assert_solved(obj, first, pole)
    assert_close(world_tail(obj, "shin"), fk_tail, tolerance(obj))  # adding keeps the pose
    moved = first + Vector((0.2, -0.1, 0.15))
    chain.target.location = moved
    bpy.context.view_layer.update()
    bpy.ops.ed.undo_push(message="Move target")
    assert_solved(obj, moved, pole)

    def look_up():
        # Undo frees every Python reference: look the data up again.
        obj = bpy.data.objects["Leg"]
        return obj, obj.two_bone_ik.chains

    assert bpy.ops.ed.undo() == {"FINISHED"}
    obj, chains = look_up()
    assert_close(chains[0].target.location, first, 1e-6)
    assert_solved(obj, first, pole, evaluate=False)
    assert_solved(obj, first, pole)
    assert bpy.ops.ed.redo() == {"FINISHED"}
    obj, chains = look_up()
    assert_close(chains[0].target.location, moved, 1e-6)
    assert_solved(obj, moved, pole, evaluate=False)
    assert_solved(obj, moved, pole)
    assert bpy.ops.ed.undo() == {"FINISHED"}
    assert bpy.ops.ed.undo() == {"FINISHED"}
    obj, chains = look_up()
    assert len(chains) == 0
    assert not [other for other in bpy.data.objects if other.name.startswith("IK ")]
    bpy.context.view_layer.update()
    assert pose_snapshot(obj) == fk_pose
    assert_close(world_tail(obj, "shin"), fk_tail, tolerance(obj))


def test_driver_never_changes_keyframes_on_chain_bones(scene, tmp_path):
    """Keyed thigh and shin rotations keep every key through updates, frame changes, renders and
    auto-keying."""
    obj, target, _pole, _chain = animated_leg()
    scene.tool_settings.use_keyframe_insert_auto = True
    for frame, angles in ((1, (0.2, 0.0, 0.1)), (12, (-0.4, 0.3, 0.0))):
        for name in ("thigh", "shin"):
            pose_bone = obj.pose.bones[name]
            pose_bone.rotation_quaternion = Euler(angles).to_quaternion()
            pose_bone.keyframe_insert("rotation_quaternion", frame=frame)
    keys = keyframe_snapshot(obj)
    assert len(keys) == 8 and all(len(points) == 2 for points in keys.values())
    for frame in (1, 5, 12, 20, 3):
        scene.frame_set(frame)
        assert_solved(obj, target_at(target, frame), POLE, evaluate=False)
    target.animation_data_clear()
    target.location = (0.2, 0.3, 0.4)
    bpy.context.view_layer.update()
    assert_solved(obj, (0.2, 0.3, 0.4), POLE)
    scene.frame_start, scene.frame_end = 2, 3
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 8
    scene.render.filepath = str(tmp_path / "keys_")
    scene.camera = make_empty("Camera", (0, -5, 0.5))  # any object can be the camera
    bpy.ops.render.render(animation=True)
    assert keyframe_snapshot(obj) == keys


def test_one_target_move_runs_nothing_of_ours_and_writes_no_channel(scene):
    """One target edit: no handler of ours runs on updates or frame changes, the network's drivers
    give the solve, the user's channels and the chains' stored properties are never written, and
    updates with nothing changed, or reading the readouts, change nothing. (The handler used to be
    counted: one call and one write of the mechanism bones per edit.)"""
    obj = make_leg()
    target = make_empty("Target", (0.4, 0.1, 0.3))
    chain = add_chain(obj, target, make_empty("Pole", POLE))
    bystander = make_empty("Bystander", (5, 5, 5))
    bpy.context.view_layer.update()
    assert handler_names() == expected_handlers()
    channels = pose_snapshot(obj, user_bones(obj))
    stored = chain_snapshot(obj)
    assert chain.status == "" and chain.reachable
    target.location = (0.1, 0.2, 0.5)
    bpy.context.view_layer.update()
    assert_solved(obj, (0.1, 0.2, 0.5), POLE)
    written = pose_snapshot(obj), chain_snapshot(obj)
    for _ in range(3):  # nothing changed: nothing is written
        bpy.context.view_layer.update()
        bpy.context.evaluated_depsgraph_get().update()
    assert (chain.status, chain.state, chain.reachable) == ("", "OK", True)
    assert chain.shortfall < tolerance(obj)
    for _ in range(3):  # something else changes: still nothing of the chain is written
        bystander.location.x += 1.0
        bpy.context.view_layer.update()
        scene.frame_set(scene.frame_current + 1)
    assert (pose_snapshot(obj), chain_snapshot(obj)) == written
    assert pose_snapshot(obj, user_bones(obj)) == channels
    assert chain_snapshot(obj) == stored


RIGHT_TARGET, RIGHT_POLE = (0.7, 0.2, 0.3), (0.5, 1.0, 0.5)


def save_rig_library(path) -> None:
    """A library file: collection "Rig" holding armature "Leg" with two chains built there, mechanism
    included (an override cannot add bones): "shin" on thigh/shin with its animated "Target" and
    "Pole", and "shin.R" on thigh.R/shin.R with a still "Right Target" and "Right Pole"; and an
    unchained upper_arm/forearm."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    collection = bpy.data.collections.new("Rig")
    scene.collection.children.link(collection)
    arm = [
        ("upper_arm", (1, 0, 1), (1, 0.05, 0.5), None, False),
        ("forearm", (1, 0.05, 0.5), (1, 0, 0), "upper_arm", True),
    ]
    obj = make_armature("Leg", [*leg_bones(), *leg_bones(x=0.5, suffix=".R"), *arm])
    target = make_empty("Target", (TARGET_X[1], *TARGET_YZ))
    pole = make_empty("Pole", POLE)
    key_target(target)
    add_chain(obj, target, pole)
    right_target = make_empty("Right Target", RIGHT_TARGET)
    right_pole = make_empty("Right Pole", RIGHT_POLE)
    add_chain(obj, right_target, right_pole, "thigh.R", "shin.R")
    for member in (obj, target, pole, right_target, right_pole):
        scene.collection.objects.unlink(member)
        collection.objects.link(member)
    scene.frame_set(1)
    bpy.ops.wm.save_as_mainfile(filepath=str(path))


def link_rig(path):
    """Link collection "Rig" from ``path`` into a new empty file; returns the linked collection."""
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(str(path), link=True) as (_, linked):
        linked.collections = ["Rig"]
    return linked.collections[0]


def test_linked_rig_solves_and_is_never_written(scene, tmp_path):
    """A linked rig (in the scene and instanced) whose animated target moves: Blender evaluates the
    library's network, so the chain follows its target in every frame and after a runtime edit,
    and no channel of the animator's bones nor any chain property is written. (The handler never
    wrote linked data, so a linked rig used to keep the pose the library saved.)"""
    save_rig_library(tmp_path / "rig.blend")
    collection = link_rig(tmp_path / "rig.blend")
    scene = bpy.context.scene
    scene.collection.children.link(collection)
    instance = bpy.data.objects.new("Rig Instance", None)
    instance.instance_type, instance.instance_collection = "COLLECTION", collection
    scene.collection.objects.link(instance)
    obj = bpy.data.objects["Leg"]
    assert obj.library is not None and obj in set(scene.objects)
    scene.frame_set(1)
    before = pose_snapshot(obj, user_bones(obj)), chain_snapshot(obj)
    target = bpy.data.objects["Target"]
    for frame in (10, 20):
        scene.frame_set(frame)
        assert_solved(obj, target_at(target, frame), POLE)
    target.location.y = 0.3  # linked data takes Python edits at runtime
    bpy.context.view_layer.update()
    assert_solved(obj, target.matrix_world.translation, POLE)
    assert obj.two_bone_ik.chains[0].status == ""
    assert (pose_snapshot(obj, user_bones(obj)), chain_snapshot(obj)) == before


def overridden_leg():
    return next(
        obj for obj in bpy.data.objects if obj.type == "ARMATURE" and obj.override_library is not None
    )


def override_rig(path):
    """Link collection "Rig" from ``path`` into a new empty file, instance it and make a library
    override of it, as an animator does; returns the overridden armature."""
    collection = link_rig(path)
    scene = bpy.context.scene
    instance = bpy.data.objects.new("Rig Instance", None)
    instance.instance_type, instance.instance_collection = "COLLECTION", collection
    scene.collection.objects.link(instance)
    collection.override_hierarchy_create(scene, bpy.context.view_layer, reference=instance)
    return overridden_leg()


def test_update_mechanism_on_an_override_follows_a_control_renamed_in_the_library(scene, tmp_path, capfd):
    """The rig file renamed the chain's target control bone (and was saved without Update
    Mechanism): in a shot's library override the chain says so; Update Mechanism follows the
    rename, reports just that (the override cannot add bones, and needs none), and the status
    reads as the pose is: the foot on the moved control, OK, also after save and reopen. (It used
    to report "an override cannot add bones" and stay ERROR.)"""
    bpy.ops.wm.read_homefile(use_empty=True)
    collection = bpy.data.collections.new("Rig")
    bpy.context.scene.collection.children.link(collection)
    obj, chain = leg_with_chain(leg_bones(foot_tail=(0, -0.2, 0)), controls="BONES")
    bpy.context.scene.collection.objects.unlink(obj)
    collection.objects.link(obj)
    obj.data.bones[chain.target_bone].name = "foot_ik"
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "rig.blend"))
    obj = override_rig(tmp_path / "rig.blend")
    obj.override_library.is_system_override = False  # Make Editable
    bpy.context.view_layer.update()
    chain = obj.two_bone_ik.chains[0]
    assert chain.state == "ERROR" and "renamed 'foot_ik'" in chain.status, chain.status
    capfd.readouterr()
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}
    out = capfd.readouterr().out
    assert "Followed renamed bones: 'IK Target shin' -> 'foot_ik'" in out, out
    assert "cannot add bones" not in out, out
    for path in (None, tmp_path / "shot.blend"):
        if path is not None:
            bpy.ops.wm.save_as_mainfile(filepath=str(path))
            bpy.ops.wm.open_mainfile(filepath=str(path))
            obj = overridden_leg()
        chain = obj.two_bone_ik.chains[0]
        assert chain.target_bone == "foot_ik"
        obj.pose.bones["foot_ik"].location = (0.1, -0.2, 0.15) if path is None else (-0.1, 0.1, 0.2)
        bpy.context.view_layer.update()
        evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        target = obj.matrix_world @ evaluated.pose.bones["foot_ik"].head
        pole = obj.matrix_world @ evaluated.pose.bones[chain.pole_bone].head
        joint, end, _ = expected_world(obj, target, pole)
        assert_close(world_tail(obj, "thigh"), joint, tolerance(obj))
        assert_close(world_tail(obj, "shin"), end, tolerance(obj))
        assert_close(world_tail(obj, "shin"), target, tolerance(obj))
        assert chain.state == "OK", chain.status


def test_overridden_rig_solves_and_survives_reopen(scene, tmp_path):
    """The chains of a library override solve, an edit of an overridden target too, and both
    survive save and reopen. The chains and their mechanism are built in the library file, the
    supported way: an override cannot add the mechanism's bones, so Add refuses there and adds
    nothing."""
    save_rig_library(tmp_path / "rig.blend")
    obj = override_rig(tmp_path / "rig.blend")
    scene = bpy.context.scene
    assert obj.data.library is not None  # the bones, mechanism bones included, stay the library's
    assert {"MCH-IK-thigh", "MCH-IK-shin", "MCH-IK-thigh.R", "MCH-IK-shin.R"} <= set(obj.data.bones.keys())
    chain, right = obj.two_bone_ik.chains
    assert chain.target.override_library is not None and chain.target.library is None
    assert right.target.override_library is not None and right.target.name == "Right Target"
    scene.frame_set(10)
    assert chain.status == "" and right.status == ""
    assert_solved(obj, target_at(chain.target, 10), POLE)
    _, end, _ = expected_world(obj, RIGHT_TARGET, RIGHT_POLE, "thigh.R", "shin.R")
    assert_close(world_tail(obj, "shin.R"), end, tolerance(obj))
    # An edit on the override: the overridden right target moves.
    right.target.location = (0.6, -0.2, 0.4)
    bpy.context.view_layer.update()
    _, end, _ = expected_world(obj, (0.6, -0.2, 0.4), RIGHT_POLE, "thigh.R", "shin.R")
    assert_close(world_tail(obj, "shin.R"), end, tolerance(obj))
    objects = set(bpy.data.objects.keys())
    obj.override_library.is_system_override = False  # Make Editable, as an animator does to pose it
    set_mode(obj, "POSE")
    forearm = obj.pose.bones["forearm"]
    with bpy.context.temp_override(active_object=obj, object=obj, active_pose_bone=forearm):
        with pytest.raises(RuntimeError, match="an override cannot add bones"):
            bpy.ops.pose.two_bone_ik_add()
    set_mode(obj, "OBJECT")
    assert len(obj.two_bone_ik.chains) == 2 and set(bpy.data.objects.keys()) == objects
    path = str(tmp_path / "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)
    scene = bpy.context.scene
    obj = overridden_leg()
    assert [chain.name for chain in obj.two_bone_ik.chains] == ["shin", "shin.R"]
    chain, right = obj.two_bone_ik.chains
    assert chain.target.override_library is not None and right.target.name == "Right Target"
    assert_close(right.target.location, (0.6, -0.2, 0.4), 1e-6)  # the override's edit was saved
    assert_solved(obj, target_at(chain.target, 10), POLE)
    scene.frame_set(15)
    assert chain.status == "" and right.status == ""
    assert_solved(obj, target_at(chain.target, 15), POLE)
    right.target.location = (0.3, -0.1, 0.2)
    bpy.context.view_layer.update()
    joint, end, _ = expected_world(obj, (0.3, -0.1, 0.2), RIGHT_POLE, "thigh.R", "shin.R")
    assert_close(world_tail(obj, "thigh.R"), joint, tolerance(obj))
    assert_close(world_tail(obj, "shin.R"), end, tolerance(obj))

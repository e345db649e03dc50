# SPDX-License-Identifier: GPL-3.0-or-later
"""Render farms (docs/pipeline.md, "Render farms"): each worker opens the file and renders one frame, in any
order, in a process of its own. Every frame shows the pose sequential playback shows, and the pose a
bake of the same file plays back, with an animated target, pole, influence and FK keys.
"""

import json

import bpy
from blender_rig import (
    add_chain,
    assert_close,
    exited_cleanly,
    key_setting,
    make_empty,
    make_leg,
    package,
    run_blender,
    world_head,
    world_tail,
)
from mathutils import Euler

TOLERANCE = 1e-5
FRAMES = range(1, 21)


def save_shot(path) -> str:
    """A leg whose target, pole, influence and FK (thigh rotation) are all keyed over frames 1-20,
    with a camera; returns the chain's name."""
    obj = make_leg(thigh=((0, 0, 0), (0, 1, 0)), shin=((0, 1, 0), (0, 2, 0)))
    target, pole = make_empty("Target", (1.2, 0, 0.5)), make_empty("Pole", (1.2, 0.5, 0.5))
    chain = add_chain(obj, target, pole)
    for frame, location, pole_location, influence, thigh in (
        (1, (1.2, 0.0, 0.5), (1.2, 0.5, 0.5), 1.0, (0.0, 0.0, 0.0)),
        (9, (0.4, 0.8, 1.1), (0.5, 1.5, -0.5), 0.4, (0.3, 0.1, 0.0)),
        (20, (-0.6, 0.3, 0.9), (-1.0, 0.5, 0.5), 1.0, (-0.2, 0.0, 0.4)),
    ):
        target.location, pole.location, chain.influence = location, pole_location, influence
        target.keyframe_insert("location", frame=frame)
        pole.keyframe_insert("location", frame=frame)
        key_setting(chain, "influence", frame)
        obj.pose.bones["thigh"].rotation_quaternion = Euler(thigh).to_quaternion()
        obj.pose.bones["thigh"].keyframe_insert("rotation_quaternion", frame=frame)
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    bpy.context.scene.collection.objects.link(camera)
    camera.location, camera.rotation_euler = (0, -8, 1), (1.5708, 0, 0)
    scene = bpy.context.scene
    scene.camera, scene.render.engine = camera, "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 32
    scene.frame_start, scene.frame_end, scene.frame_current = 1, 20, 7  # saved mid-shot
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    return chain.name


def leg_points(obj) -> list:
    points = [point for name in ("thigh", "shin") for point in (world_head(obj, name), world_tail(obj, name))]
    return [(point.x, point.y, point.z) for point in points]


def test_frames_rendered_out_of_order_each_in_its_own_process(scene, tmp_path):
    """Workers render frames 17, 3, 11, 20 and 1 of the saved file, one process each: each frame's
    pose equals sequential playback and the bake, to 1e-5 m."""
    path = tmp_path / "shot.blend"
    name = save_shot(path)
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj = bpy.data.objects["Leg"]
    playback = {}
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        playback[frame] = leg_points(obj)
    package().animation.bake.bake(bpy.context, obj, [name], 1, 20)
    baked = {}
    for frame in FRAMES:
        bpy.context.scene.frame_set(frame)
        baked[frame] = leg_points(obj)

    for frame in (17, 3, 11, 20, 1):
        process = run_blender(
            f"""
            from blender_rig import world_head, world_tail
            bpy.ops.wm.open_mainfile(filepath={str(path)!r})
            scene = bpy.context.scene
            scene.frame_set({frame})
            scene.render.filepath = {str(tmp_path / f"frame_{frame}.png")!r}
            assert bpy.ops.render.render(write_still=True) == {{"FINISHED"}}
            obj = bpy.data.objects["Leg"]
            points = [tuple(p) for n in ("thigh", "shin") for p in (world_head(obj, n), world_tail(obj, n))]
            print("RESULT " + json.dumps(points))
            """
        )
        lines = [line for line in process.stdout.splitlines() if line.startswith("RESULT ")]
        assert exited_cleanly(process.returncode) and lines, process.stdout + process.stderr
        rendered = json.loads(lines[-1][len("RESULT ") :])
        assert (tmp_path / f"frame_{frame}.png").is_file()
        for point, played, bake in zip(rendered, playback[frame], baked[frame], strict=True):
            assert_close(point, played, TOLERANCE)
            assert_close(point, bake, TOLERANCE)

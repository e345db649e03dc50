# SPDX-License-Identifier: GPL-3.0-or-later
"""Headless demo: a leg rig in real Blender follows an animated target, with a checked table and a filmstrip.

Run it with the venv's Python (``bash tools/demo.sh`` does that)::

    python demo/leg.py --out out/demo

It builds an armature with unequal bones (thigh 0.6 m, shin 0.4 m, so "too close" exists), binds
simple mesh limbs to the pose bones with Armature modifiers, adds a chain with the add operator,
keyframes the target through reachable, too far and too close positions and the pole across the
root-target line, and then for every frame:

- prints a row of the table (frame, world-space distance root -> target, reachable, state,
  shortfall, knee side, status) and writes it to ``table.csv``;
- checks the chain's outputs and the evaluated pose bones against the solver, and the skinned
  meshes against the bones.

Each rendered tile is checked too: the limbs' colours are where the bones project.

It saves ``leg.blend``, re-opens it to check the chain still solves there, renders the key frames
with Workbench and tiles them into ``filmstrip.png``. It exits with status 1 when any check fails:
a demo that silently renders a wrong pose is worse than none.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import importlib
import math
import os
import pathlib
import sys
import tempfile
import time

# Before `import bpy`: keep Blender's user files and caches out of the home folder.
_user = tempfile.mkdtemp(prefix="two_bone_ik_demo_user_")
os.environ.setdefault("BLENDER_USER_RESOURCES", _user)
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(_user, "cache"))

import bpy  # noqa: E402  (first: it puts Blender's own modules on sys.path)

# isort: split
import addon_utils  # noqa: E402
import bmesh  # noqa: E402
import numpy  # noqa: E402
from bpy_extras.object_utils import world_to_camera_view  # noqa: E402
from mathutils import Matrix, Vector  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
REPO_NAME = "two_bone_ik_demo"
MODULE = f"bl_ext.{REPO_NAME}.two_bone_ik"

# Rest pose, armature space (the armature object sits at the world origin). The knee is bent
# forward (+X) so the rest pose has a bend plane: XZ, which the side camera looks at.
HIP = Vector((0.0, 0.0, 1.0))
THIGH_LENGTH, SHIN_LENGTH = 0.6, 0.4
KNEE = HIP + Vector((0.08, 0.0, -math.sqrt(THIGH_LENGTH**2 - 0.08**2)))
ANKLE = KNEE + Vector((-0.08, 0.0, -math.sqrt(SHIN_LENGTH**2 - 0.08**2)))
REACH, FOLD = THIGH_LENGTH + SHIN_LENGTH, abs(THIGH_LENGTH - SHIN_LENGTH)

# World-space keys: (frame, target location or None for "where the operator put it",
# pole location or None for the same, expected state, filmstrip caption). Keys ease in and out
# (Blender's default Bezier), so each key's pose holds exactly on its frame.
POLE_HIGH = Vector((0.55, 0.0, 0.95))  # keeps the knee on its front side while the foot swings up
POLE_FRONT = Vector((0.55, 0.0, 0.55))
POLE_BEHIND = Vector((-0.45, 0.0, 0.55))
KEYS = (
    (1, None, None, "reachable", "rest pose"),
    (13, Vector((0.35, 0.0, 0.15)), None, "reachable", "step forward"),
    (25, Vector((-0.35, 0.0, 0.35)), None, "reachable", "kick back"),
    (37, Vector((1.05, 0.0, 0.35)), POLE_HIGH, "too far", "too far"),
    (49, Vector((0.03, 0.0, 0.93)), POLE_HIGH, "too close", "too close"),
    (61, Vector((0.25, 0.0, 0.25)), POLE_FRONT, "reachable", "pole in front"),
    (73, Vector((0.25, 0.0, 0.25)), POLE_BEHIND, "reachable", "pole behind"),
)
LAST_FRAME = 80

# Metres. Blender stores bones in float32; on a 1 m chain 1e-5 is far above that noise.
TOLERANCE = 1e-5
# Mesh vertices go through the Armature modifier (float32 skinning): a looser bound.
MESH_TOLERANCE = 1e-4

# Workbench object colours (RGBA) and the size of one filmstrip tile in pixels.
COLOURS = {
    "thigh": (0.80, 0.35, 0.08, 1.0),
    "shin": (0.10, 0.35, 0.85, 1.0),
    "target": (0.85, 0.05, 0.05, 1.0),
    "pole": (0.05, 0.60, 0.10, 1.0),
    "hip": (0.25, 0.25, 0.28, 1.0),
    "floor": (0.35, 0.35, 0.35, 1.0),
    "ring": (0.62, 0.62, 0.66, 1.0),
    "label": (0.02, 0.02, 0.02, 1.0),
}
TILE_WIDTH, TILE_HEIGHT = 320, 330
CAMERA_CENTRE = Vector((0.28, -5.0, 0.68))
CAMERA_SCALE = 1.75  # ortho_scale: metres across the wider (here: taller) side of a tile
# Distance from the bend plane towards the camera: the shin is drawn in front of the thigh (it
# folds onto the thigh when the target is too close) and the markers in front of both. The hinge
# axis is Y, so these offsets never move anything across the side view.
SHIN_DEPTH, MARKER_DEPTH, LABEL_DEPTH = -0.08, -0.3, -0.6


class DemoFailure(Exception):
    """A check failed; the message says which and by how much."""


def enable_extension() -> None:
    """Enable this checkout as ``bl_ext.two_bone_ik_demo.two_bone_ik`` (as tests/support/blender_rig.py does).

    The module name comes from the folder name, so a temp folder holds a link ``two_bone_ik`` to the
    checkout and a local extension repository points at that folder.
    """
    if MODULE in {addon.module for addon in bpy.context.preferences.addons}:
        return
    folder = pathlib.Path(tempfile.mkdtemp(prefix="two_bone_ik_demo_repo_"))
    os.symlink(REPO, folder / "two_bone_ik")
    repos = bpy.context.preferences.extensions.repos
    if repos.get(REPO_NAME) is None:
        repos.new(name=REPO_NAME, module=REPO_NAME, custom_directory=str(folder), source="USER")
    if addon_utils.enable(MODULE, default_set=True, handle_error=None) is None:
        raise DemoFailure(f"could not enable {MODULE}: see the output above")


@contextlib.contextmanager
def blender_output_to(log: pathlib.Path):
    """Send what Blender prints at the C level (render progress, "Saved:") to ``log``, not the table."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(log, "a") as handle:
        os.dup2(handle.fileno(), 1)
        os.dup2(handle.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


# --- Building the scene --------------------------------------------------------------------------


def link(obj) -> bpy.types.Object:
    bpy.context.scene.collection.objects.link(obj)
    return obj


def mesh_object(name: str, build, colour_key: str) -> bpy.types.Object:
    """A mesh object filled by ``build(bm)``, with a Workbench object colour.

    When ``build`` returns vertex indices (a limb's end ball), they are kept on the object as
    ``tip_vertices``, so the checks can find the ball's centre after skinning.
    """
    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    tip = build(bm)
    bm.to_mesh(mesh)
    bm.free()
    obj = link(bpy.data.objects.new(name, mesh))
    obj.color = COLOURS[colour_key]
    if isinstance(tip, list):
        obj["tip_vertices"] = tip
    return obj


def along(start: Vector, end: Vector) -> Matrix:
    """Matrix putting a Z-aligned primitive centred at the origin between ``start`` and ``end``."""
    direction = end - start
    return Matrix.Translation((start + end) / 2) @ direction.to_track_quat("Z", "Y").to_matrix().to_4x4()


def limb(bm, start: Vector, end: Vector, radius: float, ball: float) -> list[int]:
    """A capped cylinder from ``start`` to ``end`` with a ball at ``end`` (knee or ankle).

    Returns the indices of the ball's vertices: their mean is ``end``.
    """
    bmesh.ops.create_cone(
        bm,
        cap_ends=True,
        segments=20,
        radius1=radius,
        radius2=radius,
        depth=(end - start).length,
        matrix=along(start, end),
    )
    sphere = bmesh.ops.create_uvsphere(
        bm, u_segments=20, v_segments=10, radius=ball, matrix=Matrix.Translation(end)
    )
    bm.verts.index_update()
    return [vertex.index for vertex in sphere["verts"]]


def ring(bm, centre: Vector, radius: float, width: float) -> None:
    """A flat annulus in the XZ plane (the bend plane): the reach circles drawn behind the leg."""
    segments = 128
    inner, outer = [], []
    for index in range(segments):
        angle = 2 * math.pi * index / segments
        direction = Vector((math.cos(angle), 0.0, math.sin(angle)))
        inner.append(bm.verts.new(centre + direction * (radius - width / 2)))
        outer.append(bm.verts.new(centre + direction * (radius + width / 2)))
    for index in range(segments):
        following = (index + 1) % segments
        bm.faces.new((inner[index], outer[index], outer[following], inner[following]))


def build_armature() -> bpy.types.Object:
    """Armature object "Leg" with pose bones ``thigh`` and ``shin`` (connected), in Object Mode."""
    data = bpy.data.armatures.new("Leg")
    obj = link(bpy.data.objects.new("Leg", data))
    bpy.context.view_layer.objects.active = obj
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode="EDIT")
        thigh = data.edit_bones.new("thigh")
        thigh.head, thigh.tail = HIP, KNEE
        shin = data.edit_bones.new("shin")
        shin.head, shin.tail = KNEE, ANKLE
        shin.parent, shin.use_connect = thigh, True
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.view_layer.update()  # obj.pose exists only after an evaluation
    return obj


def bind(obj, armature, bone: str) -> None:
    """Skin every vertex of ``obj`` fully to ``bone`` with an Armature modifier (real deformation)."""
    group = obj.vertex_groups.new(name=bone)
    group.add(range(len(obj.data.vertices)), 1.0, "REPLACE")
    modifier = obj.modifiers.new("Armature", "ARMATURE")
    modifier.object = armature
    obj.parent = armature


def add_chain_with_operator(armature):
    """Run ``pose.two_bone_ik_add`` in Pose Mode with the shin active, as a user would; returns the chain."""
    bpy.context.view_layer.objects.active = armature
    with bpy.context.temp_override(active_object=armature, object=armature):
        bpy.ops.object.mode_set(mode="POSE")
    with bpy.context.temp_override(
        active_object=armature, object=armature, active_pose_bone=armature.pose.bones["shin"]
    ):
        if bpy.ops.pose.two_bone_ik_add() != {"FINISHED"}:
            raise DemoFailure("pose.two_bone_ik_add did not finish")
    with bpy.context.temp_override(active_object=armature, object=armature):
        bpy.ops.object.mode_set(mode="OBJECT")
    return armature.two_bone_ik.chains[-1]


def marker(name: str, armature, bone: str, radius: float, colour_key: str) -> None:
    """A coloured sphere on a control bone's head, nearer the camera so the leg never hides it
    (armatures do not render)."""
    obj = mesh_object(
        name,
        lambda bm: bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=radius),
        colour_key,
    )
    follow = obj.constraints.new("COPY_LOCATION")
    follow.target, follow.subtarget = armature, bone
    # MARKER_DEPTH toward the camera in world space, added to the bone's head.
    follow.use_offset = True
    obj.location = (0.0, MARKER_DEPTH, 0.0)


def control_point(armature, bone: str, depsgraph=None) -> Vector:
    """World position of control bone ``bone``'s head, evaluated."""
    evaluated = armature.evaluated_get(depsgraph or bpy.context.evaluated_depsgraph_get())
    return evaluated.matrix_world @ evaluated.pose.bones[bone].head


def key_control(armature, bone: str, world: Vector, frame: int) -> None:
    """Pose control bone ``bone`` with its head at ``world`` and key its location at ``frame``."""
    bpy.context.view_layer.update()
    pose_bone = armature.pose.bones[bone]
    matrix = pose_bone.matrix.copy()
    matrix.translation = armature.matrix_world.inverted() @ world
    pose_bone.matrix = matrix
    pose_bone.keyframe_insert("location", frame=frame)


def build_scene():
    """The rig, limbs, markers, reach rings, floor, camera and label; returns (armature, chain, label)."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene

    armature = build_armature()
    thigh = mesh_object("Thigh", lambda bm: limb(bm, HIP, KNEE, 0.055, 0.062), "thigh")
    shin_offset = Vector((0.0, SHIN_DEPTH, 0.0))
    shin = mesh_object(
        "Shin", lambda bm: limb(bm, KNEE + shin_offset, ANKLE + shin_offset, 0.04, 0.05), "shin"
    )
    bind(thigh, armature, "thigh")
    bind(shin, armature, "shin")
    mesh_object(
        "Hip",
        lambda bm: bmesh.ops.create_cube(bm, size=1.0, matrix=Matrix.Diagonal((0.34, 0.05, 0.16, 1.0))),
        "hip",
    ).location = HIP + Vector((-0.02, 0.12, 0.04))
    mesh_object(
        "Floor",
        lambda bm: bmesh.ops.create_cube(bm, size=1.0, matrix=Matrix.Diagonal((3.0, 0.05, 0.025, 1.0))),
        "floor",
    ).location = (0.3, 0.3, -0.0125)
    mesh_object("Reach", lambda bm: ring(bm, HIP, REACH, 0.008), "ring").location = (0.0, 0.4, 0.0)
    mesh_object("Fold", lambda bm: ring(bm, HIP, FOLD, 0.008), "ring").location = (0.0, 0.4, 0.0)

    chain = add_chain_with_operator(armature)  # its target and pole are control bones of the rig
    marker("Target Marker", armature, chain.target_bone, 0.035, "target")
    marker("Pole Marker", armature, chain.pole_bone, 0.03, "pole")
    start_target = control_point(armature, chain.target_bone)
    start_pole = control_point(armature, chain.pole_bone)
    for frame, target, pole, _, _ in KEYS:
        key_control(armature, chain.target_bone, target if target is not None else start_target, frame)
        key_control(armature, chain.pole_bone, pole if pole is not None else start_pole, frame)
    scene.frame_start, scene.frame_end = 1, LAST_FRAME

    camera_data = bpy.data.cameras.new("Side")
    camera_data.type = "ORTHO"
    camera_data.ortho_scale = CAMERA_SCALE
    camera = link(bpy.data.objects.new("Side", camera_data))
    camera.location = CAMERA_CENTRE
    camera.rotation_euler = (math.pi / 2, 0.0, 0.0)  # looks along +Y: X to the right, Z up
    scene.camera = camera

    font = bpy.data.curves.new("Label", "FONT")
    font.size = 0.11
    font.align_x = "LEFT"
    label = link(bpy.data.objects.new("Label", font))
    label.location = (
        CAMERA_CENTRE.x - 0.5 * CAMERA_SCALE * TILE_WIDTH / TILE_HEIGHT + 0.05,
        LABEL_DEPTH,
        1.45,
    )
    label.rotation_euler = (math.pi / 2, 0.0, 0.0)  # faces the camera
    label.color = COLOURS["label"]

    world = bpy.data.worlds.new("Paper")
    world.color = (0.92, 0.92, 0.90)
    scene.world = world
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    scene.view_settings.view_transform = "Standard"  # object colours as given, no tone mapping
    scene.render.resolution_x, scene.render.resolution_y = TILE_WIDTH, TILE_HEIGHT
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.render.image_settings.compression = 100
    scene.render.dither_intensity = 0.0  # dither noise would triple the PNG's size
    return armature, chain, label


# --- Checking a frame ----------------------------------------------------------------------------


def distance(first, second) -> float:
    return (Vector(first) - Vector(second)).length


def mesh_tip(obj, depsgraph) -> Vector:
    """World-space centre of a limb's end ball after the Armature modifier (the skinned geometry)."""
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        indices = list(obj["tip_vertices"])
        centre = sum((mesh.vertices[index].co for index in indices), Vector()) / len(indices)
        return evaluated.matrix_world @ centre
    finally:
        evaluated.to_mesh_clear()


def misplaced_markers(depsgraph, target: Vector, pole: Vector) -> list[str]:
    """Each marker must sit right in front of its control bone, so the picture shows where the target
    and pole are."""
    messages = []
    for marker_name, point in (("Target Marker", target), ("Pole Marker", pole)):
        placed = bpy.data.objects[marker_name].evaluated_get(depsgraph).matrix_world.translation
        if distance(placed, point + Vector((0.0, MARKER_DEPTH, 0.0))) > TOLERANCE:
            messages.append(f"the {marker_name} is {distance(placed, point):.3g} m from its control")
    return messages


def _knee_side(turn: float, too_close: bool) -> str:
    """The knee's side from its turn off the root-target line: front, back, or on the line,
    stretched out (straight) or folded back when the target is too close."""
    if abs(turn) <= TOLERANCE:
        return "folded" if too_close else "straight"
    return "front" if turn > 0.0 else "back"


def check_frame(armature, chain, solve, expected: str | None) -> tuple[dict, list[str]]:
    """Read the evaluated chain at the current frame; returns (table row, failures)."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = armature.evaluated_get(depsgraph)
    world = evaluated.matrix_world
    pose_bones = evaluated.pose.bones
    root = world @ pose_bones["thigh"].head
    joint = world @ pose_bones["thigh"].tail
    end = world @ pose_bones["shin"].tail
    target = control_point(armature, chain.target_bone, depsgraph)
    pole = control_point(armature, chain.pole_bone, depsgraph)
    frame = bpy.context.scene.frame_current
    failures = []

    def fail(message: str) -> None:
        failures.append(f"frame {frame}: {message}")

    if chain.status:
        fail(f"chain status is {chain.status!r}, expected a clean solve")
    # The driver's outputs describe the pose that was actually evaluated.
    if distance(chain.end, end) > TOLERANCE:
        fail(
            f"chain.end {tuple(chain.end)} is {distance(chain.end, end):.3g} m "
            f"from the shin tail {tuple(end)}"
        )
    if distance(chain.joint, joint) > TOLERANCE:
        fail(f"chain.joint is {distance(chain.joint, joint):.3g} m from the thigh tail")
    # The pose is the solver's answer (armature space, as the driver solves; world is the identity here
    # but the conversion keeps the check honest if the rig moves).
    to_armature = world.inverted()
    expected_solve = solve(
        to_armature @ root,
        to_armature @ target,
        to_armature @ pole,
        THIGH_LENGTH,
        SHIN_LENGTH,
        tolerance=1e-6,
    )
    for name, solved, posed in (("joint", expected_solve.joint, joint), ("end", expected_solve.end, end)):
        if distance(world @ Vector(solved), posed) > TOLERANCE:
            fail(f"{name} is {distance(world @ Vector(solved), posed):.3g} m from the solver's {name}")
    if chain.reachable != expected_solve.reachable:
        fail(f"chain.reachable is {chain.reachable}, the solver says {expected_solve.reachable}")
    reach = (target - root).length
    shortfall = (end - target).length
    if chain.reachable and shortfall > TOLERANCE:
        fail(f"reachable, but the end is {shortfall:.3g} m from the target")
    if abs(chain.shortfall - shortfall) > TOLERANCE:
        fail(f"chain.shortfall {chain.shortfall:.6f} m, measured {shortfall:.6f} m")
    for message in misplaced_markers(depsgraph, target, pole):
        fail(message)
    too_close = not chain.reachable and reach < FOLD
    if chain.too_close != too_close:
        fail(f"chain.too_close is {chain.too_close}, the distance {reach:.4f} m says {too_close}")
    # By contract the knee is on the pole's side of the root-target line.
    forward = (target - root).normalized()
    side = (pole - root) - (pole - root).dot(forward) * forward
    knee = (joint - root) - (joint - root).dot(forward) * forward
    if knee.length > TOLERANCE and side.dot(knee) <= 0.0:
        fail("the knee is on the far side of the root-target line from the pole")
    # The skinned geometry follows the bones.
    # The shin's geometry sits SHIN_DEPTH off its bone, along the hinge axis; only the side view
    # (X, Z) is compared for it, since a knee flipped by the pole turns that offset round.
    for obj_name, posed, axes in (("Thigh", joint, (0, 1, 2)), ("Shin", end, (0, 2))):
        tip = mesh_tip(bpy.data.objects[obj_name], depsgraph)
        off = math.sqrt(sum((tip[axis] - posed[axis]) ** 2 for axis in axes))
        if off > MESH_TOLERANCE:
            fail(f"the {obj_name} mesh's end is {off:.3g} m from its bone's tail")

    if chain.status:
        state = "?"  # the outputs of a chain with a status are not a verdict
    else:
        state = "reachable" if chain.reachable else ("too close" if chain.too_close else "too far")
    if expected is not None and state != expected:
        fail(f"state is {state!r}, the demo keyed {expected!r}")
    # Which side of the root-target line the knee is on, in the leg's own frame: "front" is the
    # side it bends to in the rest pose (knee forward), "back" the other (the pole crossed over).
    knee_side = _knee_side(forward.x * knee.z - forward.z * knee.x, chain.too_close)
    row = {
        "frame": frame,
        "distance_m": round(reach, 4),
        "reachable": chain.reachable,
        "state": state,
        "shortfall_m": round(chain.shortfall, 4),
        "knee": knee_side,
        "status": chain.status,
    }
    return row, failures


def print_row(row: dict) -> None:
    print(
        f"{row['frame']:>5}  {row['distance_m']:>7.3f}  {('yes' if row['reachable'] else 'no'):>9}  "
        f"{row['state']:<9}  {row['shortfall_m']:>9.3f}  {row['knee']:<8}  {row['status'] or 'ok'}",
        flush=True,
    )


# --- Rendering -----------------------------------------------------------------------------------


def pixel_colour(pixels: numpy.ndarray, scene, point: Vector) -> numpy.ndarray:
    """RGB of the rendered tile at a world point (camera view: x right, y up, rows bottom to top)."""
    view = world_to_camera_view(scene, scene.camera, point)
    column = min(max(int(view.x * TILE_WIDTH), 0), TILE_WIDTH - 1)
    row = min(max(int(view.y * TILE_HEIGHT), 0), TILE_HEIGHT - 1)
    return pixels[row, column, :3]


def dominant(rgb: numpy.ndarray) -> str:
    """Which limb colour a rendered pixel is: orange (thigh), blue (shin) or something else."""
    red, green, blue = rgb
    if red > blue + 0.25 and red > green + 0.1:
        return "thigh"
    if blue > red + 0.25:
        return "shin"
    return "other"


def render_tile(scene, armature, label, row: dict, caption: str, path: pathlib.Path, log: pathlib.Path):
    """Render the current frame to ``path`` and check the limbs are drawn where the bones are.

    Returns the tile's pixels, float RGBA, shape (height, width, 4), bottom row first.
    """
    summary = "reached" if row["reachable"] else f"{row['shortfall_m']:.2f} m short"
    label.data.body = f"frame {row['frame']}: {caption}\n{row['distance_m']:.2f} m, {summary}"
    scene.render.filepath = str(path)
    with blender_output_to(log):
        bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(str(path), check_existing=False)
    try:
        pixels = numpy.empty(TILE_WIDTH * TILE_HEIGHT * 4, dtype=numpy.float32)
        image.pixels.foreach_get(pixels)
    finally:
        bpy.data.images.remove(image)
    pixels = pixels.reshape(TILE_HEIGHT, TILE_WIDTH, 4)

    # The render shows this frame's solve: sample the limbs a little way in from their ends.
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = armature.evaluated_get(depsgraph)
    world = evaluated.matrix_world
    root = world @ evaluated.pose.bones["thigh"].head
    joint = world @ evaluated.pose.bones["thigh"].tail
    end = world @ evaluated.pose.bones["shin"].tail
    failures = []
    for limb_name, point in (("thigh", root.lerp(joint, 0.2)), ("shin", joint.lerp(end, 0.7))):
        found = dominant(pixel_colour(pixels, scene, point))
        if found != limb_name:
            failures.append(
                f"frame {row['frame']}: the render shows {found!r} where the {limb_name} should be"
            )
    return pixels, failures


def save_filmstrip(tiles: list[numpy.ndarray], path: pathlib.Path) -> None:
    """Tile the renders side by side with a thin white gap and save them as one PNG with Blender."""
    gap = numpy.ones((TILE_HEIGHT, 4, 4), dtype=numpy.float32)
    parts = []
    for index, tile in enumerate(tiles):
        if index:
            parts.append(gap)
        parts.append(tile)
    strip = numpy.concatenate(parts, axis=1)
    strip[:, :, 3] = 1.0
    height, width = strip.shape[:2]
    image = bpy.data.images.new("Filmstrip", width, height, alpha=False)
    try:
        image.pixels.foreach_set(strip.ravel())
        image.filepath_raw = str(path)
        image.file_format = "PNG"
        image.save()
    finally:
        bpy.data.images.remove(image)


# --- The demo ------------------------------------------------------------------------------------


def reopen_and_check(blend: pathlib.Path, solve, log: pathlib.Path) -> list[str]:
    """Open the saved file and check the chain still solves on the key frames (persistent handlers)."""
    with blender_output_to(log):
        bpy.ops.wm.open_mainfile(filepath=str(blend))
    armature = bpy.data.objects["Leg"]
    if len(armature.two_bone_ik.chains) != 1:
        return [f"{blend.name}: expected 1 chain after loading, found {len(armature.two_bone_ik.chains)}"]
    chain = armature.two_bone_ik.chains[0]
    failures = []
    for frame, _, _, expected, _ in reversed(KEYS):
        bpy.context.scene.frame_set(frame)
        _, found = check_frame(armature, chain, solve, expected)
        failures += [f"{blend.name}: {failure}" for failure in found]
    return failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "out" / "demo", help="output folder")
    arguments = parser.parse_args(argv)
    out = arguments.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    tile_folder = out / "tiles"
    tile_folder.mkdir(exist_ok=True)
    log = out / "blender.log"
    # A previous run's files must not pass for this run's.
    for stale in [
        log,
        out / "leg.blend",
        out / "leg.blend1",
        out / "filmstrip.png",
        out / "table.csv",
        *tile_folder.glob("*.png"),
    ]:
        stale.unlink(missing_ok=True)
    started = time.perf_counter()

    enable_extension()
    solve = importlib.import_module(f"{MODULE}.solver").solve_two_bone_ik
    scene_armature, chain, label = build_scene()
    scene = bpy.context.scene
    expected_states = {frame: state for frame, _, _, state, _ in KEYS}
    captions = {frame: caption for frame, _, _, _, caption in KEYS}

    print(
        f"Two-Bone IK demo: thigh {THIGH_LENGTH} m, shin {SHIN_LENGTH} m "
        f"(reach {REACH:.2f} m, folded {FOLD:.2f} m); world space, metres"
    )
    print(
        f"{'frame':>5}  {'dist m':>7}  {'reachable':>9}  {'state':<9}  {'shortfall':>9}  {'knee':<8}  status"
    )
    rows, failures = [], []
    for frame in range(scene.frame_start, scene.frame_end + 1):
        scene.frame_set(frame)
        row, found = check_frame(scene_armature, chain, solve, expected_states.get(frame))
        if frame == KEYS[0][0]:
            # The operator put the target on the ankle and the pole on the knee's side: the first
            # solve must give back the rest pose (the armature object is at the world origin).
            for name, point, rest in (("joint", chain.joint, KNEE), ("end", chain.end, ANKLE)):
                if distance(point, rest) > TOLERANCE:
                    moved = distance(point, rest)
                    found.append(f"frame {frame}: the {name} moved {moved:.3g} m when the chain was added")
        rows.append(row)
        failures += found
        print_row(row)

    with open(out / "table.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)

    tiles = []
    for frame, caption in captions.items():
        scene.frame_set(frame)
        pixels, found = render_tile(
            scene,
            scene_armature,
            label,
            rows[frame - scene.frame_start],
            caption,
            tile_folder / f"frame_{frame:03d}.png",
            log,
        )
        tiles.append(pixels)
        failures += found
    save_filmstrip(tiles, out / "filmstrip.png")

    scene.frame_set(1)
    label.data.body = "Two-Bone IK demo"
    with blender_output_to(log):
        bpy.ops.wm.save_as_mainfile(filepath=str(out / "leg.blend"), check_existing=False)
    (out / "leg.blend1").unlink(missing_ok=True)
    failures += reopen_and_check(out / "leg.blend", solve, log)

    elapsed = time.perf_counter() - started
    print(f"\nWrote {out / 'table.csv'}, {out / 'filmstrip.png'} ({len(tiles)} tiles), {out / 'leg.blend'}")
    print(f"Blender's own output: {log}")
    if failures:
        print(f"\nFAILED: {len(failures)} check(s) in {elapsed:.1f} s", file=sys.stderr)
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    print(f"All checks passed on {len(rows)} frames and {len(tiles)} rendered tiles in {elapsed:.1f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: GPL-3.0-or-later
"""Render docs/images/reach_states.png: three legs solved by the extension, headless (Workbench).

Left to right: target reachable, target out of reach (the tip stops short on the line to it),
target too close (the leg folds as far as it goes). Run from the repository root:

    .venv/bin/python docs/render_reach_states.py

Bones are drawn as cylinders parented to them (armatures do not render); targets are spheres
(green: reachable, orange: not), poles small grey cubes. The viewport overlay draws only in an
interactive session, so its lines are illustrated by thin rods placed on the segments the overlay
computes (``ui.overlay.overlay_lines``), in its colours. The panel's text for each leg is printed.
"""

import math
import os
import pathlib
import sys
import tempfile

_user = tempfile.mkdtemp(prefix="two_bone_ik_user_")
os.environ.setdefault("BLENDER_USER_RESOURCES", _user)
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(_user, "cache"))

import bpy  # noqa: E402  (first: bpy provides bmesh)

# isort: split
import bmesh  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))
from blender_rig import add_chain, enable_extension, make_armature, make_empty, package  # noqa: E402
from mathutils import Vector  # noqa: E402

OUTPUT = REPO / "docs" / "images" / "reach_states.png"
GREEN, ORANGE, GREY, BONE = (0.2, 0.8, 0.3, 1), (1.0, 0.45, 0.1, 1), (0.6, 0.6, 0.6, 1), (0.85, 0.85, 0.9, 1)


def mesh_object(name, builder_function, color, parent=None, bone="", location=(0, 0, 0), rotation=(0, 0, 0)):
    mesh = bpy.data.meshes.new(name)
    builder = bmesh.new()
    builder_function(builder)
    builder.to_mesh(mesh)
    builder.free()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    if parent is not None:
        obj.parent, obj.parent_type, obj.parent_bone = parent, "BONE", bone
    obj.location, obj.rotation_euler, obj.color = location, rotation, color
    return obj


def rod(name: str, start, end, color, radius: float) -> None:
    """A thin cylinder from ``start`` to ``end`` (world space)."""
    offset = Vector(end) - Vector(start)
    obj = mesh_object(
        name,
        lambda builder: bmesh.ops.create_cone(
            builder, cap_ends=True, segments=8, radius1=radius, radius2=radius, depth=offset.length
        ),
        color,
        location=(Vector(start) + Vector(end)) / 2,
        rotation=Vector((0, 0, 1)).rotation_difference(offset).to_euler(),
    )
    obj.show_in_front = True  # like the overlay, drawn over the bones


def leg(x: float, target, name: str, upper: float = 1.0, lower: float = 1.0):
    """A leg standing at (x, 0, 2) pointing down, with a chain to ``target`` and a pole in front."""
    obj = make_armature(
        name,
        [
            ("thigh", (0, 0, 2), (0, 0, 2 - upper), None, False),
            ("shin", (0, 0, 2 - upper), (0, 0, 2 - upper - lower), "thigh", True),
        ],
    )
    obj.location.x = x
    target_empty = make_empty(f"{name} Target", (x + target[0], 0, target[1]))
    pole = make_empty(f"{name} Pole", (x + 1.3, 0, 1.9))
    add_chain(obj, target_empty, pole)
    for bone, length in (("thigh", upper), ("shin", lower)):
        # Bone-parented objects sit at the bone's tail, Y along the bone: centre the cylinder on it.
        mesh_object(
            f"{name} {bone}",
            lambda builder, length=length: bmesh.ops.create_cone(
                builder, cap_ends=True, segments=16, radius1=0.07, radius2=0.05, depth=length
            ),
            BONE,
            obj,
            bone,
            (0, -length / 2, 0),
            (math.pi / 2, 0, 0),
        )
    return obj


def main() -> None:
    enable_extension(REPO)
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    legs = [
        leg(0.0, (0.9, 0.7), "Reachable"),
        leg(2.6, (1.9, -0.2), "Out of reach"),
        leg(5.2, (0.25, 1.75), "Too close", upper=1.0, lower=0.55),
    ]
    bpy.context.view_layer.update()
    status = package().ui.status
    for obj in legs:
        chain = obj.two_bone_ik.chains[0]
        state = status.chain_state(bpy.context, chain)
        target = chain.target
        mesh_object(
            f"{obj.name} target sphere",
            lambda builder: bmesh.ops.create_uvsphere(builder, u_segments=24, v_segments=12, radius=0.1),
            GREEN if state.kind == "REACHABLE" else ORANGE,
            location=target.location,
        )
        mesh_object(
            f"{obj.name} pole cube",
            lambda builder: bmesh.ops.create_cube(builder, size=0.12),
            GREY,
            location=chain.pole.location,
        )
        print(f"{obj.name}: {state.text}")
    for number, line in enumerate(package().ui.overlay.overlay_lines(bpy.context)):
        rod(f"overlay {number}", line.start, line.end, line.color, 0.012 * line.width)

    camera_data = bpy.data.cameras.new("Camera")
    camera = bpy.data.objects.new("Camera", camera_data)
    scene.collection.objects.link(camera)
    camera_data.type, camera_data.ortho_scale = "ORTHO", 8.6
    camera.location, camera.rotation_euler = (3.6, -10, 1.0), (math.pi / 2, 0, 0)
    scene.camera = camera
    render = scene.render
    render.engine = "BLENDER_WORKBENCH"
    render.resolution_x, render.resolution_y, render.resolution_percentage = 960, 360, 100
    render.image_settings.file_format = "PNG"
    render.image_settings.compression = 100
    scene.display.shading.light = "STUDIO"
    scene.display.shading.color_type = "OBJECT"
    scene.world = bpy.data.worlds.new("Dark")
    scene.world.color = (0.03, 0.03, 0.035)
    render.filepath = str(OUTPUT)
    bpy.ops.render.render(write_still=True)
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers for in-Blender tests: enable the extension, build rigs and empties, read world positions."""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import sys
import tempfile
from collections.abc import Callable
from typing import Literal

import addon_utils
import bpy
from mathutils import Euler, Vector

REPO_NAME = "two_bone_ik_dev"
MODULE = f"bl_ext.{REPO_NAME}.two_bone_ik"


def enable_extension(repo: pathlib.Path) -> str:
    """Enable the checkout as extension ``bl_ext.two_bone_ik_dev.two_bone_ik``; returns the module name.

    A local extension repository points at a temp folder holding a link named ``two_bone_ik`` to the
    checkout (the module name comes from the folder name).
    """
    if MODULE not in {addon.module for addon in bpy.context.preferences.addons}:
        folder = pathlib.Path(tempfile.mkdtemp(prefix="two_bone_ik_repo_"))
        os.symlink(repo.resolve(), folder / "two_bone_ik")  # a relative path would dangle there
        repos = bpy.context.preferences.extensions.repos
        if repos.get(REPO_NAME) is None:
            repos.new(name=REPO_NAME, module=REPO_NAME, custom_directory=str(folder), source="USER")
        module = addon_utils.enable(MODULE, default_set=True, handle_error=None)
        if module is None:
            raise RuntimeError(f"could not enable {MODULE}: see the output above")
    return MODULE


def package():
    """The enabled extension's top-level module (for solver and driver access in tests)."""
    return importlib.import_module(MODULE)


def is_selected(obj, bone_name: str) -> bool:
    """Whether bone ``bone_name`` of armature ``obj`` is selected, where this Blender keeps the
    selection (the pose bone from 5.2, the bone before)."""
    return bool(package().compat.bone_selection_owner(obj, bone_name).select)


def make_empty(name: str, location) -> bpy.types.Object:
    obj = bpy.data.objects.new(name, None)
    obj.location = location
    bpy.context.scene.collection.objects.link(obj)
    return obj


def make_leg(
    name: str = "Leg",
    thigh=((0, 0, 1), (0, 0.05, 0.5)),
    shin=((0, 0.05, 0.5), (0, 0, 0)),
    connected: bool = True,
    roll: float = 0.0,
) -> bpy.types.Object:
    """An armature object with bones ``thigh`` and ``shin`` (armature space, metres), both rolled by
    ``roll`` (radians), active, object mode. The default is the bent leg: hip (0,0,1), knee
    (0,0.05,0.5), ankle at the origin."""
    bones: list[BoneSpec] = [("thigh", *thigh, None, False), ("shin", *shin, "thigh", connected)]
    return make_armature(name, bones, roll=roll)


# The base rig: a straight leg along +Y (hip at the origin, knee (0,1,0), ankle (0,2,0)) with its
# target and pole (world, metres): base_rig builds it.
BASE_THIGH = ((0, 0, 0), (0, 1, 0))
BASE_SHIN = ((0, 1, 0), (0, 2, 0))
BASE_TARGET = (1.2, 0, 0.5)
BASE_POLE = (1.2, 0.5, 0.5)


def base_rig(shin_tail=BASE_SHIN[1], target=BASE_TARGET, pole=BASE_POLE, name: str = "Leg"):
    """The base rig: armature ``name`` at the origin, thigh (0,0,0)->(0,1,0) and shin connected
    ->``shin_tail`` (armature space, metres), with a chain added as a script does (:func:`add_chain_at`)
    on empties "Target" and "Pole" at world ``target`` and ``pole`` (``pole`` None for none); solved,
    Object Mode. Returns (armature object, chain)."""
    return leg_with_chain(leg_bones(BASE_THIGH, shin_tail), name, target=target, pole=pole)


def add_chain(obj, target, pole, upper="thigh", lower="shin"):
    """Add a chain through the collection API, then build its mechanism as docs/operators.md tells a script
    to (Update Mechanism); returns the chain."""
    chain = obj.two_bone_ik.chains.add()
    chain.name = lower
    chain.upper_bone, chain.lower_bone = upper, lower
    chain.target, chain.pole = target, pole
    update_mechanism(obj)
    return obj.two_bone_ik.chains[-1]  # Edit Mode (bones are added) may free the old reference


def update_mechanism(obj) -> None:
    """Run pose.two_bone_ik_update_mechanism on armature ``obj`` (any mode but Edit)."""
    with bpy.context.temp_override(active_object=obj, object=obj):
        assert bpy.ops.pose.two_bone_ik_update_mechanism() == {"FINISHED"}


def world_tail(obj, bone: str) -> Vector:
    """Evaluated world-space tail of a pose bone."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    return evaluated.matrix_world @ evaluated.pose.bones[bone].tail


def world_head(obj, bone: str) -> Vector:
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    return evaluated.matrix_world @ evaluated.pose.bones[bone].head


def assert_close(actual, expected, tolerance: float) -> None:
    """Assert two 3-vectors are within ``tolerance`` (Euclidean)."""
    distance = (Vector(actual) - Vector(expected)).length
    assert distance <= tolerance, (
        f"{tuple(actual)} != {tuple(expected)} (off by {distance:.3g} > {tolerance:.3g})"
    )


# --- Helpers for the lifecycle and failure tests ---------------------------------------------------

HANDLER_LISTS = ("depsgraph_update_post", "frame_change_pre", "frame_change_post", "load_post")


def our_handlers() -> dict[str, list]:
    """This extension's functions in each handler list it may use, by list name."""
    return {
        name: [f for f in getattr(bpy.app.handlers, name) if getattr(f, "__module__", "").startswith(MODULE)]
        for name in HANDLER_LISTS
    }


def expected_handlers() -> dict[str, list[str]]:
    """The names of our functions in each handler list once the extension is enabled: the upgrade
    of older files on load; on Blender 4.4 alone also the one that makes Enabled's keys constant
    before frames and after updates (chain/enabled_keys.py). Nothing else runs per update or frame."""
    expected: dict[str, list[str]] = {name: [] for name in HANDLER_LISTS}
    expected["load_post"] = ["two_bone_ik_load_post"]
    if not importlib.import_module(f"{MODULE}.compat").BOOLEAN_KEYS_STEP:
        for name in ("depsgraph_update_post", "frame_change_pre"):
            expected[name] = ["two_bone_ik_step_enabled_keys"]
    return expected


def handler_names() -> dict[str, list[str]]:
    """:func:`our_handlers` by function name, to compare with :func:`expected_handlers`."""
    return {name: [f.__name__ for f in found] for name, found in our_handlers().items()}


def set_mode(obj, mode: Literal["OBJECT", "POSE", "EDIT"]) -> None:
    """Make ``obj`` active and switch it to ``mode`` ('OBJECT', 'POSE', 'EDIT') headless."""
    bpy.context.view_layer.objects.active = obj
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode=mode)


def select_only(obj, names) -> None:
    """Pose Mode with exactly ``names`` selected (PoseBone.select from 5.2, Bone.select before)."""
    set_mode(obj, "POSE")
    select_bone = package().compat.select_bone
    for bone in obj.pose.bones:
        select_bone(obj, bone.name, bone.name in names)


def run(operator, obj, **properties):
    """Call ``operator`` (``bpy.ops...``) with armature ``obj`` as the context's object."""
    with bpy.context.temp_override(active_object=obj, object=obj):
        return operator(**properties)


def add_chain_with_operator(obj, lower: str = "shin", controls: str = "EMPTIES", **options):
    """Run pose.two_bone_ik_add in Pose Mode with ``lower`` active; returns the new chain.
    ``controls`` is the operator's: tests about something else keep the empty controls they were
    written with (Add's own default is "BONES", tested in test_controls_in_the_rig.py)."""
    set_mode(obj, "POSE")
    pose_bone = obj.pose.bones[lower]
    with bpy.context.temp_override(active_object=obj, object=obj, active_pose_bone=pose_bone):
        assert bpy.ops.pose.two_bone_ik_add(controls=controls, **options) == {"FINISHED"}
    return obj.two_bone_ik.chains[-1]


def move_control(chain, which: str, world) -> None:
    """Put the chain's ``which`` ("target" or "pole") at world point ``world``: an object's
    location (in its parent's space), or a control bone's head (its pose); then update."""
    source = getattr(chain, which)
    bone = getattr(chain, f"{which}_bone") if source.type == "ARMATURE" else ""
    if not bone:
        source.matrix_world.translation = Vector(world)
        bpy.context.view_layer.update()
        return
    bpy.context.view_layer.update()
    pose_bone = source.pose.bones[bone]
    matrix = pose_bone.matrix.copy()
    matrix.translation = source.matrix_world.inverted() @ Vector(world)
    pose_bone.matrix = matrix
    bpy.context.view_layer.update()


def control_point(chain, which: str) -> Vector:
    """World position of the chain's ``which`` ("target" or "pole"): an object's origin, or a
    bone's point at the chain's Head/Tail (as the network reads it)."""
    source = getattr(chain, which)
    bone = getattr(chain, f"{which}_bone") if source.type == "ARMATURE" else ""
    if not bone:
        return source.matrix_world.translation.copy()
    evaluated = source.evaluated_get(bpy.context.evaluated_depsgraph_get())
    pose_bone = evaluated.pose.bones[bone]
    point = pose_bone.head.lerp(pose_bone.tail, getattr(chain, f"{which}_head_tail"))
    return evaluated.matrix_world @ point


# A bone for make_armature: (name, head, tail, parent name or None, connected), armature space.
BoneSpec = tuple[str, tuple[float, float, float], tuple[float, float, float], str | None, bool]


def make_armature(name: str, bones, roll: float = 0.0) -> bpy.types.Object:
    """An armature object from ``bones``: (name, head, tail, parent name or None, connected), armature
    space, metres; every bone rolled by ``roll`` (radians). Active, Object Mode."""
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    set_mode(obj, "EDIT")
    for bone_name, head, tail, parent, connected in bones:
        edit_bone = data.edit_bones.new(bone_name)
        edit_bone.head, edit_bone.tail = head, tail
        edit_bone.roll = roll
        if parent is not None:
            edit_bone.parent = data.edit_bones[parent]
            edit_bone.use_connect = connected
    set_mode(obj, "OBJECT")
    bpy.context.view_layer.update()
    return obj


def leg_bones(
    thigh=((0, 0, 1), (0, 0.05, 0.5)),
    shin_tail=(0, 0, 0),
    foot_tail=None,
    *,
    x: float = 0.0,
    suffix: str = "",
    hips: str | None = None,
    root: str | None = None,
    parent: str | None = None,
    connected: bool = False,
) -> list[BoneSpec]:
    """The bones of a leg for :func:`make_armature` (armature space, metres), in this order:

    - with ``root``, a bone of that name (0,0,0)->(0,0.3,0) parenting the hips (give ``hips`` too);
    - with ``hips``, a bone of that name (0,0,1.2)->(0,0,1) parenting the thigh;
    - ``thigh`` from ``thigh[0]`` to the knee ``thigh[1]``, its parent the hips, else ``parent`` (a
      bone the caller lists), connected to it with ``connected``;
    - ``shin`` connected, from the knee to ``shin_tail``;
    - with ``foot_tail``, ``foot`` connected, from ``shin_tail`` to ``foot_tail``.

    The leg's bones (not root or hips) are moved ``x`` along X and named with ``suffix`` ("thigh.L").
    The default is :func:`make_leg`'s bent leg: hip (0,0,1), knee (0,0.05,0.5), ankle at the origin.
    """

    def moved(point) -> tuple[float, float, float]:
        return (point[0] + x, point[1], point[2])

    names = {bone: f"{bone}{suffix}" for bone in ("thigh", "shin", "foot")}
    bones: list[BoneSpec] = []
    if root:
        bones.append((root, (0, 0, 0), (0, 0.3, 0), None, False))
    if hips:
        bones.append((hips, (0, 0, 1.2), (0, 0, 1.0), root, False))
    bones += [
        (names["thigh"], moved(thigh[0]), moved(thigh[1]), hips or parent, connected),
        (names["shin"], moved(thigh[1]), moved(shin_tail), names["thigh"], True),
    ]
    if foot_tail is not None:
        bones.append((names["foot"], moved(shin_tail), moved(foot_tail), names["shin"], True))
    return bones


def add_chain_at(
    obj,
    target=None,
    pole=None,
    *,
    controls: Literal["SCRIPT", "EMPTIES", "BONES"] = "SCRIPT",
    upper: str = "thigh",
    lower: str = "shin",
    names: tuple[str, str] = ("Target", "Pole"),
):
    """Add a chain on ``upper``/``lower`` of armature ``obj``; returns it, updated, Object Mode.

    ``controls`` "SCRIPT": as a script does (:func:`add_chain`), on empties named ``names`` made at
    world points ``target`` and ``pole`` (metres); an object is used as it is, None is none.
    "EMPTIES" or "BONES": with the Add operator on ``lower`` (:func:`add_chain_with_operator`), which
    makes the controls at the leg's end; then, for empties, ``target`` and ``pole`` when given are
    the empties' new locations (world: Add's empties have no parent).
    """
    if controls == "SCRIPT":

        def control(name: str, point):
            if point is None or isinstance(point, bpy.types.Object):
                return point
            return make_empty(name, point)

        chain = add_chain(obj, control(names[0], target), control(names[1], pole), upper, lower)
    else:
        assert controls == "EMPTIES" or (target is None and pole is None), (
            "control bones stay where Add puts them"
        )
        add_chain_with_operator(obj, lower, controls=controls)
        set_mode(obj, "OBJECT")
        chain = obj.two_bone_ik.chains[-1]
        for which, point in (("target", target), ("pole", pole)):
            if point is not None:
                getattr(chain, which).location = point
    bpy.context.view_layer.update()
    return obj.two_bone_ik.chains[chain.name]


def leg_with_chain(bones=None, name: str = "Leg", *, roll: float = 0.0, location=None, **chain):
    """Armature ``name`` from ``bones`` (:func:`make_armature`; default :func:`leg_bones`, the bent
    leg), every bone rolled by ``roll`` (radians), the object at world ``location`` (metres; default
    the origin), with a chain added by :func:`add_chain_at` with ``chain`` (``target``, ``pole``,
    ``controls``, ``upper``, ``lower``, ``names``). Object Mode, updated. Returns (armature object,
    chain)."""
    obj = make_armature(name, leg_bones() if bones is None else bones, roll=roll)
    if location is not None:
        obj.location = location
    return obj, add_chain_at(obj, **chain)


def set_pose(obj, rotations) -> None:
    """Turn pose bones of ``obj`` by hand: ``rotations`` maps a bone name to an XYZ Euler (radians),
    set as its rotation_quaternion; then update."""
    for name, euler in rotations.items():
        obj.pose.bones[name].rotation_quaternion = Euler(euler).to_quaternion()
    bpy.context.view_layer.update()


def chain_length(obj, upper: str = "thigh", lower: str = "shin") -> float:
    """Rest length of a chain (upper head -> lower head -> lower tail), armature units."""
    bones = obj.data.bones
    return (bones[lower].head_local - bones[upper].head_local).length + bones[lower].length


def expected_world(obj, target_world, pole_world, upper: str = "thigh", lower: str = "shin", **settings):
    """World (joint, end, reachable) the solver gives for a world target and pole (contract D6);
    ``settings``: the solver's twist and softness.

    The root is the upper bone's rest head: true for a root bone whose location is not posed.
    """
    from solver import solve_two_bone_ik

    bones = obj.data.bones
    world = obj.matrix_world
    to_armature = world.inverted()
    root = bones[upper].head_local
    result = solve_two_bone_ik(
        root,
        to_armature @ Vector(target_world),
        to_armature @ Vector(pole_world),
        (bones[lower].head_local - root).length,
        bones[lower].length,
        tolerance=1e-6,
        **settings,
    )
    return world @ Vector(result.joint), world @ Vector(result.end), result.reachable


def solve_miss(obj, chain) -> float:
    """World distance of the chain's evaluated end from the solver's end for its target and pole."""
    _, end, _ = expected_world(
        obj,
        chain.target.matrix_world.translation,
        chain.pole.matrix_world.translation,
        chain.upper_bone,
        chain.lower_bone,
    )
    return (world_tail(obj, chain.lower_bone) - end).length


def user_bones(obj) -> list:
    """The pose bones of the animator's rig: every pose bone but the chains' mechanism bones
    ("MCH-IK-<bone>", which the network poses and the chain bones' constraints copy)."""
    return [pose_bone for pose_bone in obj.pose.bones if not pose_bone.name.startswith("MCH-IK-")]


def pose_snapshot(obj, bones=None) -> list[tuple]:
    """Every pose bone's (or only ``bones``') matrix_basis as plain floats (compare bit for bit)."""
    return [
        (pose_bone.name, tuple(v for row in pose_bone.matrix_basis for v in row))
        for pose_bone in (obj.pose.bones if bones is None else bones)
    ]


def chain_snapshot(obj) -> list[dict]:
    """Every stored property of every chain of ``obj`` as plain values (compare bit for bit); the
    read-only ones are computed live from the pose, not stored."""
    snapshots = []
    for chain in obj.two_bone_ik.chains:
        values = {}
        for prop in chain.bl_rna.properties:
            if prop.identifier == "rna_type" or prop.is_readonly:
                continue
            value = getattr(chain, prop.identifier)
            if prop.type == "POINTER":
                value = value.name_full if value is not None else None
            elif not isinstance(value, (str, bool, int, float)):
                value = tuple(value)  # vectors and arrays
            values[prop.identifier] = value
        snapshots.append(values)
    return snapshots


def fcurves(obj) -> list:
    """The F-curves animating ``obj`` (the bound slot's channelbag on 4.4+, else action.fcurves)."""
    found = package().compat.action_fcurves(obj)
    return list(found) if found is not None else []


def keyframe_snapshot(obj) -> dict:
    """(data_path, index) -> every key's (co, handles, interpolation), to prove keys are untouched."""
    return {
        (fcurve.data_path, fcurve.array_index): [
            (tuple(key.co), tuple(key.handle_left), tuple(key.handle_right), key.interpolation)
            for key in fcurve.keyframe_points
        ]
        for fcurve in fcurves(obj)
    }


class UpdateProbe:
    """Counts update handler calls and the pose and chain writes made between them: the extension
    runs nothing per update, so a test expects no writes (and a fixed count of calls).

    Installs one handler first and one last in ``depsgraph_update_post`` and
    ``frame_change_post``; a call whose armature snapshot differs between the two is a write.
    Objects are looked up by name on each call (nothing held across updates).
    """

    def __init__(self, *armature_names: str):
        self.names = armature_names
        self.calls = {"depsgraph_update_post": 0, "frame_change_post": 0}
        self.pose_writes = 0
        self.chain_writes = 0
        self.depth = self.max_depth = 0  # a driver that runs an update inside the handler nests calls
        self._before = None
        self._installed: list[tuple[list[Callable[..., None]], Callable[..., None]]] = []

    def _state(self):
        objects = [bpy.data.objects.get(name) for name in self.names]
        return [(pose_snapshot(obj), chain_snapshot(obj)) for obj in objects if obj is not None]

    def __enter__(self):
        for list_name in self.calls:
            handler_list = getattr(bpy.app.handlers, list_name)

            def before(scene, depsgraph=None):
                self.depth += 1
                self.max_depth = max(self.max_depth, self.depth)
                self._before = self._state()

            def after(scene, depsgraph=None, list_name=list_name):
                self.calls[list_name] += 1
                self.depth -= 1
                now = self._state()
                if self._before is not None:
                    self.pose_writes += sum(
                        old[0] != new[0] for old, new in zip(self._before, now, strict=True)
                    )
                    self.chain_writes += sum(
                        old[1] != new[1] for old, new in zip(self._before, now, strict=True)
                    )
                self._before = None

            handler_list.insert(0, before)
            handler_list.append(after)
            self._installed += [(handler_list, before), (handler_list, after)]
        return self

    def __exit__(self, *exc):
        for handler_list, function in self._installed:
            if function in handler_list:
                handler_list.remove(function)
        return False


def setup_marker_render(scene, obj, bone: str, center, size: float = 2.0, resolution: int = 256) -> str:
    """Workbench, flat object colour, transparent film; an orthographic camera looking along +Y at
    ``center`` (world x, z) covering ``size`` metres; a small cube bone-parented at ``bone``'s tail.

    Returns the marker's name. Only the marker renders (armatures and empties do not).
    """
    import math

    import bmesh

    mesh = bpy.data.meshes.new("Marker")
    builder = bmesh.new()
    bmesh.ops.create_cube(builder, size=size / 50)
    builder.to_mesh(mesh)
    builder.free()
    marker = bpy.data.objects.new("Marker", mesh)
    scene.collection.objects.link(marker)
    marker.parent, marker.parent_type, marker.parent_bone = obj, "BONE", bone  # sits at the bone's tail
    marker.color = (1.0, 0.2, 0.0, 1.0)
    camera_data = bpy.data.cameras.new("Camera")
    camera = bpy.data.objects.new("Camera", camera_data)
    scene.collection.objects.link(camera)
    camera_data.type, camera_data.ortho_scale = "ORTHO", size
    camera.location = (center[0], -10.0, center[1])
    camera.rotation_euler = (math.pi / 2, 0.0, 0.0)  # image x = world x, image up = world z
    scene.camera = camera
    render = scene.render
    render.engine = "BLENDER_WORKBENCH"
    render.resolution_x = render.resolution_y = resolution
    render.resolution_percentage = 100
    render.film_transparent = True
    render.image_settings.file_format = "PNG"
    render.image_settings.color_mode = "RGBA"
    scene.display.shading.light = "FLAT"
    scene.display.shading.color_type = "OBJECT"
    return marker.name


def marker_world(path, center, size: float = 2.0):
    """World (x, z) of the alpha-weighted centroid of a ``setup_marker_render`` image, or None if empty."""
    image = bpy.data.images.load(str(path), check_existing=False)
    try:
        width, height = image.size
        pixels = image.pixels[:]  # type: ignore[index]  # a float array; the stub says float
    finally:
        bpy.data.images.remove(image)
    total = sum_x = sum_y = 0.0
    for index in range(width * height):
        alpha = pixels[4 * index + 3]
        if alpha > 0.0:
            row, column = divmod(index, width)  # rows start at the bottom
            total += alpha
            sum_x += alpha * (column + 0.5)
            sum_y += alpha * (row + 0.5)
    if total == 0.0:
        return None
    metres = size / max(width, height)
    return (
        center[0] + (sum_x / total - width / 2) * metres,
        center[1] + (sum_y / total - height / 2) * metres,
    )


# --- A second Blender, for what must not run in the test session (CLI, headless UI layouts) ---------


def exited_cleanly(returncode: int) -> bool:
    """Whether a Blender process ended as it should: status 0 on every supported version (a crash
    or hang at exit fails; docs/blender-4.2-exit-crash.md)."""
    return returncode == 0


def run_blender(code: str, timeout: float = 180.0, enable: bool = True):
    """Run ``code`` in a fresh Python process with real bpy and this checkout enabled as the
    extension (with ``enable`` False: never enabled, as in a Blender without it; own user folder,
    nothing shared with the test session). ``code`` may use ``bpy``, ``package()`` and ``json``.
    Returns the ``subprocess.CompletedProcess`` (text stdout/stderr); check its status with
    :func:`exited_cleanly`.
    """
    import subprocess
    import sys
    import textwrap

    here = pathlib.Path(__file__).resolve().parent
    prologue = textwrap.dedent(
        f"""
        import json, os, pathlib, sys, tempfile
        _user = tempfile.mkdtemp(prefix="two_bone_ik_user_")
        os.environ["BLENDER_USER_RESOURCES"] = _user
        os.environ["XDG_CACHE_HOME"] = os.path.join(_user, "cache")
        sys.path.insert(0, {str(here)!r})
        import bpy
        from blender_rig import enable_extension, package
        if {enable!r}:
            enable_extension(pathlib.Path({str(here.parents[1])!r}))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", prologue + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def make_legs(
    left: str = ".L", right: str | None = ".R", hips: bool = False, bend: float = 0.0
) -> bpy.types.Object:
    """Armature "Legs" with two straight legs: thigh<side> (±0.2,0,0)->(±0.2,1,``bend``) and
    shin<side> connected ->(±0.2,2,0) (armature space, metres), ``left`` at +x (``right`` None for
    the left leg alone); with ``hips``, a "hips" bone (0,-0.5,0)->(0,0,0) parents both thighs (not
    connected). A ``bend`` raises the knees so that the rest bend plane is defined."""
    bones: list[BoneSpec] = [("hips", (0, -0.5, 0), (0, 0, 0), None, False)] if hips else []
    for suffix, x in ((left, 0.2), (right, -0.2)):
        if suffix is not None:
            knee = ((0, 0, 0), (0, 1, bend))
            bones += leg_bones(knee, (0, 2, 0), x=x, suffix=suffix, parent="hips" if hips else None)
    return make_armature("Legs", bones)


def make_leg_with_foot(name: str = "Leg", foot_tail=(0, 2, 0.4)) -> bpy.types.Object:
    """The base rig's leg, thigh (0,0,0)->(0,1,0) and shin ->(0,2,0), with a connected "foot"
    ->``foot_tail`` (armature space, metres; the bone End Rotation turns)."""
    return make_armature(name, leg_bones(BASE_THIGH, BASE_SHIN[1], foot_tail))


def leg_with_ik_twin(name: str = "Leg"):
    """The leg with a foot (:func:`make_leg_with_foot`) and a chain on control bones, Twist 0.3 rad
    and rolls 0.4 and -0.3 rad set (as Snap IK to FK sets them for an FK pose bent off the hinge);
    and beside it the same leg posed by Blender's IK constraint on the same controls. Returns (the
    leg, its twin, the chain)."""
    obj = make_leg_with_foot(name)
    chain = add_chain_at(obj, controls="BONES")
    shin = obj.pose.bones["shin"]
    shin["IK Twist"], shin["IK Upper Roll"], shin["IK Lower Roll"] = 0.3, 0.4, -0.3
    native = make_leg_with_foot(f"{name} Blender IK")
    ik = native.pose.bones["shin"].constraints.new("IK")
    ik.target, ik.subtarget, ik.chain_count = obj, chain.target_bone, 2
    bpy.context.view_layer.update()
    return obj, native, obj.two_bone_ik.chains[0]


# (The depsgraph prints "Failed to add relation" for a constraint aimed at a bone that is gone.)
CONSOLE_ERRORS = ("Traceback", "Two-Bone IK:", "ReferenceError", "RecursionError", "Failed to add relation")


def assert_console_clean(capfd) -> None:
    """No traceback, message of ours or depsgraph error reached the console (C-level output
    included)."""
    out, err = capfd.readouterr()
    for text in CONSOLE_ERRORS:
        assert text not in out + err, f"{text!r} in the console:\n{out}{err}"


def delete_constraint(obj, name: str, bone: str = "") -> None:
    """Delete constraint ``name`` of ``obj`` (of its pose bone ``bone`` when given) as the Properties
    editor does, which rebuilds the depsgraph relations (a script's ``constraints.remove`` does
    not: Blender then evaluates the old relations, a cycle for example, until something else
    rebuilds them)."""
    override = {"object": obj, "active_object": obj}
    if bone:
        override["pose_bone"] = override["active_pose_bone"] = obj.pose.bones[bone]
    with bpy.context.temp_override(**override):
        result = bpy.ops.constraint.delete(constraint=name, owner="BONE" if bone else "OBJECT")
    assert result == {"FINISHED"}


def key_setting(chain, name: str, frame: int) -> None:
    """Key chain setting ``name`` (influence, enabled, twist, softness) at ``frame`` where it plays
    with or without the extension: its network's root bone (chain/settings.py, ``path``)."""
    owner, path = importlib.import_module(f"{MODULE}.chain.settings").path(chain, name)
    owner.keyframe_insert(path, frame=frame)


def generate_rigify_human(in_this_file: bool = False):
    """A rig generated by Rigify from its Human metarig (:func:`generate_rigify`)."""
    return generate_rigify("human", in_this_file)


def generate_rigify(metarig: str, in_this_file: bool = False):
    """A rig generated by Rigify (it ships with Blender) from its metarig ``metarig`` (``human``,
    ``wolf``...: ``bpy.ops.object.armature_<metarig>_metarig_add``), in an empty file
    (``in_this_file``: in this file, its objects deleted first, as a windowed session keeps its
    screen); the metarig is deleted and the rig is active. Run it in a Blender process of its own
    (:func:`run_blender`): Rigify cannot be unloaded cleanly from a session."""
    import addon_utils  # Blender's: importable once bpy is

    addon_utils.enable("rigify", default_set=True, handle_error=None)
    if in_this_file:
        for obj in list(bpy.data.objects):
            bpy.data.objects.remove(obj)
    else:
        bpy.ops.wm.read_homefile(use_empty=True)
    getattr(bpy.ops.object, f"armature_{metarig}_metarig_add")()
    metarig_object = bpy.context.view_layer.objects.active
    assert metarig_object is not None, f"no {metarig} metarig was added"
    metarig_object.select_set(True)
    # No context override: Rigify makes the new rig the active object and checks it is.
    assert bpy.ops.pose.rigify_generate() == {"FINISHED"}
    rig = metarig_object.data.rigify_target_rig
    bpy.data.objects.remove(metarig_object)
    bpy.context.view_layer.objects.active = rig
    bpy.context.view_layer.update()
    return rig


def mirrored_legs_bones() -> list:
    """Two legs for :func:`make_armature` (armature space, metres): root (0,0,0)->(0,0.3,0); per side
    hips (±0.05,0,1.2)->(±0.1,0,1.0), thigh (±0.1,0,1)->(±0.1,0.05,0.5), shin ->(±0.1,0,0), foot
    ->(±0.1,-0.15,-0.05), connected: symmetric about X = 0 with Blender's mirrored names (.L on +X)."""
    bones: list[BoneSpec] = [("root", (0, 0, 0), (0, 0.3, 0), None, False)]
    for suffix, x in ((".L", 0.1), (".R", -0.1)):
        bones += [
            (f"hips{suffix}", (x / 2, 0, 1.2), (x, 0, 1.0), "root", False),
            (f"thigh{suffix}", (x, 0, 1), (x, 0.05, 0.5), f"hips{suffix}", True),
            (f"shin{suffix}", (x, 0.05, 0.5), (x, 0, 0), f"thigh{suffix}", True),
            (f"foot{suffix}", (x, 0, 0), (x, -0.15, -0.05), f"shin{suffix}", True),
        ]
    return bones


# The deform bones of a generated Rigify human's left leg and arm.
RIGIFY_LEFT_DEFORM = {
    "leg": ["DEF-thigh.L", "DEF-thigh.L.001", "DEF-shin.L", "DEF-shin.L.001", "DEF-foot.L", "DEF-toe.L"],
    "arm": ["DEF-upper_arm.L", "DEF-upper_arm.L.001", "DEF-forearm.L", "DEF-forearm.L.001", "DEF-hand.L"],
}


def release_rigify() -> None:
    """Undo what Rigify and its rigs' UI scripts registered, at the end of a probe: their callbacks
    would keep bpy alive past Python's shutdown, and bpy 4.2 would crash and 4.5 hang at exit
    (docs/blender-4.2-exit-crash.md)."""
    for name in dir(bpy.types):
        cls = getattr(bpy.types, name)
        if isinstance(cls, type) and cls.__module__ == "builtins" and getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)  # a rig's UI script
    addon_utils.disable("rigify", default_set=True)
    for name, module in list(sys.modules.items()):
        if name == "rigify" or name.startswith("rigify."):
            vars(module).clear()


def run_probe(probe: pathlib.Path, timeout: float = 600.0) -> tuple[dict, str]:
    """Run the script ``probe`` in a fresh Blender (:func:`run_blender`), which prints one line
    ``RESULT <json>``; returns that JSON and the process's whole output. Fails the calling test
    when the process did not end cleanly or printed no result."""
    process = run_blender(
        f"exec(compile(open({str(probe)!r}).read(), {probe.stem!r}, 'exec'))", timeout=timeout
    )
    lines = [line for line in process.stdout.splitlines() if line.startswith("RESULT ")]
    assert exited_cleanly(process.returncode) and lines, process.stdout[-5000:] + process.stderr[-5000:]
    return json.loads(lines[-1][len("RESULT ") :]), process.stdout

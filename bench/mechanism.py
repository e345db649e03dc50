# SPDX-License-Identifier: GPL-3.0-or-later
"""Output-mechanism benchmark: how should the IK driver hand its solved pose to Blender?

A standalone prototype (the extension is not enabled). It builds N leg armatures (thigh, shin and a
child foot; one chain per armature object, each with its own armature data, a target and a pole
empty) once per variant, and measures the wall time of one ``view_layer.update()`` after every
target empty was moved a little. The variants:

- ``N``  native: Blender's IK constraint on the shin (chain count 2, target, pole); no handler.
- ``W``  0.1.0 style: a ``depsgraph_update_post`` handler writes the chain bones' own ``matrix_basis``
  (the animator's channels).
- ``A``  Rigify pattern: two hidden, non-deforming, unparented mechanism bones MCH-thigh and MCH-shin
  (same head, tail and roll as the chain bones, in a hidden bone collection); a Copy Transforms
  constraint (Local to Local, Replace) on each chain bone targets its MCH bone; the handler writes
  the MCH bones' ``matrix_basis``.
- ``Bl`` no extra bones, one Limit Rotation constraint per chain bone (Local space, XYZ, all three
  axes limited with min == max = the solved Euler angle): a rotation "replace" that keeps FK location
  and scale and needs no target at all. The handler writes min and max of the three axes. This is
  the no-extra-bones carrier we recommend (see ``carrier_notes`` in the JSON).
- ``Bx`` no extra bones, one Transformation constraint per chain bone (Local space, rotation mix
  Replace, from-ranges left at zero so the output is the constant ``to_min_*_rot`` Euler); the
  handler writes those three angles. It needs a valid target although it ignores it: a bone
  constraint whose target is its own armature object without a subtarget is invalid (disabled), so
  the target is one static empty per scene ("anchor").
- ``Bc`` no extra bones, one Child Of constraint per chain bone. Its target cannot be the armature
  object itself (invalid, as above), so it is the static anchor empty; the handler writes
  ``inverse_matrix`` so that the bone lands on the solved pose:
  ``inverse = T^-1 @ M @ P_solved @ P_pre^-1`` (``T`` the anchor's and ``M`` the armature's world
  matrix, ``P`` armature-space poses, ``P_pre`` the bone's pose before its constraints, i.e. its FK
  basis on the already-solved parent). On a bone, Child Of's owner space is POSE and it skips the
  conversion back (CONSTRAINT_SPACEONCE): the final pose is ``M^-1 @ T @ inverse @ P_pre``, which is
  why "Set Inverse" stores ``T^-1 @ M``.

Every carrier constraint (A, Bl, Bx, Bc) has a driven influence: a SCRIPTED driver ``influence *
enabled`` with two SINGLE_PROP variables reading ``obj["ik_influence"]`` and ``obj["ik_enabled"]``.

The handlers write a precomputed solved pose (thigh +0.3 rad, shin -0.6 rad about X, plus a 1e-3 rad
step that alternates between updates so every timed update really writes and re-evaluates, as a
driver following a moving target would); they compare before writing, so they cannot loop. They do
not read the target or solve, so the handler variants' Python cost is a lower bound of a real
driver's; the time spent inside the handler is reported separately.

``A0`` is A without the drivers (constant influence 1), to show what the drivers cost.

Timing: for each N (1, 10, 100, 500) the seven scenes are built in one file, then each repetition
measures every variant once in a shuffled order (interleaved; the scene is made the window's scene
and settled outside the timed region). Reported: median microseconds per chain per update, the
ratio to native, and the medians inside and outside the handler. Caveat: all seven scenes share
bpy.data, so at N = 500 the file holds about 10,500 objects; writing a property of a constraint
that has a target (Bx, Bc) runs Blender's validity test, which walks bpy.data.objects up to the
target, so those two handlers pay for the file size (see the write costs below).

One-time cost of A: the batch build of each timing scene (one multi-object edit session for all N
armatures, then constraints and drivers), per chain. Then, in a fresh file with 0 and with 5,000
extra empties in the scene: 20 single-leg armatures each built with its own edit-mode toggle (what
an operator acting on one rig does), and one armature holding 20 legs built in one toggle. Also in
those two files: the cost of one RNA write of each handler's carrier value.

Correctness: with the FK pose non-trivial and the object moved, rotated and scaled, each carrier is
checked against the "local-space blend" rule (per bone, the basis is FK location and scale with the
rotation slerped from the FK rotation to the solved rotation by the influence; poses follow from
these bases through ``Bone.convert_local_to_pose``). Reported: the max world-space error of the shin
tail (and of all three tails) at influence 1.0, 0.5 and with ``ik_enabled`` 0, for a uniformly and a
non-uniformly scaled object.

Prints tables and writes JSON (default /tmp/mechanism_results.json).

Run: ``.venv/bin/python bench/mechanism.py [--repeats 25] [--sizes 1 10 100 500]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, field

os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="two_bone_ik_mech_"))
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(os.environ["BLENDER_USER_RESOURCES"], "cache"))

import bpy
from mathutils import Euler, Matrix, Quaternion, Vector

SIZES = (1, 10, 100, 500)
VARIANTS = ("N", "W", "A", "A0", "Bl", "Bx", "Bc")
LABELS = {
    "N": "native IK constraint",
    "W": "handler -> chain matrix_basis (0.1.0)",
    "A": "handler -> MCH bones + Copy Transforms",
    "A0": "A without the influence drivers",
    "Bl": "handler -> Limit Rotation min=max",
    "Bx": "handler -> Transformation constraint",
    "Bc": "handler -> Child Of inverse_matrix",
}
CHAIN = ("thigh", "shin")
MCH = {"thigh": "MCH-thigh", "shin": "MCH-shin"}
CARRIER = "IK Output"  # name of the carrier constraint on each chain bone (A, Bl, Bx, Bc)
SOLVED = {"thigh": 0.3, "shin": -0.6}  # solved basis rotation about X, radians
STEP = 1e-3  # alternating extra rotation (radians) so consecutive updates write different poses
EPS = 1e-6  # change guard of the handlers: Blender stores poses in float32 (contract D2)


# --------------------------------------------------------------------------------------------- rigs
def suffixes(chains: int) -> tuple[str, ...]:
    """Bone-name suffixes of ``chains`` legs in one armature ("" for a single leg)."""
    return ("",) if chains == 1 else tuple(f".{index:03d}" for index in range(chains))


def make_template(chains: int = 1) -> bpy.types.Armature:
    """Armature data with ``chains`` legs: thigh, shin (connected) and foot (connected child of the shin)."""
    data = bpy.data.armatures.new("LegTemplate")
    obj = bpy.data.objects.new("LegTemplate", data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode="EDIT")
        for index, suffix in enumerate(suffixes(chains)):
            x = index * 0.5
            thigh = data.edit_bones.new(f"thigh{suffix}")
            thigh.head, thigh.tail = (x, 0, 1), (x, 0.05, 0.5)
            shin = data.edit_bones.new(f"shin{suffix}")
            shin.head, shin.tail, shin.parent, shin.use_connect = (x, 0.05, 0.5), (x, 0, 0), thigh, True
            foot = data.edit_bones.new(f"foot{suffix}")
            foot.head, foot.tail, foot.parent, foot.use_connect = (x, 0, 0), (x, -0.15, 0), shin, True
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.data.objects.remove(obj)
    return data


def add_mechanism_bones(objects: list[bpy.types.Object], chain_suffixes: tuple[str, ...] = ("",)) -> None:
    """MCH-thigh and MCH-shin copies of each chain's bones: unparented, non-deforming, hidden.

    One edit-mode session for all ``objects`` (multi-object editing: they are selected, the first is
    active).
    """
    view_layer = bpy.context.view_layer
    for other in view_layer.objects.selected:
        other.select_set(False)
    for obj in objects:
        obj.select_set(True)
    view_layer.objects.active = objects[0]
    with bpy.context.temp_override(active_object=objects[0], object=objects[0]):
        bpy.ops.object.mode_set(mode="EDIT")
        for obj in objects:
            data = obj.data
            assert obj.mode == "EDIT", obj.name
            collection = data.collections.get("MCH") or data.collections.new("MCH")
            collection.is_visible = False
            for suffix in chain_suffixes:
                for name in CHAIN:
                    source = data.edit_bones[name + suffix]
                    bone = data.edit_bones.new(MCH[name] + suffix)
                    bone.head, bone.tail, bone.roll = source.head, source.tail, source.roll
                    bone.use_deform = False
                    collection.assign(bone)
        bpy.ops.object.mode_set(mode="OBJECT")
    for obj in objects:
        obj.select_set(False)


def add_influence_driver(obj: bpy.types.Object, constraint: bpy.types.Constraint) -> bpy.types.Driver:
    """Drive ``constraint.influence`` with ``influence * enabled`` from the object's custom properties."""
    driver = constraint.driver_add("influence").driver
    driver.type = "SCRIPTED"
    for name, prop in (("influence", "ik_influence"), ("enabled", "ik_enabled")):
        variable = driver.variables.new()
        variable.name, variable.type = name, "SINGLE_PROP"
        variable.targets[0].id_type = "OBJECT"
        variable.targets[0].id = obj
        variable.targets[0].data_path = f'["{prop}"]'
    driver.expression = "influence * enabled"
    assert driver is not None
    return driver


def add_carrier(pose_bone: bpy.types.PoseBone, variant: str, anchor: bpy.types.Object | None):
    """The variant's carrier constraint on ``pose_bone`` (named CARRIER), not yet driven.

    ``anchor`` is the static empty that Bx and Bc target: a bone constraint whose target is its own
    armature object without a subtarget is invalid (disabled), so those two need another object.
    """
    if variant == "A":
        constraint = pose_bone.constraints.new("COPY_TRANSFORMS")
        constraint.target = pose_bone.id_data
        constraint.subtarget = "MCH-" + pose_bone.name
        constraint.owner_space = constraint.target_space = "LOCAL"
        constraint.mix_mode = "REPLACE"
    elif variant == "Bl":
        constraint = pose_bone.constraints.new("LIMIT_ROTATION")
        constraint.owner_space = "LOCAL"
        constraint.euler_order = "XYZ"
        constraint.use_limit_x = constraint.use_limit_y = constraint.use_limit_z = True
    elif variant == "Bx":
        constraint = pose_bone.constraints.new("TRANSFORM")
        constraint.target = anchor  # needs a valid target; its values are ignored (zero from-range)
        constraint.owner_space = constraint.target_space = "LOCAL"
        constraint.map_to = "ROTATION"
        constraint.to_euler_order = "XYZ"
        constraint.mix_mode_rot = "REPLACE"
    else:  # Bc
        constraint = pose_bone.constraints.new("CHILD_OF")
        constraint.target = anchor
        constraint.set_inverse_pending = False  # a new Child Of sets its inverse on first evaluation
        constraint.inverse_matrix = Matrix.Identity(4)
    constraint.name = CARRIER
    return constraint


def add_carriers(
    obj: bpy.types.Object,
    variant: str,
    anchor: bpy.types.Object | None,
    chain_suffixes: tuple[str, ...] = ("",),
    driven: bool = True,
) -> list[bpy.types.Driver]:
    """The carrier constraint, with its influence driver if ``driven``, on each chain bone; the drivers."""
    obj["ik_influence"] = 1.0
    obj["ik_enabled"] = 1
    drivers = []
    for suffix in chain_suffixes:
        for name in CHAIN:
            constraint = add_carrier(obj.pose.bones[name + suffix], variant, anchor)
            if driven:
                drivers.append(add_influence_driver(obj, constraint))
    return drivers


@dataclass
class Rig:
    """One variant's scene of ``count`` leg armatures and what its handler writes."""

    variant: str
    scene: bpy.types.Scene
    anchor: bpy.types.Object
    objects: list = field(default_factory=list)
    targets: list = field(default_factory=list)
    items: list = field(default_factory=list)  # per written bone: (carrier, (value phase 0, phase 1))
    phase: int = 0
    handler_seconds: float = 0.0
    build_seconds: dict = field(default_factory=dict)  # A: one-time mechanism build (batch), by step

    @property
    def view_layer(self) -> bpy.types.ViewLayer:
        return self.scene.view_layers[0]


def make_anchor(scene: bpy.types.Scene) -> bpy.types.Object:
    """The scene's static empty at the world origin, the target of the Bx and Bc constraints."""
    anchor = bpy.data.objects.new(f"{scene.name}-anchor", None)
    scene.collection.objects.link(anchor)
    return anchor


def activate(scene: bpy.types.Scene) -> None:
    """Make ``scene`` the window's scene (its depsgraph active, as in a real session)."""
    if bpy.context.window.scene != scene:
        bpy.context.window.scene = scene


def build_rig(variant: str, count: int, template: bpy.types.Armature) -> Rig:
    """A new scene with ``count`` legs rigged for ``variant``, evaluated once, handler items ready."""
    scene = bpy.data.scenes.new(f"{variant}-{count}")
    activate(scene)
    rig = Rig(variant, scene, make_anchor(scene))
    poles = []
    for index in range(count):
        x, y = index % 25 * 2.0, index // 25 * 2.0
        obj = bpy.data.objects.new(f"{variant}Leg{index}", template.copy())
        obj.location = (x, y, 0.0)
        target = bpy.data.objects.new(f"{variant}Target{index}", None)
        target.location = (x, y + 0.2, 0.1)
        pole = bpy.data.objects.new(f"{variant}Pole{index}", None)
        pole.location = (x, y + 1.0, 0.5)
        for item in (obj, target, pole):
            scene.collection.objects.link(item)
        rig.objects.append(obj)
        rig.targets.append(target)
        poles.append(pole)
    rig.view_layer.update()  # obj.pose exists only after an evaluation
    if variant in ("A", "A0"):  # all N armatures in one multi-object edit session
        start = time.perf_counter()
        add_mechanism_bones(rig.objects)
        rig.build_seconds["edit_mode_bones"] = time.perf_counter() - start
    start = time.perf_counter()
    for obj, target, pole in zip(rig.objects, rig.targets, poles, strict=True):
        if variant == "N":
            constraint = obj.pose.bones["shin"].constraints.new("IK")
            constraint.target, constraint.pole_target, constraint.chain_count = target, pole, 2
        elif variant == "A0":
            add_carriers(obj, "A", rig.anchor, driven=False)
        elif variant in ("A", "Bl", "Bx", "Bc"):
            add_carriers(obj, variant, rig.anchor)
    rig.build_seconds["constraints_drivers"] = time.perf_counter() - start
    rig.view_layer.update()
    for obj in rig.objects:
        fk = {name: obj.pose.bones[name].matrix_basis.copy() for name in CHAIN}
        phases = [carrier_values(obj, fk, solved_bases(fk, step * STEP), rig.anchor) for step in (0, 1)]
        for name in CHAIN:
            if variant == "W":
                rig.items.append((obj.pose.bones[name], (phases[0]["W"][name], phases[1]["W"][name])))
            elif variant in ("A", "A0"):
                rig.items.append((obj.pose.bones[MCH[name]], (phases[0]["W"][name], phases[1]["W"][name])))
            elif variant in ("Bl", "Bx", "Bc"):
                constraint = obj.pose.bones[name].constraints[CARRIER]
                rig.items.append((constraint, (phases[0][variant][name], phases[1][variant][name])))
    return rig


# -------------------------------------------------------------------------------------------- math
def solved_bases(fk: dict[str, Matrix], step: float = 0.0) -> dict[str, Matrix]:
    """The solved basis per chain bone: FK location and scale, rotation SOLVED (+ step) about X."""
    result = {}
    for name in CHAIN:
        location, _rotation, scale = fk[name].decompose()
        angle = SOLVED[name] + (step if name == "thigh" else -step)
        result[name] = Matrix.LocRotScale(location, Quaternion((1, 0, 0), angle), scale)
    return result


def chain_poses(obj: bpy.types.Object, bases: dict[str, Matrix]) -> dict[str, Matrix]:
    """Armature-space pose matrices of thigh and shin from their bases (every bone flag honoured)."""
    bones = obj.data.bones
    thigh = bones["thigh"].convert_local_to_pose(bases["thigh"], bones["thigh"].matrix_local)
    shin = bones["shin"].convert_local_to_pose(
        bases["shin"],
        bones["shin"].matrix_local,
        parent_matrix=thigh,
        parent_matrix_local=bones["thigh"].matrix_local,
    )
    return {"thigh": thigh, "shin": shin}


def carrier_values(
    obj: bpy.types.Object, fk: dict[str, Matrix], solved: dict[str, Matrix], anchor: bpy.types.Object
) -> dict:
    """What each variant's handler writes per chain bone to reach ``solved`` from the FK bases ``fk``.

    W and A: the solved basis matrix. Bl and Bx: its rotation as XYZ Euler angles. Bc: the Child Of
    inverse. On a bone, Child Of (owner space POSE, no conversion back to world) yields the pose
    ``M^-1 @ T @ inverse @ P_pre``, with ``T`` the target's (anchor's) world matrix, ``M`` the
    armature's and ``P_pre`` the bone's armature-space pose before its constraints (FK basis on the
    already-solved parent). Asking for ``P_solved`` gives ``inverse = T^-1 @ M @ P_solved @ P_pre^-1``.
    """
    bones = obj.data.bones
    world = obj.matrix_world
    anchor_inverse = anchor.matrix_world.inverted()
    solved_pose = chain_poses(obj, solved)
    pre = {
        "thigh": bones["thigh"].convert_local_to_pose(fk["thigh"], bones["thigh"].matrix_local),
        "shin": bones["shin"].convert_local_to_pose(
            fk["shin"],
            bones["shin"].matrix_local,
            parent_matrix=solved_pose["thigh"],
            parent_matrix_local=bones["thigh"].matrix_local,
        ),
    }
    eulers: dict[str, tuple[float, ...]] = {
        name: tuple(solved[name].to_quaternion().to_euler("XYZ"))  # type: ignore[arg-type]
        for name in CHAIN
    }
    return {
        "W": {name: solved[name].copy() for name in CHAIN},
        "Bl": eulers,
        "Bx": eulers,
        "Bc": {name: anchor_inverse @ world @ solved_pose[name] @ pre[name].inverted() for name in CHAIN},
    }


# ---------------------------------------------------------------------------------------- handlers
def make_handler(rig: Rig):
    """The variant's depsgraph_update_post handler: write this phase's values where they differ."""
    items = rig.items

    def basis_handler(scene, depsgraph):  # W, A: pose bones, values (Matrix) compared by rotation
        start = time.perf_counter()
        phase = rig.phase
        for pose_bone, values in items:
            matrix = values[phase]
            if (pose_bone.rotation_quaternion - matrix.to_quaternion()).magnitude > EPS:
                pose_bone.matrix_basis = matrix
        rig.handler_seconds += time.perf_counter() - start

    def euler_handler(scene, depsgraph):  # Bx: Transformation constraints, values (x, y, z) radians
        start = time.perf_counter()
        phase = rig.phase
        for constraint, values in items:
            x, y, z = values[phase]
            if (
                abs(constraint.to_min_x_rot - x) > EPS
                or abs(constraint.to_min_y_rot - y) > EPS
                or abs(constraint.to_min_z_rot - z) > EPS
            ):
                constraint.to_min_x_rot, constraint.to_min_y_rot, constraint.to_min_z_rot = x, y, z
        rig.handler_seconds += time.perf_counter() - start

    def limit_handler(scene, depsgraph):  # Bl: Limit Rotation constraints, values (x, y, z) radians
        start = time.perf_counter()
        phase = rig.phase
        for constraint, values in items:
            x, y, z = values[phase]
            if (
                abs(constraint.min_x - x) > EPS
                or abs(constraint.min_y - y) > EPS
                or abs(constraint.min_z - z) > EPS
            ):
                constraint.min_x = constraint.max_x = x
                constraint.min_y = constraint.max_y = y
                constraint.min_z = constraint.max_z = z
        rig.handler_seconds += time.perf_counter() - start

    def inverse_handler(scene, depsgraph):  # Bc: Child Of constraints, values Matrix
        start = time.perf_counter()
        phase = rig.phase
        for constraint, values in items:
            matrix = values[phase]
            difference = constraint.inverse_matrix - matrix
            if max(abs(value) for row in difference for value in row) > EPS:
                constraint.inverse_matrix = matrix
        rig.handler_seconds += time.perf_counter() - start

    handlers = {"W": basis_handler, "A": basis_handler, "A0": basis_handler, "Bl": limit_handler}
    handlers.update(Bx=euler_handler, Bc=inverse_handler)
    return handlers.get(rig.variant)


# ------------------------------------------------------------------------------------------ timing
def measure_once(rig: Rig) -> tuple[float, float]:
    """Seconds of one update after moving every target (and the handler's share of it)."""
    activate(rig.scene)
    handler = make_handler(rig)
    handlers = bpy.app.handlers.depsgraph_update_post
    if handler is not None:
        handlers.append(handler)
    try:
        update = rig.view_layer.update
        update()  # settle: the scene switch, anything still tagged (not timed)
        update()
        rig.phase ^= 1
        shift = 0.01 if rig.phase else -0.01
        for target in rig.targets:
            target.location.x += shift
        rig.handler_seconds = 0.0
        start = time.perf_counter()
        update()
        elapsed = time.perf_counter() - start
        return elapsed, rig.handler_seconds
    finally:
        if handler is not None:
            handlers.remove(handler)


def run_size(count: int, repeats: int, warmup: int, rng: random.Random) -> dict:
    """Build the seven scenes for ``count`` chains, time them interleaved; per-variant statistics."""
    bpy.ops.wm.read_homefile(use_empty=True)
    template = make_template()
    rigs = {variant: build_rig(variant, count, template) for variant in VARIANTS}
    samples: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    inside: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    for repetition in range(warmup + repeats):
        order = list(VARIANTS)
        rng.shuffle(order)
        for variant in order:
            elapsed, handler = measure_once(rigs[variant])
            if repetition >= warmup:
                samples[variant].append(elapsed / count * 1e6)
                inside[variant].append(handler / count * 1e6)
    native = statistics.median(samples["N"])
    result: dict[str, object] = {}
    for variant in VARIANTS:
        median = statistics.median(samples[variant])
        result[variant] = {
            "us_per_chain": median,
            "handler_us_per_chain": statistics.median(inside[variant]),
            "outside_handler_us_per_chain": statistics.median(
                total - handler for total, handler in zip(samples[variant], inside[variant], strict=True)
            ),
            "ratio_to_native": median / native,
            "samples_us_per_chain": samples[variant],
        }
    result["A"]["batch_build_us_per_chain"] = {  # type: ignore[index]
        step: seconds / count * 1e6 for step, seconds in rigs["A"].build_seconds.items()
    }
    result["objects_in_file"] = len(bpy.data.objects)
    return result


# ------------------------------------------------------------------------------- one-time and writes
def measure_build_and_writes(count: int, padding: int, writes: int = 2000) -> dict:
    """A's one-time build cost per chain, and the cost of one carrier write, in a small or big file.

    ``padding`` empties are added to the scene first: writing a property of a constraint that has
    a target runs Blender's validity test, which searches bpy.data.objects for the target (linear in
    the number of objects in the file, linked or not), and a mode switch re-evaluates the scene.
    Build: ``count`` single-leg armatures, each with its own edit-mode toggle (as an operator acting
    on one rig would do), then one armature holding ``count`` legs built in one edit-mode session.
    Writes: microseconds per RNA write of each handler's carrier value.
    """
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    assert scene is not None
    for index in range(padding):
        scene.collection.objects.link(bpy.data.objects.new(f"pad{index:05d}", None))
    template, multi = make_template(), make_template(count)
    legs = []
    for index in range(count):
        obj = bpy.data.objects.new(f"Leg{index}", template.copy())
        obj.location.x = index * 2.0
        scene.collection.objects.link(obj)
        legs.append(obj)
    big = bpy.data.objects.new("Legs", multi)
    scene.collection.objects.link(big)
    anchor = make_anchor(scene)
    bpy.context.view_layer.update()
    edit, wire = [], []
    for obj in legs:
        start = time.perf_counter()
        add_mechanism_bones([obj])
        middle = time.perf_counter()
        add_carriers(obj, "A", None)
        edit.append(middle - start)
        wire.append(time.perf_counter() - middle)
    start = time.perf_counter()
    add_mechanism_bones([big], suffixes(count))
    middle = time.perf_counter()
    add_carriers(big, "A", None, suffixes(count))
    end = time.perf_counter()

    probe = legs[0].pose.bones
    values = [i * 1e-4 for i in range(writes)]
    matrices = [Matrix.Rotation(value, 4, "X") for value in values[:2]]
    carriers = {variant: add_carrier(probe["foot"], variant, anchor) for variant in ("Bl", "Bx", "Bc")}
    setters = {
        "pose_bone.matrix_basis (W, A)": lambda i: setattr(probe["foot"], "matrix_basis", matrices[i & 1]),
        "Limit Rotation min_x (Bl, no target)": lambda i: setattr(carriers["Bl"], "min_x", values[i]),
        "Transformation to_min_x_rot (Bx, target)": lambda i: setattr(
            carriers["Bx"], "to_min_x_rot", values[i]
        ),
        "Child Of inverse_matrix (Bc, target)": lambda i: setattr(
            carriers["Bc"], "inverse_matrix", matrices[i & 1]
        ),
    }
    write_us = {}
    for label, setter in setters.items():
        start_writes = time.perf_counter()
        for index in range(writes):
            setter(index)
        write_us[label] = (time.perf_counter() - start_writes) / writes * 1e6
    return {
        "objects_in_file": len(bpy.data.objects),
        "per_armature_build_us_per_chain": {  # medians over the armatures
            "edit_mode_bones": statistics.median(edit) * 1e6,
            "constraints_drivers": statistics.median(wire) * 1e6,
        },
        "one_armature_build_us_per_chain": {
            "chains": count,
            "edit_mode_bones": (middle - start) / count * 1e6,
            "constraints_drivers": (end - middle) / count * 1e6,
        },
        "write_us": write_us,
    }


# ------------------------------------------------------------------------------------- correctness
FK_ROTATION = {"thigh": Euler((0.2, 0.1, -0.15)), "shin": Euler((-0.3, 0.05, 0.1))}
FK_LOCATION = {"thigh": Vector((0.02, -0.01, 0.03)), "shin": Vector()}
OBJECT_TRANSFORMS = {
    "uniform": ((1.0, -2.0, 0.5), Euler((0.3, -0.2, 0.7)), (1.5, 1.5, 1.5)),
    "non-uniform": ((1.0, -2.0, 0.5), Euler((0.3, -0.2, 0.7)), (1.0, 2.0, 0.5)),
}


def expected_tails(obj: bpy.types.Object, fk: dict[str, Matrix], factor: float) -> dict[str, Vector]:
    """World tails of thigh, shin and foot under the local-space blend rule at ``factor``."""
    solved = solved_bases(fk)
    bases = {}
    for name in CHAIN:
        location, rotation, scale = fk[name].decompose()
        blended = rotation.slerp(solved[name].to_quaternion(), factor)
        bases[name] = Matrix.LocRotScale(location, blended, scale)
    poses = chain_poses(obj, bases)
    bones = obj.data.bones
    poses["foot"] = bones["foot"].convert_local_to_pose(
        obj.pose.bones["foot"].matrix_basis,
        bones["foot"].matrix_local,
        parent_matrix=poses["shin"],
        parent_matrix_local=bones["shin"].matrix_local,
    )
    return {
        name: obj.matrix_world @ (pose @ Vector((0.0, bones[name].length, 0.0)))
        for name, pose in poses.items()
    }


def evaluated_tails(obj: bpy.types.Object, depsgraph) -> dict[str, Vector]:
    evaluated = obj.evaluated_get(depsgraph)
    return {
        name: evaluated.matrix_world @ evaluated.pose.bones[name].tail for name in ("thigh", "shin", "foot")
    }


def check_correctness() -> dict:
    """Max world tail error of A, Bl, Bx and Bc against the local-space blend rule; driver facts."""
    bpy.ops.wm.read_homefile(use_empty=True)
    template = make_template()
    scene = bpy.context.scene
    assert scene is not None
    view_layer = bpy.context.view_layer
    anchor = make_anchor(scene)
    anchor.location, anchor.rotation_euler = (0.5, 0.25, -1.0), Euler((0.1, 0.2, 0.3))  # not identity
    rigs: dict[tuple[str, str], tuple[Rig, dict]] = {}
    facts: dict = {}
    for variant in ("A", "Bl", "Bx", "Bc"):
        for label, (location, rotation, scale) in OBJECT_TRANSFORMS.items():
            obj = bpy.data.objects.new(f"{variant}-{label}", template.copy())
            obj.location, obj.rotation_euler, obj.scale = location, rotation, scale
            scene.collection.objects.link(obj)
            view_layer.update()
            if variant == "A":
                add_mechanism_bones([obj])
            drivers = add_carriers(obj, variant, anchor)
            facts.setdefault("is_simple_expression", []).extend(d.is_simple_expression for d in drivers)
            facts.setdefault("driver_is_valid", []).extend(d.is_valid for d in drivers)
            view_layer.update()
            for name in CHAIN:
                pose_bone = obj.pose.bones[name]
                pose_bone.matrix_basis = Matrix.LocRotScale(
                    FK_LOCATION[name], FK_ROTATION[name].to_quaternion(), None
                )
                facts.setdefault("constraint_is_valid", []).append(pose_bone.constraints[CARRIER].is_valid)
            view_layer.update()
            fk = {name: obj.pose.bones[name].matrix_basis.copy() for name in CHAIN}
            values = carrier_values(obj, fk, solved_bases(fk), anchor)
            rig = Rig(variant, scene, anchor, objects=[obj])
            for name in CHAIN:
                if variant == "A":
                    rig.items.append((obj.pose.bones[MCH[name]], (values["W"][name],) * 2))
                else:
                    constraint = obj.pose.bones[name].constraints[CARRIER]
                    rig.items.append((constraint, (values[variant][name],) * 2))
            rigs[variant, label] = (rig, fk)
    handlers = [make_handler(rig) for rig, _fk in rigs.values()]
    bpy.app.handlers.depsgraph_update_post.extend(handlers)
    errors: dict = {}
    try:
        cases = (("influence 1.0", 1.0, 1, 1.0), ("influence 0.5", 0.5, 1, 0.5), ("enabled 0", 1.0, 0, 0.0))
        for case, influence, enabled, factor in cases:
            objects = [rig.objects[0] for rig, _fk in rigs.values()]
            for obj in objects:
                obj["ik_influence"], obj["ik_enabled"] = influence, enabled
            if case == "influence 0.5":
                # Setting an ID property from Python tags nothing: does the driver see it anyway?
                view_layer.update()
                depsgraph = bpy.context.evaluated_depsgraph_get()
                evaluated = objects[0].evaluated_get(depsgraph).pose.bones["thigh"].constraints[CARRIER]
                facts["driver_saw_custom_property_without_update_tag"] = abs(evaluated.influence - 0.5) < 1e-6
            for obj in objects:
                obj.update_tag()
            view_layer.update()
            view_layer.update()
            depsgraph = bpy.context.evaluated_depsgraph_get()
            for (variant, label), (rig, fk) in rigs.items():
                obj = rig.objects[0]
                want = expected_tails(obj, fk, factor)
                got = evaluated_tails(obj, depsgraph)
                errors.setdefault(variant, {}).setdefault(label, {})[case] = {
                    "shin_tail": (got["shin"] - want["shin"]).length,
                    "all_tails": max((got[name] - want[name]).length for name in got),
                }
    finally:
        for handler in handlers:
            bpy.app.handlers.depsgraph_update_post.remove(handler)
    facts = {key: all(value) if isinstance(value, list) else value for key, value in facts.items()}
    return {"errors_m": errors, "facts": facts}


# ---------------------------------------------------------------------------------------------- main
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            models = (line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
            return next(models, "")
    except OSError:
        return platform.processor()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25, help="timed updates per variant and size (>= 21)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed interleaved rounds first")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--seed", type=int, default=0, help="seed of the interleaving order")
    parser.add_argument("--output", default="/tmp/mechanism_results.json")
    args = parser.parse_args()
    started = time.perf_counter()
    rng = random.Random(args.seed)

    build_writes = {padding: measure_build_and_writes(20, padding) for padding in (0, 5000)}
    correctness = check_correctness()
    print("Correctness: max world-space tail error (m) against the local-space blend rule")
    print(f"{'variant':>8} {'object scale':>13} {'case':>14} {'shin tail':>11} {'all tails':>11}")
    for variant, by_label in correctness["errors_m"].items():
        for label, by_case in by_label.items():
            for case, error in by_case.items():
                shin, every = error["shin_tail"], error["all_tails"]
                print(f"{variant:>8} {label:>13} {case:>14} {shin:>11.2e} {every:>11.2e}")
    for key, value in correctness["facts"].items():
        print(f"  {key}: {value}")

    sizes = {}
    for count in args.sizes:
        sizes[count] = run_size(count, args.repeats, args.warmup, rng)
    print()
    print(f"Update cost, median of {args.repeats} interleaved repetitions: us per chain (ratio to native)")
    print(f"{'variant':<44}" + "".join(f"{f'N={count}':>17}" for count in args.sizes))
    for variant in VARIANTS:
        cells = "".join(
            f"{sizes[c][variant]['us_per_chain']:>9.2f} ({sizes[c][variant]['ratio_to_native']:>4.2f})"
            for c in args.sizes
        )
        print(f"{variant + ' ' + LABELS[variant]:<44}{cells}")
    for key, title in (
        ("handler_us_per_chain", "inside the handler (Python, RNA writes), us per chain"),
        ("outside_handler_us_per_chain", "outside the handler (evaluation), us per chain"),
    ):
        print(title)
        for variant in VARIANTS[1:]:
            cells = "".join(f"{sizes[c][variant][key]:>17.2f}" for c in args.sizes)
            print(f"{variant + ' ' + LABELS[variant]:<44}{cells}")
    print("A one-time build, batch (one multi-object edit session for all N), us per chain")
    for step in ("edit_mode_bones", "constraints_drivers"):
        cells = "".join(f"{sizes[c]['A']['batch_build_us_per_chain'][step]:>17.0f}" for c in args.sizes)
        print(f"{'  ' + step:<44}{cells}")
    cells = "".join(f"{sizes[c]['objects_in_file']:>17}" for c in args.sizes)
    print(f"{'objects in the file (all seven scenes)':<44}{cells}")

    print()
    print("A one-time build of 20 chains, us per chain; carrier write cost, us per write")
    header = "".join(f"{str(m['objects_in_file']) + ' objects':>17}" for m in build_writes.values())
    print(f"{'':<44}{header}")
    rows = [
        ("per-armature toggle: edit mode + 2 bones", "per_armature", "edit_mode_bones"),
        ("per-armature: 2 constraints + 2 drivers", "per_armature", "constraints_drivers"),
        ("one armature, 20 legs: edit mode + bones", "one_armature", "edit_mode_bones"),
        ("one armature, 20 legs: constraints+drivers", "one_armature", "constraints_drivers"),
    ]
    for label, group, key in rows:
        cells = "".join(f"{m[group + '_build_us_per_chain'][key]:>17.0f}" for m in build_writes.values())
        print(f"{label:<44}{cells}")
    for label in next(iter(build_writes.values()))["write_us"]:
        print(f"{label:<44}" + "".join(f"{m['write_us'][label]:>17.2f}" for m in build_writes.values()))

    result = {
        "what": "median wall time of one view_layer.update() after moving every target, per chain",
        "variants": LABELS,
        "blender": bpy.app.version_string,
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "repeats": args.repeats,
        "warmup": args.warmup,
        "seed": args.seed,
        "sizes": {str(count): value for count, value in sizes.items()},
        "build_and_writes_by_padding": {str(padding): value for padding, value in build_writes.items()},
        "correctness": correctness,
        "carrier_notes": {
            "Bl": "Limit Rotation, Local space, XYZ, min == max on all three axes: replaces the local"
            " rotation, keeps FK location and scale, needs no target (so no dependency and no"
            " file-size-dependent validity check on writes); influence blends like A. Six floats per"
            " bone (min and max of three axes).",
            "Bx": "Transformation, Local space, rotation mix Replace, from-ranges zero: the output"
            " rotation is to_min_*_rot whatever the target, but it needs a valid target other than the"
            " own armature object, and every write of a targeted constraint searches bpy.data.objects.",
            "Bc": "Child Of (target an anchor empty; the own armature object is invalid): the inverse"
            " depends on the armature's and the target's world matrices and on the bone's FK pose on"
            " its solved parent, so it goes stale when any of them changes; exact only at influence 1.",
        },
        "seconds_total": time.perf_counter() - started,
    }
    with open(args.output, "w") as output:
        json.dump(result, output, indent=2)
        output.write("\n")
    print(f"wrote {args.output} in {result['seconds_total']:.0f} s")


if __name__ == "__main__":
    main()

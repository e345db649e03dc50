# SPDX-License-Identifier: GPL-3.0-or-later
"""Network benchmark: our chains (the native network, network/build.py) against Blender's IK
constraint, in real Blender (the bpy module), measured side by side in one process.

Nothing of ours runs per update: the cost measured is Blender evaluating each chain's network
(its bones, constraints and simple-expression drivers) against Blender evaluating its own IK
constraint (chain count 2, pole target) on the same bones.

**Legs.** Each size N is built twice, each variant in a scene of its own, from the same leg
(thigh and shin, a target and a pole empty per chain): ``native`` (an IK constraint on each shin)
and ``ours`` (a chain per leg, added through ``obj.two_bone_ik.chains`` and built by
``network.build.build``, all of an armature's chains in one Edit Mode session). Two layouts:
``separate`` (one armature object and armature per chain) and ``one armature`` (N legs in one
armature). Each repetition moves every target and times one ``view_layer.update()`` of each
variant's scene, the variants in shuffled order (interleaved, so machine noise hits them alike),
after two warm-up rounds. Reported: the median microseconds per chain and ours/native.

**Rigify.** A human generated here from Rigify's Human metarig, twice over (the generated rig and
a copy of it, each in a scene of its own): ``native`` keeps Rigify's IK; in ``ours`` the four limbs
are put on our chains through the documented step, the operator Rigify Limbs on Two-Bone IK (see
:func:`replace_rigify_ik`). Both get the same settings: pole on, IK stretch off. Also reported:
the worst deform bone length change and end-on-target distance of each. Timed: one
``view_layer.update()`` after moving the left foot IK control, and one ``scene.frame_set()`` of
the foot control keyed over 24 frames (one frame of playback), interleaved the same way.

**Before** (``--before REV``, by default ``e80dfb6``, the network before its roll drivers and
influence checks): the same rigs with the network of an earlier commit, built by that commit's own
benchmark in a separate Blender process (its tree from ``git archive``) and saved to a .blend,
whose scenes this process appends and times interleaved with ``native`` and ``ours``. The appended
network needs nothing of that commit's code: Blender evaluates it, as it does in a Blender without
the extension. ``--before none`` skips it (also skipped, with a message, where the commit is not in
the clone).

**Experiments** (labelled ``exp:`` in the table, not the shipped network; ``--no-experiments``
skips them): the ``ours`` network with one part taken out or put back as it was, next to the
full network and native IK in the same run, to show where the cost is. The pose they give may be
wrong; only their cost is of interest.

**Variables** (``var:`` rows, with the experiments): each chain gets one more driver with
:data:`VARIABLES_PER_DRIVER` variables of one kind (:data:`VARIABLE_KINDS`), or none; the table
after the run gives µs per variable of each kind and per driver node. **Encodings** (``enc:``): a
driver of the network with its variables read another way (cost only; the pose may be wrong).

Writes bench/results/network.json. Run: ``.venv/bin/python bench/network.py [--repeats R]
[--sizes ...] [--rigify-repeats R] [--before REV] [--no-experiments] [--experiments PREFIX ...]
[--no-legs] [--no-rigify]`` (after ``bash tools/test.sh`` made the venv); ``--no-legs`` runs the
Rigify human alone; ``--experiments var: enc:`` only the variable and encoding rows.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pathlib
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import TypeVar

REPO = pathlib.Path(__file__).resolve().parents[1]
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="two_bone_ik_bench_"))
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(os.environ["BLENDER_USER_RESOURCES"], "cache"))

import bpy  # noqa: E402
from mathutils import Vector  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "support"))
from blender_rig import MODULE, enable_extension, generate_rigify_human  # noqa: E402

SIZES = (1, 10, 100, 500)
Subject = TypeVar("Subject")
LAYOUTS = ("separate", "one armature")
THIGH = ((0.0, 0.0, 1.0), (0.0, -0.05, 0.5))
SHIN = ((0.0, -0.05, 0.5), (0.0, 0.0, 0.0))
SPACING = 2.0
WARM_UP = 2
# The goals the project reports against (docs/benchmarks.md): ours/native at most GOAL_FEW for 1-10 chains,
# GOAL_MANY for more, GOAL_RIGIFY on the Rigify human.
GOAL_FEW, GOAL_MANY, GOAL_RIGIFY = 1.2, 1.5, 1.0
BEFORE = "before"
# The network before the roll drivers and the influence checks were added.
BEFORE_REVISION = "e80dfb6"
# Rigify's limbs: (IK chain upper bone, lower bone, IK target bone, pole bone, settings bone).
RIGIFY_LIMBS = tuple(
    (f"{upper}_ik.{side}", f"MCH-{lower}_ik.{side}", f"MCH-{upper}_ik_target.{side}",
     f"{upper}_ik_target.{side}", f"{upper}_parent.{side}")
    for upper, lower in (("thigh", "shin"), ("upper_arm", "forearm"))
    for side in ("L", "R")
)  # fmt: skip
FOOT = "foot_ik.L"


def network():
    """The extension's network builder (``network/build.py``), as enabled."""
    return importlib.import_module(f"{MODULE}.network.build")


def naming():
    """The bone names of the extension's network (``network/naming.py``), as enabled."""
    return importlib.import_module(f"{MODULE}.network.naming")


def output_names() -> tuple[str, str, str]:
    """The names of the chain's Copy Transforms, End Rotation and muted Controls IK: the rows of the
    enabled extension's spec (``network/spec.py``)."""
    spec = importlib.import_module(f"{MODULE}.network.spec")
    return spec.OUTPUT, spec.END_ROTATION.name, spec.CONTROLS.name


def edit(obj):
    """Context manager: ``obj`` in Edit Mode (made the active object of the window's scene)."""
    return _Edit(obj)


class _Edit:
    def __init__(self, obj) -> None:
        self.obj = obj

    def __enter__(self):
        bpy.context.window.scene = self.obj.users_scene[0]
        bpy.context.view_layer.objects.active = self.obj
        with bpy.context.temp_override(active_object=self.obj, object=self.obj):
            bpy.ops.object.mode_set(mode="EDIT")
        return self.obj.data.edit_bones

    def __exit__(self, *exc) -> None:
        with bpy.context.temp_override(active_object=self.obj, object=self.obj):
            bpy.ops.object.mode_set(mode="OBJECT")


def add_leg(bones, suffix: str, offset) -> None:
    thigh = bones.new(f"thigh{suffix}")
    thigh.head = [a + b for a, b in zip(THIGH[0], offset, strict=True)]
    thigh.tail = [a + b for a, b in zip(THIGH[1], offset, strict=True)]
    shin = bones.new(f"shin{suffix}")
    shin.head, shin.parent, shin.use_connect = thigh.tail, thigh, True
    shin.tail = [a + b for a, b in zip(SHIN[1], offset, strict=True)]


def grid(index: int) -> tuple[float, float, float]:
    return (index % 40 * SPACING, index // 40 * SPACING, 0.0)


def add_empties(scene, offset, name: str):
    target = bpy.data.objects.new(f"Target {name}", None)
    target.location = (offset[0], offset[1] + 0.2, offset[2] + 0.1)
    pole = bpy.data.objects.new(f"Pole {name}", None)
    pole.location = (offset[0], offset[1] - 1.0, offset[2] + 0.5)
    scene.collection.objects.link(target)
    scene.collection.objects.link(pole)
    return target, pole


def add_chains(obj, chains) -> None:
    """(suffix, target, pole) per chain: our chains, all built in one Edit Mode session."""
    for suffix, target, pole in chains:
        item = obj.two_bone_ik.chains.add()
        item.name, item.upper_bone, item.lower_bone = f"leg{suffix}", f"thigh{suffix}", f"shin{suffix}"
        item.target, item.pole = target, pole
    network().build(obj, obj.two_bone_ik.chains)


def add_native(obj, chains) -> None:
    for suffix, target, pole in chains:
        constraint = obj.pose.bones[f"shin{suffix}"].constraints.new("IK")
        constraint.target, constraint.pole_target, constraint.chain_count = target, pole, 2


# --- Experiments: the network with a part taken out (cost attribution only) -----------------------


def _network_parts(obj) -> list:
    return [naming().parts(chain.upper_bone, chain.lower_bone) for chain in obj.two_bone_ik.chains]


def _remove_drivers(obj, keep: Callable[[str], bool]) -> None:
    drivers = obj.animation_data.drivers
    for fcurve in [f for f in drivers if not keep(f.data_path)]:
        drivers.remove(fcurve)


def strip_influence(obj) -> None:
    """Experiment: no ``influence * enabled`` drivers on the chain bones' Copy Transforms."""
    name = output_names()[0]
    _remove_drivers(obj, lambda path: f'constraints["{name}"]' not in path)
    for chain in obj.two_bone_ik.chains:
        for bone in (chain.upper_bone, chain.lower_bone):
            obj.pose.bones[bone].constraints[name].influence = 1.0


def strip_roll(obj) -> None:
    """Experiment: no roll driver (13 variables: the pole's location and the aim's matrix)."""
    _remove_drivers(obj, lambda path: not path.endswith('-roll"].rotation_euler'))


def strip_roll_drivers(obj) -> None:
    """Experiment: no drivers from the rolls' properties (the hinge's Euler Y, the solved lower
    bone's Euler Y): the network's drivers as they were in the earlier layout, when the rolls were channels of
    the network's own bones, hidden from the animation editors (docs/design.md, "Where a chain's
    keys live")."""
    parts = _network_parts(obj)
    rolled = {
        (f'pose.bones["{bpy.utils.escape_identifier(name)}"].rotation_euler', 1)
        for names in parts
        for name in (names.hinge, names.lower)
    }
    drivers = obj.animation_data.drivers
    for fcurve in [f for f in drivers if (f.data_path, f.array_index) in rolled]:
        drivers.remove(fcurve)


def strip_modes(obj) -> None:
    """Experiment: no constant drivers on the Euler network bones' rotation modes (they put the
    modes back after a tool sets every bone's: docs/design.md, "Tools that rewrite every bone")."""
    _remove_drivers(obj, lambda path: not path.endswith(".rotation_mode"))


def strip_own_turn(obj) -> None:
    """Experiment: the lower roll without the lower bone's own turn (405f180's driver: the roll's
    property alone, one variable), to show what reading the lower bone's rotation costs."""
    paths = {
        f'pose.bones["{bpy.utils.escape_identifier(names.lower)}"].rotation_euler'
        for names in _network_parts(obj)
    }
    for fcurve in obj.animation_data.drivers:
        if fcurve.data_path not in paths or fcurve.array_index != 1:
            continue
        driver, depth, end = fcurve.driver, 0, 0
        for index, character in enumerate(driver.expression):  # "(<roll>)+<own turn>": the roll
            depth += {"(": 1, ")": -1}.get(character, 0)
            if depth == 0:
                end = index
                break
        driver.expression = driver.expression[1:end]
        for variable in [v for v in driver.variables if v.name != "r"]:
            driver.variables.remove(variable)


def own_turn_one_mode(obj) -> None:
    """Experiment: the lower bone's own turn read from its quaternion alone (2 variables), not
    switching on its rotation mode to its Euler channels too (6 variables)."""
    paths = {
        f'pose.bones["{bpy.utils.escape_identifier(names.lower)}"].rotation_euler'
        for names in _network_parts(obj)
    }
    for fcurve in obj.animation_data.drivers:
        if fcurve.data_path in paths and fcurve.array_index == 1:
            driver = fcurve.driver
            roll, _own = driver.expression.split("+(2*atan2(qy,qw)", 1)
            driver.expression = roll + "+2*atan2(qy,qw)"
            for variable in [v for v in driver.variables if v.name in ("m", "x", "y", "z")]:
                driver.variables.remove(variable)


def strip_controls(obj) -> None:
    """Experiment: no muted IK constraint naming the controls on the lower bones (what Select >
    Constraint Target reads): what that constraint costs."""
    name = output_names()[2]
    for chain in obj.two_bone_ik.chains:
        constraints = obj.pose.bones[chain.lower_bone].constraints
        if constraints.get(name) is not None:
            constraints.remove(constraints[name])


def strip_aim(obj) -> None:
    """Experiment: no Damped Track influence driver on the aim bone."""
    _remove_drivers(obj, lambda path: '-aim"]' not in path)


def strip_drivers(obj) -> None:
    """Experiment: none of the network's drivers: its bones and constraints only, at constant
    angles (the rig's other drivers stay)."""
    parts = _network_parts(obj)
    ours = tuple(f'pose.bones["{bpy.utils.escape_identifier(name)}"]' for names in parts for name in names)
    constraint = f'constraints["{output_names()[0]}"]'
    _remove_drivers(obj, lambda path: not path.startswith(ours) and constraint not in path)
    for names in parts:
        obj.pose.bones[names.aim].constraints["Aim"].influence = 1.0
    for chain in obj.two_bone_ik.chains:
        for bone in (chain.upper_bone, chain.lower_bone):
            obj.pose.bones[bone].constraints[output_names()[0]].influence = 1.0


def strip_to_output(obj) -> None:
    """Experiment: no drivers and no constraints on the network bones: the network's bones and the
    two Copy Transforms only (what any bone-based output costs)."""
    strip_drivers(obj)
    for names in _network_parts(obj):
        for name in names:
            constraints = obj.pose.bones[name].constraints
            for constraint in list(constraints):
                constraints.remove(constraint)


def strip_influence_guard(obj) -> None:
    """Experiment: the upper chain bone's influence driver as before the ERROR checks, ``influence *
    enabled`` with two variables (the lower bone's reads it), without the checks that leave the
    own pose where the network cannot solve (the target's validity, the distances, the root's
    scale: solver.expressions.influence)."""
    name = output_names()[0]
    for fcurve in obj.animation_data.drivers:
        if f'constraints["{name}"]' not in fcurve.data_path and not fcurve.data_path.endswith(
            f'constraints["{output_names()[1]}"].influence'
        ):
            continue
        driver = fcurve.driver
        if driver.variables.get("influence") is None:
            continue  # the lower bone's: it reads the upper bone's influence
        for variable in [v for v in driver.variables if v.name not in ("influence", "enabled")]:
            driver.variables.remove(variable)
        driver.expression = "influence*enabled"


def influence_computed_twice(obj) -> None:
    """Experiment: the lower bone's influence driver computes the influence and its checks again
    from the settings (as before it was read once), instead of reading the upper bone's driven influence
    (``spec.SAME_INFLUENCE``): what that merge saved."""
    name = output_names()[0]
    drivers = obj.animation_data.drivers
    for chain in obj.two_bone_ik.chains:
        upper, lower = (
            drivers.find(
                f'pose.bones["{bpy.utils.escape_identifier(bone)}"].constraints["{name}"].influence'
            ).driver
            for bone in (chain.upper_bone, chain.lower_bone)
        )
        for variable in list(lower.variables):
            lower.variables.remove(variable)
        for source in upper.variables:
            variable = lower.variables.new()
            variable.name, variable.type = source.name, source.type
            for copy, target in zip(variable.targets, source.targets, strict=False):
                copy.id = target.id
                for attribute in ("data_path", "bone_target", "transform_space", "transform_type"):
                    setattr(copy, attribute, getattr(target, attribute))
        lower.expression = upper.expression


def pose_space_tracks(obj) -> None:
    """Experiment: the two Damped Tracks in pose space, as before squash and stretch was solved
    (now in the root bone's space, exact under a parent's uneven scale): what the custom space
    costs."""
    for names in _network_parts(obj):
        for bone, constraint in ((names.aim, "Aim"), (names.lower, "Bend")):
            track = obj.pose.bones[bone].constraints[constraint]
            track.owner_space = track.target_space = "POSE"


# --- Variable kinds and encodings: what each kind of driver variable costs ----------------------

# Variables of one kind on the extra driver each chain gets in a "var:" experiment: enough that
# their cost stands out of the noise (the row minus "var: +1 driver, no variable", divided by this).
VARIABLES_PER_DRIVER = 32


def _bone(name: str) -> str:
    return f'pose.bones["{bpy.utils.escape_identifier(name)}"]'


def _single(path: Callable[[object, object, int], str]):
    """A SINGLE_PROP variable setter reading ``path(names, chain, index)`` from the armature."""

    def make(variable, obj, names, chain, index: int) -> None:
        variable.type = "SINGLE_PROP"
        target = variable.targets[0]
        target.id_type, target.id, target.data_path = "OBJECT", obj, path(names, chain, index)

    return make


def _transform(field: str, channel: str, space: str, mode: str = "AUTO"):
    """A TRANSFORMS variable setter: ``channel`` of network bone ``field`` in ``space``."""

    def make(variable, obj, names, chain, index: int) -> None:
        variable.type = "TRANSFORMS"
        target = variable.targets[0]
        target.id, target.bone_target = obj, getattr(names, field)
        target.transform_type, target.transform_space = channel, space
        if mode in {item.identifier for item in target.bl_rna.properties["rotation_mode"].enum_items}:
            target.rotation_mode = mode

    return make


def _between(kind: str, space: str = "WORLD_SPACE"):
    """A ROTATION_DIFF or LOC_DIFF variable setter: the aim bone against the root (rotation), the
    target against the root (distance)."""

    def make(variable, obj, names, chain, index: int) -> None:
        variable.type = kind
        first = names.aim if kind == "ROTATION_DIFF" else names.target
        for target, bone in zip(variable.targets, (first, names.root), strict=True):
            target.id, target.bone_target = obj, bone
            target.transform_space = space

    return make


def _context(variable, obj, names, chain, index: int) -> None:
    variable.type = "CONTEXT_PROP"
    target = variable.targets[0]
    target.context_property, target.data_path = "ACTIVE_SCENE", "frame_current"


# What one variable reads, by kind (the sources are evaluated before the end bone that the
# experiment's driver is on, so no kind makes a cycle).
VARIABLE_KINDS: dict[str, Callable] = {
    "prop: matrix element": _single(lambda n, c, i: f"{_bone(n.aim)}.matrix[{i % 3}][{i // 3 % 3}]"),
    "prop: custom property": _single(lambda n, c, i: f'{_bone(c.lower_bone)}["IK Twist"]'),
    "prop: rotation channel": _single(lambda n, c, i: f"{_bone(c.lower_bone)}.rotation_quaternion[{i % 4}]"),
    "prop: rotation mode": _single(lambda n, c, i: f"{_bone(c.lower_bone)}.rotation_mode"),
    "transform: location, local": _transform("pole", "LOC_X", "LOCAL_SPACE"),
    "transform: location, transform space": _transform("pole", "LOC_X", "TRANSFORM_SPACE"),
    "transform: location, world": _transform("pole", "LOC_X", "WORLD_SPACE"),
    "transform: Euler Y, local": _transform("aim", "ROT_Y", "LOCAL_SPACE"),
    "transform: quaternion W, local": _transform("aim", "ROT_W", "LOCAL_SPACE", "QUATERNION"),
    "transform: swing-twist Y, local": _transform("aim", "ROT_Y", "LOCAL_SPACE", "SWING_TWIST_Y"),
    "transform: scale Y, world": _transform("root", "SCALE_Y", "WORLD_SPACE"),
    "rotation difference": _between("ROTATION_DIFF"),
    "distance, local": _between("LOC_DIFF", "LOCAL_SPACE"),
    "distance, world": _between("LOC_DIFF"),
    "context: scene frame": _context,
}


def _extra_driver(kind: str | None, count: int = VARIABLES_PER_DRIVER):
    """Experiment: each chain gets one more driver (on its end bone's X scale, which nothing reads)
    with ``count`` variables of ``kind`` (:data:`VARIABLE_KINDS`), or none: what a variable of that
    kind costs, beside what a driver node costs."""

    def add(obj) -> None:
        for chain, names in zip(obj.two_bone_ik.chains, _network_parts(obj), strict=True):
            driver = obj.driver_add(f"{_bone(names.end)}.scale", 0).driver
            driver.type = "SCRIPTED"
            for index in range(count if kind is not None else 0):
                variable = driver.variables.new()
                variable.name = f"v{index}"
                VARIABLE_KINDS[str(kind)](variable, obj, names, chain, index)
            used = "+".join(variable.name for variable in driver.variables)
            driver.expression = f"1.0+0.0*({used})" if used else "1.0"
            assert driver.is_simple_expression, driver.expression

    return add


def _lower_roll_drivers(obj):
    paths = {_bone(names.lower) + ".rotation_euler" for names in _network_parts(obj)}
    return [f.driver for f in obj.animation_data.drivers if f.data_path in paths and f.array_index == 1]


def own_turn_swing_twist(obj) -> None:
    """Encoding: the lower bone's own turn as one swing-twist transform variable on the chain's
    lower bone (Transform Space, SWING_TWIST_Y), in place of its rotation channels and mode by path
    (six variables). Blender reports a dependency cycle: the variable reads the bone's final pose,
    which its Copy Transforms of the network makes."""
    for chain, driver in zip(obj.two_bone_ik.chains, _lower_roll_drivers(obj), strict=True):
        roll = driver.expression.split("+(2*atan2(qy,qw)", 1)[0]
        for variable in [v for v in driver.variables if v.name != "r"]:
            driver.variables.remove(variable)
        variable = driver.variables.new()
        variable.name, variable.type = "tw", "TRANSFORMS"
        target = variable.targets[0]
        target.id, target.bone_target = obj, chain.lower_bone
        target.transform_type, target.transform_space = "ROT_Y", "TRANSFORM_SPACE"
        target.rotation_mode = "SWING_TWIST_Y"
        driver.expression = f"{roll}+tw"


def roll_aim_quaternion(obj) -> None:
    """Encoding: the roll driver's fallback axis (D3) from the aim bone's rotation as four
    quaternion transform variables (Local Space: the aim bone's rest is armature-aligned and it
    inherits no rotation) in place of its nine matrix elements by path. With the rest of the roll
    that fallback is longer than Blender's 255 characters (:data:`ROLL_QUATERNION_FALLBACK`): here
    it keeps the first axis's branch, the same variables (its cost, not its pose)."""
    # The whole fallback would be ROLL_QUATERNION_FALLBACK, 286 characters with the leg's roll.
    paths = {_bone(names.roll) + ".rotation_euler": names.aim for names in _network_parts(obj)}
    for fcurve in obj.animation_data.drivers:
        if fcurve.data_path not in paths:
            continue
        driver = fcurve.driver
        for variable in [v for v in driver.variables if v.name.startswith("m")]:
            driver.variables.remove(variable)
        for name, channel in (("w", "ROT_W"), ("a", "ROT_X"), ("b", "ROT_Y"), ("c", "ROT_Z")):
            variable = driver.variables.new()
            variable.name, variable.type = name, "TRANSFORMS"
            target = variable.targets[0]
            target.id, target.bone_target = obj, paths[fcurve.data_path]
            target.transform_type, target.transform_space = channel, "LOCAL_SPACE"
            target.rotation_mode = "QUATERNION"
        start = driver.expression.index("(atan2(m00")
        end = driver.expression.index("atan2(m20,m22)))") + len("atan2(m20,m22)))")
        short = "atan2(.5-b*b-c*c,a*c+w*b)"
        driver.expression = driver.expression[:start] + short + driver.expression[end:]
        assert driver.is_simple_expression, driver.expression


# The fallback axis (D3) from the aim's unit quaternion (w, a, b, c): each matrix entry a product
# of its components (halved: the atan2 and the comparisons do not mind).
ROLL_QUATERNION_FALLBACK = (
    "(atan2(.5-b*b-c*c,a*c+w*b) if abs(a*b-w*c)<=abs(.5-a*a-c*c) and abs(a*b-w*c)<=abs(b*c+w*a)"
    " else (atan2(a*b+w*c,b*c-w*a) if abs(.5-a*a-c*c)<=abs(b*c+w*a) else atan2(a*c-w*b,.5-a*a-b*b)))"
)


EXPERIMENTS: dict[str, Callable] = {
    "exp: influence drivers before the ERROR checks": strip_influence_guard,
    "exp: tracks in pose space (as before)": pose_space_tracks,
    "exp: influence computed twice (before)": influence_computed_twice,
    "exp: -influence drivers": strip_influence,
    "exp: -roll driver": strip_roll,
    "exp: -rolls' drivers (earlier layout)": strip_roll_drivers,
    "exp: -controls' muted IK": strip_controls,
    "exp: -rotation mode drivers": strip_modes,
    "exp: own turn from one mode": own_turn_one_mode,
    "exp: -own turn": strip_own_turn,
    "exp: -aim drivers": strip_aim,
    "exp: -all drivers": strip_drivers,
    "exp: bones+copy only": strip_to_output,
    "enc: own turn as one swing-twist variable (cycle)": own_turn_swing_twist,
    "enc: roll's fallback from 4 quaternion variables": roll_aim_quaternion,
    "var: +1 driver, no variable": _extra_driver(None),
    **{f"var: +{VARIABLES_PER_DRIVER} {kind}": _extra_driver(kind) for kind in VARIABLE_KINDS},
}
EXPERIMENT_SIZES = ((10, "separate"), (100, "one armature"))
# Control: Rigify's IK after an Edit Mode round trip, as Update Mechanism makes in ``ours``.
RIGIFY_CONTROLS = ("ctl: Edit Mode toggled",)
RIGIFY_EXPERIMENTS = {
    "exp: -rolls' drivers (earlier layout)": strip_roll_drivers,
    "exp: -all drivers": strip_drivers,
    "exp: bones+copy only": strip_to_output,
}


# --- Before: an earlier commit's network, built by that commit's benchmark ------------------------

# Run in a separate Blender process inside the earlier tree: builds the "ours" variant of each
# (layout, count) and the Rigify human with that tree's code, keeps those scenes and saves them.
_BEFORE_SCRIPT = """
import inspect, pathlib, runpy, sys
tree, path, sizes, rigify = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
bench = runpy.run_path(str(tree / "bench" / "network.py"), run_name="before")
bench["enable_extension"](tree)
import bpy
bpy.ops.wm.read_homefile(use_empty=True)
if rigify:  # first: generating the rig starts from an empty file
    # (Its own benchmark's: from 405f180 on it takes the file of the commit before it, or None.)
    bench["rigify_scenes"](*[None] * len(inspect.signature(bench["rigify_scenes"]).parameters))
    for scene in [s for s in bpy.data.scenes if s.name.startswith("Rigify ") and s.name != "Rigify ours"]:
        for obj in list(scene.collection.all_objects):
            bpy.data.objects.remove(obj)
        bpy.data.scenes.remove(scene)
for item in filter(None, sizes.split(",")):
    layout, count = item.rsplit(":", 1)
    bench["build"]("ours", int(count), layout)
bpy.ops.wm.save_as_mainfile(filepath=path)
"""


def build_before_file(revision: str, legs: list[tuple[str, int]], rigify: bool) -> pathlib.Path | None:
    """Build the ``ours`` rigs of ``legs`` ((layout, count) pairs) and, with ``rigify``, the
    Rigify human with the network of ``revision``, in a Blender process of their own; returns the
    .blend holding their scenes (named as that commit's benchmark names them), or None where the
    revision is not in this clone."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="two_bone_ik_before_"))
    tree = folder / "tree"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", revision], capture_output=True, check=False
    )
    if archive.returncode != 0:
        print(f"before: {revision} is not in this clone ({archive.stderr.decode().strip()}); skipped")
        return None
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    path = folder / "before.blend"
    # Its own user resources: the earlier tree is enabled under the same extension name.
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(folder / "resources")}
    env["XDG_CACHE_HOME"] = str(folder / "cache")
    sizes = ",".join(f"{layout}:{count}" for layout, count in legs)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", _BEFORE_SCRIPT, str(tree), str(path), sizes, "1" if rigify else "0"],
        cwd=tree,
        env=env,
        check=True,
    )
    print(f"before: built {revision}'s network in {time.perf_counter() - start:.0f} s ({path})")
    sys.stdout.flush()
    return path


def append_scene(path: pathlib.Path, name: str):
    """Append scene ``name`` (with its objects) from the .blend at ``path``; returns it."""
    with bpy.data.libraries.load(str(path)) as (_source, loaded):
        loaded.scenes = [name]
    return loaded.scenes[0]


# --- Legs ------------------------------------------------------------------------------------------


class Rigs:
    """One variant's scene: its armatures and the targets each update moves."""

    def __init__(self, variant: str, scene) -> None:
        self.variant, self.scene = variant, scene
        self.armatures: list = []
        self.targets: list = []
        self.build_seconds = 0.0


def build(variant: str, count: int, layout: str) -> Rigs:
    """``count`` chains of ``variant`` ("native", "ours" or an experiment) in a new scene, in
    ``layout`` ("separate" or "one armature")."""
    scene = bpy.data.scenes.new(f"{variant} {layout} {count}")
    rigs = Rigs(variant, scene)
    if layout == "separate":
        template_obj = bpy.data.objects.new("Template", bpy.data.armatures.new("Leg"))
        scene.collection.objects.link(template_obj)
        with edit(template_obj) as bones:
            add_leg(bones, "", (0.0, 0.0, 0.0))
        data = template_obj.data
        bpy.data.objects.remove(template_obj)
        legs = []
        for index in range(count):
            obj = bpy.data.objects.new(f"Leg {index}", data.copy())
            obj.location = grid(index)
            scene.collection.objects.link(obj)
            legs.append((obj, *add_empties(scene, grid(index), str(index))))
        bpy.context.window.scene = scene
        scene.view_layers[0].update()  # gives the new objects their pose
        start = time.perf_counter()
        if variant == "native":
            for obj, target, pole in legs:
                add_native(obj, [("", target, pole)])
        else:
            # One Edit Mode session per armature costs O(scene) each (500 took 7 minutes): build
            # the network once and copy it (Blender aims a copy's own drivers and constraints at
            # the copy), then point each copy's chain at its empties (network.build.sync).
            template = legs[0][0].copy()
            template.data = legs[0][0].data.copy()
            scene.collection.objects.link(template)
            add_chains(template, [("", None, None)])
            for index, (obj, target, pole) in enumerate(legs):
                data = obj.data
                copy = template.copy()
                copy.data = template.data.copy()
                copy.location = grid(index)
                scene.collection.objects.link(copy)
                bpy.data.objects.remove(obj)
                bpy.data.armatures.remove(data)
                chain = copy.two_bone_ik.chains[0]
                chain.target, chain.pole = target, pole
                network().sync(copy, chain)
                legs[index] = (copy, target, pole)
            template_data = template.data
            bpy.data.objects.remove(template)
            bpy.data.armatures.remove(template_data)
        for obj, target, _pole in legs:
            rigs.armatures.append(obj)
            rigs.targets.append(target)
        rigs.build_seconds = time.perf_counter() - start
    else:
        obj = bpy.data.objects.new("Legs", bpy.data.armatures.new("Legs"))
        scene.collection.objects.link(obj)
        chains = []
        with edit(obj) as bones:
            for index in range(count):
                add_leg(bones, f".{index}", grid(index))
        for index in range(count):
            target, pole = add_empties(scene, grid(index), str(index))
            chains.append((f".{index}", target, pole))
            rigs.targets.append(target)
        start = time.perf_counter()
        (add_native if variant == "native" else add_chains)(obj, chains)
        rigs.build_seconds = time.perf_counter() - start
        rigs.armatures.append(obj)
    if variant in EXPERIMENTS:
        for obj in rigs.armatures:
            EXPERIMENTS[variant](obj)
    scene.view_layers[0].update()
    return rigs


def appended(path: pathlib.Path, count: int, layout: str) -> Rigs:
    """The earlier commit's ``count`` chains in ``layout``, appended from ``path``
    (:func:`build_before_file`)."""
    scene = append_scene(path, f"ours {layout} {count}")
    rigs = Rigs(BEFORE, scene)
    rigs.armatures = [obj for obj in scene.objects if obj.type == "ARMATURE"]
    rigs.targets = [obj for obj in scene.objects if obj.name.startswith("Target ")]
    if len(rigs.targets) != count:
        raise RuntimeError(f"{path}: {len(rigs.targets)} targets in {scene.name!r}, expected {count}")
    scene.view_layers[0].update()
    return rigs


def move_targets(rigs: Rigs, step: int) -> Callable[[], object]:
    shift = 0.1 if step % 2 else -0.1
    for target in rigs.targets:
        target.location.x += shift
    return rigs.scene.view_layers[0].update


def interleave(
    subjects: dict[str, Subject], prepare: Callable[[Subject, int], Callable[[], object]], repeats: int, rng
) -> dict[str, float]:
    """Median seconds of the call ``prepare(subject, step)`` returns, per subject, interleaved in
    shuffled order after :data:`WARM_UP` rounds (``prepare`` itself is not timed)."""
    samples: dict[str, list[float]] = {name: [] for name in subjects}
    for step in range(repeats + WARM_UP):
        order = list(subjects)
        rng.shuffle(order)
        for name in order:
            call = prepare(subjects[name], step)
            start = time.perf_counter()
            call()
            elapsed = time.perf_counter() - start
            if step >= WARM_UP:
                samples[name].append(elapsed)
    return {name: statistics.median(values) for name, values in samples.items()}


def goal(chains: int) -> float:
    return GOAL_FEW if chains <= 10 else GOAL_MANY


def leg_rows(
    layout: str, count: int, variants: tuple[str, ...], repeats: int, rng, before: pathlib.Path | None
) -> list[dict]:
    """Time ``variants`` of ``count`` chains in ``layout`` interleaved; one row each (and print it).
    The variant :data:`BEFORE` is appended from the file ``before``."""
    bpy.ops.wm.read_homefile(use_empty=True)
    all_rigs = {
        variant: appended(before, count, layout)
        if variant == BEFORE and before
        else build(variant, count, layout)
        for variant in variants
    }
    medians = interleave(all_rigs, move_targets, repeats, rng)
    native = medians["native"] / count * 1e6
    rows = []
    for variant in variants:
        per_chain = medians[variant] / count * 1e6
        ratio = per_chain / native
        result = {
            "layout": layout,
            "chains": count,
            "variant": variant,
            "us_per_chain": per_chain,
            "native_us_per_chain": native,
            "to_native": ratio,
            "goal": goal(count),
            "meets_goal": ratio <= goal(count) if variant == "ours" else None,
            "build_ms_per_chain": all_rigs[variant].build_seconds / count * 1e3,
        }
        rows.append(result)
        if variant == "native":
            continue
        verdict = ("meets" if ratio <= goal(count) else "MISSES") if variant == "ours" else ""
        print(
            f"{layout:>13} {count:>6} {variant:>25} {native:>9.1f} {per_chain:>9.1f} {ratio:>7.2f}x"
            f" {goal(count):>5.1f} {verdict:>7} {result['build_ms_per_chain']:>8.2f}"
        )
    sys.stdout.flush()
    return rows


# --- Rigify -------------------------------------------------------------------------------------


def rigify_settings(rig) -> None:
    """Pole on and IK stretch off on every limb: what our chains do (they never stretch)."""
    for *_, settings in RIGIFY_LIMBS:
        rig.pose.bones[settings]["pole_vector"] = True
        rig.pose.bones[settings]["IK_Stretch"] = 0.0


def replace_rigify_ik(rig) -> None:
    """Replace Rigify's IK by our chains through the documented step (README, "Rigify"; docs/rigify.md):
    Pose > Two-Bone IK > Rigify Limbs on Two-Bone IK, which puts a
    chain on each limb's IK chain (the ``*_ik`` control bone and its ``MCH-*_ik`` child), aimed at
    the ``MCH-*_ik_target`` bone Rigify's IK aims at, with the ``*_ik_target`` pole control, and
    mutes Rigify's two IK constraints there with their drivers (chain/rigify.py)."""
    bpy.context.view_layer.objects.active = rig
    with bpy.context.temp_override(active_object=rig, object=rig):
        assert bpy.ops.pose.two_bone_ik_rigify_limbs() == {"FINISHED"}
    assert len(rig.two_bone_ik.chains) == len(RIGIFY_LIMBS)


def rigify_scenes(before: pathlib.Path | None) -> dict[str, object]:
    """{"native": rig, "ours": rig, ...}, each alone in a scene of its own, frames 1 to 24; with
    ``before`` also :data:`BEFORE`, the earlier commit's, appended from that file."""
    start = time.perf_counter()
    rig = generate_rigify_human()
    generated = time.perf_counter() - start
    print(f"rigify: generated {rig.name!r} ({len(rig.data.bones)} bones) in {generated:.1f} s")
    # Every variant is a copy, native too: the generated rig itself differs from its copies (the
    # copies' own first evaluation, Rigify's selection and mode), so it is removed.
    variants = []
    for variant in ("native", "ours", *RIGIFY_EXPERIMENTS, *RIGIFY_CONTROLS):
        copy = rig.copy()  # Blender remaps the copy's own drivers and constraints to the copy
        copy.data = rig.data.copy()
        # ...but not the armature's drivers, which read the rig object: aim them at the copy, or
        # the copy's scene evaluates the original rig too.
        for fcurve in copy.data.animation_data.drivers if copy.data.animation_data else ():
            for variable in fcurve.driver.variables:
                for target in variable.targets:
                    if target.id == rig:
                        target.id = copy
        variants.append((variant, copy))
    data = rig.data
    bpy.data.objects.remove(rig)
    bpy.data.armatures.remove(data)
    rigs = {}
    for variant, obj in variants:
        scene = bpy.data.scenes.new(f"Rigify {variant}")
        for collection in list(obj.users_collection):
            collection.objects.unlink(obj)
        scene.collection.objects.link(obj)
        scene.frame_start, scene.frame_end = 1, 24
        bpy.context.window.scene = scene
        rigify_settings(obj)
        if variant == "ctl: Edit Mode toggled":
            with edit(obj):
                pass
        if variant not in ("native", *RIGIFY_CONTROLS):
            replace_rigify_ik(obj)
        if variant in RIGIFY_EXPERIMENTS:
            RIGIFY_EXPERIMENTS[variant](obj)
        scene.view_layers[0].update()
        rigs[variant] = obj
    if before is not None:
        scene = append_scene(before, "Rigify ours")
        rigs[BEFORE] = next(obj for obj in scene.objects if obj.type == "ARMATURE")
        bpy.context.window.scene = scene
        scene.view_layers[0].update()
    return rigs


def key_foot(rigs: dict[str, object]) -> None:
    """Key the foot IK control's location at frames 1 and 24 (a step forward and up)."""
    for obj in rigs.values():
        foot = obj.pose.bones[FOOT]
        for frame, location in ((1, (0.0, 0.0, 0.0)), (24, (0.1, 0.3, 0.4))):
            foot.location = location
            foot.keyframe_insert("location", frame=frame)
        scene = obj.users_scene[0]
        bpy.context.window.scene = scene
        scene.frame_set(1)


def knee_miss(rigs: dict[str, object], location) -> float:
    """Worst distance between the two rigs' ORG limb bone heads and tails with the foot at
    ``location`` (sanity: our chains bend the limbs where Rigify's IK does)."""
    worst = 0.0
    points = {}
    for variant, obj in rigs.items():
        scene = obj.users_scene[0]
        bpy.context.window.scene = scene
        obj.pose.bones[FOOT].location = location
        scene.view_layers[0].update()
        depsgraph = bpy.context.evaluated_depsgraph_get()
        evaluated = obj.evaluated_get(depsgraph)
        points[variant] = [
            evaluated.matrix_world @ getattr(evaluated.pose.bones[f"ORG-{part}.{side}"], end)
            for part in ("thigh", "shin", "upper_arm", "forearm")
            for side in ("L", "R")
            for end in ("head", "tail")
        ]
    for a, b in zip(points["native"], points["ours"], strict=True):
        worst = max(worst, (Vector(a) - Vector(b)).length)
    return worst


# Deform bones of the limbs, whose lengths the accuracy rows compare with their rest lengths.
RIGIFY_DEFORM = tuple(
    f"DEF-{part}.{side}{number}"
    for part in ("thigh", "shin", "upper_arm", "forearm")
    for side in ("L", "R")
    for number in ("", ".001")
) + tuple(f"DEF-{part}.{side}" for part in ("foot", "toe", "hand") for side in ("L", "R"))


def rigify_accuracy(obj, location) -> dict:
    """With the left foot IK control at ``location``: the worst relative change of a limb deform
    bone's length from its rest length, and the worst distance from an IK chain's tail to the bone
    Rigify's IK aims at (where the limb's end should be)."""
    scene = obj.users_scene[0]
    bpy.context.window.scene = scene
    obj.pose.bones[FOOT].location = location
    scene.view_layers[0].update()
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    bones = evaluated.pose.bones
    lengths = max(
        abs((bones[name].tail - bones[name].head).length / obj.data.bones[name].length - 1.0)
        for name in RIGIFY_DEFORM
    )
    ends = max((bones[lower].tail - bones[target].head).length for _, lower, target, *_ in RIGIFY_LIMBS)
    return {"deform_length_error": lengths, "end_miss_m": ends}


def rigify_rows(repeats: int, rng, before: pathlib.Path | None) -> dict:
    """Time the Rigify human's variants interleaved (an update after moving the foot control, one
    frame of playback) and measure their accuracy; returns the result (and prints it)."""
    rigs = rigify_scenes(before)
    others = [name for name in rigs if name not in ("native", "ours")]
    pair = {variant: rigs[variant] for variant in ("native", "ours")}
    misses = {"rest": knee_miss(pair, (0.0, 0.0, 0.0)), "foot raised": knee_miss(pair, (0.05, 0.2, 0.3))}
    places = {"rest": (0.0, 0.0, 0.0), "foot raised": (0.05, 0.2, 0.3), "foot past reach": (0.1, -0.5, -0.6)}
    accuracy = {
        variant: {label: rigify_accuracy(obj, place) for label, place in places.items()}
        for variant, obj in pair.items()
    }
    for variant, rows in accuracy.items():
        print(
            f"rigify: {variant:>6}: "
            + "; ".join(
                f"{label}: deform length {row['deform_length_error'] * 100:.3f}%, "
                f"end {row['end_miss_m']:.2e} m"
                for label, row in rows.items()
            )
        )
    for obj in pair.values():
        obj.pose.bones[FOOT].location = (0.0, 0.0, 0.0)
    frames = list(range(1, 25))

    # The window's scene is switched before anything moves: switching evaluates the scene.
    def move_foot(obj, step: int):
        bpy.context.window.scene = obj.users_scene[0]
        foot = obj.pose.bones[FOOT]
        foot.location.z = 0.02 * (step % 10)
        return obj.users_scene[0].view_layers[0].update

    def next_frame(obj, step: int):
        scene = obj.users_scene[0]
        bpy.context.window.scene = scene
        frame = frames[step % len(frames)]
        return lambda: scene.frame_set(frame)

    result: dict = {
        "bones": len(rigs["native"].data.bones),
        "chains": len(RIGIFY_LIMBS),
        "miss_m": misses,
        "accuracy": accuracy,
    }
    for label, prepare in (("update after moving the foot IK control", move_foot), ("frame_set", next_frame)):
        if prepare is next_frame:
            key_foot(rigs)  # after the update timing: there the foot is not keyed
        medians = interleave(rigs, prepare, repeats, rng)
        native, ours = (medians[variant] * 1e6 for variant in ("native", "ours"))
        ratio = ours / native
        result[label] = {
            "native_us": native,
            "ours_us": ours,
            "to_native": ratio,
            "meets_goal": ratio <= GOAL_RIGIFY,
            **{f"{name} us": medians[name] * 1e6 for name in others},
        }
        verdict = "meets" if ratio <= GOAL_RIGIFY else "MISSES"
        print(
            f"rigify human, {label:>40}: native {native:9.1f} us, ours {ours:9.1f} us, {ratio:.2f}x {verdict}"
        )
        for name in others:
            value = medians[name] * 1e6
            print(f"{'':>14}{name:>40}: {value:9.1f} us, {value / native:.2f}x native")
    print(
        "rigify: worst ORG limb bone head/tail distance, ours vs Rigify's IK: "
        + ", ".join(f"{name} {value * 1e3:.2f} mm" for name, value in misses.items())
    )
    sys.stdout.flush()
    return result


def summary(rows: list[dict], rigify: dict | None) -> str:
    """The run as Markdown tables (for ``docs/benchmarks.md``): ours, before and each experiment
    against native per layout and chain count, and the Rigify human."""
    variants = list(dict.fromkeys(row["variant"] for row in rows if row["variant"] != "native"))
    lines = []
    if rows:
        lines.append("| layout | chains | native us | " + " | ".join(variants) + " | goal |")
        lines.append("|---|---:|---:|" + "---:|" * (len(variants) + 1))
    for key in dict.fromkeys((row["layout"], row["chains"]) for row in rows):
        ratios = {row["variant"]: row for row in rows if (row["layout"], row["chains"]) == key}
        cells = [f"{ratios[v]['to_native']:.2f}x" if v in ratios else "" for v in variants]
        native = next(iter(ratios.values()))["native_us_per_chain"]
        lines.append(f"| {key[0]} | {key[1]} | {native:.1f} | " + " | ".join(cells) + f" | {goal(key[1])} |")
    lines.extend(variable_costs(rows))
    for label, value in (rigify or {}).items():
        if isinstance(value, dict) and "native_us" in value:
            others = "; ".join(
                f"{name[:-3]} {us / value['native_us']:.2f}x"
                for name, us in value.items()
                if name.endswith(" us")
            )
            lines.append(
                f"\nRigify human, {label}: native {value['native_us']:.0f} us, ours {value['to_native']:.2f}x"
                f" (goal {GOAL_RIGIFY}); {others}"
            )
    return "\n".join(lines)


def variable_costs(rows: list[dict]) -> list[str]:
    """The "var:" rows as µs per variable of each kind (the row minus "+1 driver, no variable", over
    :data:`VARIABLES_PER_DRIVER`) and the driver node's own cost (that row minus ours), per
    layout, as a Markdown table."""
    keys = list(dict.fromkeys((r["layout"], r["chains"]) for r in rows))
    found = {(r["layout"], r["chains"], r["variant"]): r["us_per_chain"] for r in rows}
    keys = [key for key in keys if (*key, "var: +1 driver, no variable") in found]
    if not keys:
        return []
    lines = ["", "| us per chain | " + " | ".join(f"{layout} {count}" for layout, count in keys) + " |"]
    lines.append("|---|" + "---:|" * len(keys))
    cells = [found[(*key, "var: +1 driver, no variable")] - found[(*key, "ours")] for key in keys]
    lines.append("| one driver, no variable | " + " | ".join(f"{cell:.2f}" for cell in cells) + " |")
    for kind in VARIABLE_KINDS:
        label = f"var: +{VARIABLES_PER_DRIVER} {kind}"
        if any((*key, label) not in found for key in keys):
            continue  # not run (--experiments)
        cells = [
            (found[(*key, label)] - found[(*key, "var: +1 driver, no variable")]) / VARIABLES_PER_DRIVER
            for key in keys
        ]
        lines.append(f"| a variable, {kind} | " + " | ".join(f"{cell:.3f}" for cell in cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats", type=int, default=41, help="timed updates per leg variant (median taken)"
    )
    parser.add_argument("--rigify-repeats", type=int, default=61, help="timed updates per Rigify variant")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--no-experiments", action="store_true", help="skip the exp: variants")
    parser.add_argument(
        "--experiments",
        nargs="+",
        default=[""],
        help="only the experiments whose label starts with one of these ('var:', 'enc:', 'exp:')",
    )
    parser.add_argument(
        "--before",
        default=BEFORE_REVISION,
        help="commit whose network is timed beside ours ('none': skip; default: before the roll drivers)",
    )
    parser.add_argument("--no-rigify", action="store_true")
    parser.add_argument("--no-legs", action="store_true", help="skip the leg rows (only the Rigify human)")
    parser.add_argument("--output", type=pathlib.Path, default=REPO / "bench" / "results" / "network.json")
    args = parser.parse_args()
    began = time.perf_counter()
    legs = [(layout, count) for layout in (() if args.no_legs else LAYOUTS) for count in args.sizes]
    before = None
    if args.before != "none":
        before = build_before_file(args.before, legs, not args.no_rigify)
    enable_extension(REPO)
    rng = random.Random(1)
    rows = []
    print(
        f"{'layout':>13} {'chains':>6} {'variant':>25} {'native':>9} {'variant':>9} {'ratio':>8}"
        f" {'goal':>5} {'':>7} {'build ms':>8}   (us per chain per update, medians; build: per chain)"
    )
    for layout in () if args.no_legs else LAYOUTS:
        for count in args.sizes:
            variants: tuple[str, ...] = ("native", "ours", *((BEFORE,) if before else ()))
            if not args.no_experiments and (count, layout) in EXPERIMENT_SIZES:
                variants += tuple(e for e in EXPERIMENTS if e.startswith(tuple(args.experiments)))
            rows.extend(leg_rows(layout, count, variants, args.repeats, rng, before))
    rigify = None if args.no_rigify else rigify_rows(args.rigify_repeats, rng, before)
    ours = [row for row in rows if row["variant"] == "ours"]
    worst = max(ours, key=lambda row: row["to_native"] / row["goal"]) if ours else None
    seconds = time.perf_counter() - began
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), ""
    )
    result = {
        "what": "median time of one view_layer.update() after moving every target (legs: per chain)",
        "blender": bpy.app.version_string,
        "python": platform.python_version(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "repeats": args.repeats,
        "rigify_repeats": args.rigify_repeats,
        "before": args.before if before else None,
        "goals": {"chains_1_to_10": GOAL_FEW, "more_chains": GOAL_MANY, "rigify_human": GOAL_RIGIFY},
        "rows": rows,
        "rigify_human": rigify,
        "all_goals_met": all(row["meets_goal"] for row in ours)
        and all(
            value["meets_goal"]
            for value in (rigify or {}).values()
            if isinstance(value, dict) and "meets_goal" in value
        ),
        "seconds": seconds,
    }
    if worst is not None:
        print(
            f"worst legs row against its goal: {worst['layout']} {worst['chains']}:"
            f" {worst['to_native']:.2f}x (goal {worst['goal']:.1f}x)"
        )
    print(summary(rows, rigify))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.output} ({seconds:.0f} s)")


if __name__ == "__main__":
    main()

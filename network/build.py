# SPDX-License-Identifier: GPL-3.0-or-later
"""Build one chain's native network: bones, constraints and simple-expression drivers that make
Blender itself put the contract's solve into the chain bones (docs/design.md, "The native network").

What the network is (each bone: parent, rest, constraints, drivers and their rules) is written
once, in :mod:`.spec` (``NETWORK``): this module makes it from that table, and
``docs/how-it-works.md`` shows it.

The chain's settings and rolls are custom properties of the lower chain bone (``IK Influence``,
``IK Enabled``, ``IK Twist``, ``IK Softness``, ``IK Upper Roll``, ``IK Lower Roll``:
:data:`PROPERTIES`), where the animation editors list their keys under the bone, as a Blender IK
constraint's influence; the drivers read them there. The chain bones get a Copy Transforms of
``MCH-IK-U`` and ``MCH-IK-L`` (influence ``influence * enabled``, 0 where the network cannot
solve: :func:`solver.expressions.influence`), and with End Rotation Target the
end bone a Copy Rotation of the target, last in their stacks or first (``chain.stack_position``,
:func:`place`). Every driver is a simple expression (:mod:`solver.expressions`): no Python, no Auto
Run, and nothing of the extension is needed to evaluate it. Distances are measured in the root
bone's frame and the rest lengths are baked into the expressions, so the parents' scale scales the
whole chain (uneven too: the tracks work in the root's space, docs/contract.md D6); the chain bones'
own location and scale channels are not read (the chain's readouts measure what that misses).

Bones can only be added in Edit Mode: :func:`build` is run by the operators, never per update.
"""

from __future__ import annotations

import contextlib
import math
from typing import NamedTuple

import bpy
from mathutils import Euler, Matrix, Vector

from ..compat import animation_fcurves
from ..solver import expressions
from . import legacy as legacy_layout
from . import rolls, spec
from .edit import MechanismError, bone_collection, can_add_bones, edit_bones, in_mode
from .layout import (  # noqa: F401  (re-exported: the network's names, read through this module)
    DESCRIPTIONS,
    PREFIX,
    PROPERTIES,
    ROLLS,
    SETTINGS,
    SOLVER_TOLERANCE,
    Parts,
    bone_path,
    chain_lower,
    legacy_setting_path,
    number,
    parts,
    set_number,
    setting_path,
    source,
)
from .templates import Templates

COLLECTION = "Two-Bone IK Mechanism"
CONSTRAINT = spec.OUTPUT
END_CONSTRAINT = spec.END_OUTPUT
# A muted IK constraint on the lower bone that names the chain's target and pole: it poses nothing,
# and Blender's Select > Constraint Target finds the controls through it, as for its own IK.
CONTROLS_CONSTRAINT = "Two-Bone IK Controls"
# The inherit settings the root bone copies from the upper bone when it is built.
INHERIT = ("use_connect", "use_inherit_rotation", "inherit_scale", "use_local_location")
# A straight chain's bend normal is the upper bone's X axis below this relative cross product.
PARALLEL = 1e-6
# The aim bone's own rotation: its Y axis along armature +X, where forward falls back (D2).
AIM_ROTATION = (math.sqrt(0.5), 0.0, 0.0, -math.sqrt(0.5))
# Rows/columns of the canonical hinge frame: bend normal -X, forward +Y, pole side +Z.
HINGE = Matrix(((-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, -1.0)))


class RestShape(NamedTuple):
    """The chain at rest, armature space: what the network bakes in.

    head:                     the root (upper bone's head).
    upper_length, lower_length: |lower head - head| and the lower bone's length.
    side:                     unit direction from the root-end line towards the joint.
    upper_rest:               4x4 rest matrix of the solved upper bone, in the aim frame at rest
                              (identity orientation at the root): its segment along +Y, the bend
                              normal along -X.
    lower_rest:               the solved lower bone's, at the chain's rest offset from the solved
                              upper bone (as the lower bone is from the upper one), so that its
                              local transform is the lower bone's own and blends in local space.
    """

    head: Vector
    upper_length: float
    lower_length: float
    side: Vector
    upper_rest: Matrix
    lower_rest: Matrix


def rest_shape(upper, lower) -> RestShape:
    """The :class:`RestShape` of edit bones ``upper``/``lower``."""
    head = upper.head.copy()
    upper_segment, lower_segment = lower.head - head, lower.tail - lower.head
    a, b = upper_segment.length, lower_segment.length
    upper_matrix = upper.matrix.to_3x3().normalized()
    lower_matrix = lower.matrix.to_3x3().normalized()
    upper_direction = upper_segment.normalized() if a > 0.0 else upper_matrix.col[1]
    lower_direction = lower_segment.normalized() if b > 0.0 else lower_matrix.col[1]
    normal = upper_direction.cross(lower_direction)
    if normal.length <= PARALLEL:
        normal = upper_matrix.col[0]  # straight chain: Blender's usual hinge axis
    normal = (normal - normal.dot(upper_direction) * upper_direction).normalized()
    reach = lower.tail - head
    forward = reach.normalized() if reach.length > PARALLEL * (a + b) else upper_direction

    # Armature axes -> the aim frame at rest: the upper segment onto +Y, the bend normal onto -X.
    to_aim = HINGE @ Matrix((normal, upper_direction, normal.cross(upper_direction)))
    upper_rest = Matrix.Translation(head) @ (to_aim @ upper_matrix).to_4x4()
    return RestShape(
        head,
        a,
        b,
        forward.cross(normal).normalized(),
        upper_rest,
        upper_rest @ upper.matrix.inverted() @ lower.matrix,
    )


def _new_bone(bones, collection, name: str, matrix: Matrix, length: float, parent=None):
    """Replace (or make) edit bone ``name`` with rest ``matrix`` and ``length``, non-deforming.
    ``bones``: :class:`_EditBones`."""
    bone = bones.replace(name)
    bone.tail = (0.0, 1.0, 0.0)  # a bone needs a length before its matrix can be set
    bone.matrix = matrix
    bone.length = length
    bone.parent = parent
    bone.use_deform = False
    bone.hide_select = True  # Select > Constraint Target from a chain bone skips it
    collection.assign(bone)
    return bone


class _EditBones:
    """An armature's edit bones by name: ``edit_bones.get`` walks the whole list (Blender keeps
    no index of edit bones), so a build looks them up here."""

    def __init__(self, edit_bones):
        self._bones = edit_bones
        self._by_name = {bone.name: bone for bone in edit_bones}

    def __getitem__(self, name: str):
        return self._by_name[name]

    def replace(self, name: str):
        """A new edit bone ``name``, in place of the one of that name if there is one."""
        old = self._by_name.pop(name, None)
        if old is not None:
            self._bones.remove(old)
        bone = self._bones.new(name)
        self._by_name[bone.name] = bone
        return bone


def _edit_chain(bones: _EditBones, collection, chain, names: Parts) -> RestShape:
    """Make one chain's network bones (Edit Mode) as :data:`.spec.NETWORK` lists them; returns the
    chain's rest shape."""
    upper, lower = bones[chain.upper_bone], bones[chain.lower_bone]
    shape = rest_shape(upper, lower)
    reach = shape.upper_length + shape.lower_length
    rests = {
        "upper": upper.matrix,
        "root": Matrix.Translation(shape.head),
        "hint": Matrix.Translation(shape.head + shape.side * reach),
        "solved upper": shape.upper_rest,
        "solved lower": shape.lower_rest,
    }
    lengths = {"upper": upper.length, "lower": lower.length, "probe": 0.25 * reach}
    for spec_bone in spec.NETWORK:
        parent = bones[getattr(names, spec_bone.parent)] if spec_bone.parent else upper.parent
        name = getattr(names, spec_bone.field)
        bone = _new_bone(bones, collection, name, rests[spec_bone.rest], lengths[spec_bone.length], parent)
        if spec_bone.inherit == "upper":
            for flag in INHERIT:
                setattr(bone, flag, getattr(upper, flag))
        elif spec_bone.inherit == "hinge":
            # Its head is the root and its scale the parents', its orientation armature-aligned.
            bone.use_connect = upper.use_connect
            bone.use_inherit_rotation = False
            bone.inherit_scale = upper.inherit_scale
    return shape


def lower_space(lower) -> str:
    """The space the lower bone copies its solved bone in: local (its influence blends relative to
    its own parent, as the solved bone's rest is the same offset from the solved upper bone) when
    it inherits as Blender's defaults do; world (exact at full influence, blended as Blender blends
    constraints) when an inherit flag makes local transforms mean something else."""
    default = lower.use_inherit_rotation and lower.inherit_scale == "FULL" and lower.use_local_location
    return "LOCAL" if default else "WORLD"


def _source(constraint, chain, which: str) -> None:
    """Aim ``constraint`` at the chain's target or pole (a bone's Head/Tail point), or at nothing.
    The subtarget is cleared for an object: on a mesh it would name a vertex group."""
    constraint.target, constraint.subtarget = source(chain, which)
    if hasattr(constraint, "head_tail"):  # Copy Location has it; Copy Rotation (End Rotation) not
        armature = constraint.target is not None and constraint.target.type == "ARMATURE"
        constraint.head_tail = getattr(chain, f"{which}_head_tail") if armature else 0.0


def _property(driver, name: str, obj, path: str) -> None:
    variable = driver.variables.new()
    variable.name, variable.type = name, "SINGLE_PROP"
    target = variable.targets[0]
    target.id_type, target.id, target.data_path = "OBJECT", obj, path


def _variables(driver, variables, obj, names: Parts, settings: dict[str, str]) -> None:
    """Add ``variables`` (:class:`.spec.Variable`) to ``driver``: network bones by ``names``, the
    chain's settings at the data paths ``settings`` (:func:`_setting_paths`)."""
    for wanted in variables:
        if wanted.kind in ("setting", "property"):
            path = (
                settings[wanted.channel]
                if wanted.kind == "setting"
                else f"{bone_path(getattr(names, wanted.bones[0]))}.{wanted.channel}"
            )
            _property(driver, wanted.name, obj, path)
            continue
        variable = driver.variables.new()
        variable.name = wanted.name
        variable.type = "LOC_DIFF" if wanted.kind == "distance" else "TRANSFORMS"
        for target, field in zip(variable.targets, wanted.bones, strict=False):
            target.id, target.bone_target = obj, getattr(names, field)
            target.transform_space = wanted.space
            if wanted.kind == "transform":
                target.transform_type = wanted.channel


def _expression(rule: str, shape: RestShape | None = None, start: Euler | None = None) -> str:
    """The text of :mod:`solver.expressions` rule ``rule`` for a chain of rest ``shape``, whose
    solved lower bone starts at ``start`` (the rules that need them)."""
    if rule == "influence":
        return expressions.influence()
    assert shape is not None and start is not None
    a, b = shape.upper_length, shape.lower_length
    texts = {
        "aim_influence": lambda: expressions.aim_influence(a + b, SOLVER_TOLERANCE),
        "soft_distance": lambda: expressions.soft_distance(a, b),
        "roll": lambda: expressions.roll(a + b, SOLVER_TOLERANCE),
        "upper_angle": lambda: expressions.upper_angle(a, b, SOLVER_TOLERANCE),
        "upper_roll": lambda: expressions.offset_angle(0.0),
        "lower_roll": lambda: expressions.offset_angle(start.y),
    }
    return texts[rule]()


def _driver(made: Templates, obj, bone: str, wanted, names: Parts, settings, shape=None, start=None) -> None:
    """Make driver ``wanted`` (:class:`.spec.Driver`) on pose bone ``bone``."""
    path = f"{bone_path(bone)}.{wanted.channel}"
    driver = made.driver(obj, path, wanted.array_index, _expression(wanted.rule, shape, start))
    _variables(driver, wanted.variables, obj, names, settings)


def _bone_prefix(path: str) -> str:
    """The :func:`bone_path` part of a data path into a pose bone ('' for any other path)."""
    start = len('pose.bones["')
    if not path.startswith('pose.bones["'):
        return ""
    end = path.find('"]', start)
    while end > 0 and path[end - 1] == "\\":  # an escaped quote inside the name
        end = path.find('"]', end + 1)
    return path[: end + 2] if end > 0 else ""


def influence_path(bone: str, constraint: str) -> str:
    """The data path (from the armature object) of the influence of constraint ``constraint`` on
    pose bone ``bone``."""
    return f'{bone_path(bone)}.constraints["{bpy.utils.escape_identifier(constraint)}"].influence'


def legacy(obj, chain) -> bool:
    """Whether the chain's network is of the earlier layout (settings on its root bone, rolls in
    its solved bones' channels): it plays as built, and Update Mechanism moves its keys."""
    root = obj.pose.bones.get(parts(chain.upper_bone, chain.lower_bone).root)
    return root is not None and "influence" in root


def _settings(obj, chain, names: Parts, kept: tuple[float, float]) -> None:
    """The chain's settings and rolls as custom properties of its lower bone: the values there, or
    those a network of the earlier layout kept on its root bone (then removed there), or the chain's own; the
    rolls ``kept`` (:func:`.rolls.current`)."""
    lower, root = obj.pose.bones[chain.lower_bone], obj.pose.bones[names.root]
    values = dict(zip((name for name, _ in ROLLS), kept, strict=True))
    for name, default, _, _ in SETTINGS:
        values[name] = number(
            lower[PROPERTIES[name]]
            if PROPERTIES[name] in lower
            else root[name]
            if name in root
            else getattr(chain, name, default)
        )
    for name, *_ in SETTINGS:
        if name in root:
            del root[name]
    ranges = {name: (default, low, high) for name, default, low, high in SETTINGS}
    ranges.update({name: (default, -math.inf, math.inf) for name, default in ROLLS})
    for name, (default, low, high) in ranges.items():
        value: float | bool = values[name]
        key = PROPERTIES[name]
        if name == "enabled":
            # A boolean: a checkbox, keyed with constant interpolation, as a constraint's switch.
            value = values[name] > 0.0
        set_number(lower, key, value)
        ui = lower.id_properties_ui(key)
        if isinstance(value, bool):
            ui.update(default=default > 0.0, description=DESCRIPTIONS[name])
        elif math.isinf(low):
            ui.update(default=default, subtype="ANGLE", description=DESCRIPTIONS[name])
        else:
            ui.update(
                default=default,
                min=low,
                max=high,
                soft_min=low,
                soft_max=high,
                description=DESCRIPTIONS[name],
            )
        lower.property_overridable_library_set(f'["{key}"]', True)


def _influence(made: Templates, obj, bone: str, constraint: str, chain, names: Parts) -> None:
    """Drive the influence of constraint ``constraint`` on ``bone`` by the chain's settings, 0 where
    the network cannot solve (:data:`.spec.INFLUENCE`)."""
    path = f'constraints["{bpy.utils.escape_identifier(constraint)}"]'
    wanted = spec.INFLUENCE._replace(channel=f"{path}.{spec.INFLUENCE.channel}")
    _driver(made, obj, bone, wanted, names, _setting_paths(obj, chain))


def _setting_paths(obj, chain) -> dict[str, str]:
    """Where the chain's network reads each setting: the lower bone's properties, or the root
    bone's in a network of the earlier layout (:func:`legacy`)."""
    if legacy(obj, chain):
        root = parts(chain.upper_bone, chain.lower_bone).root
        return {name: legacy_setting_path(root, name) for name, *_ in SETTINGS}
    return {name: setting_path(chain.lower_bone, name) for name in PROPERTIES}


def _pose(made: Templates, obj, chain, names: Parts, shape: RestShape, kept: tuple[float, float]) -> None:
    """Pose Mode part of :func:`build`: the constraints and drivers of :data:`.spec.NETWORK` on the
    new bones, the chain's settings and its rolls ``kept`` (upper, lower:
    :func:`.rolls.set_rolls`), and the chain bones' Copy Transforms."""
    bones = obj.pose.bones
    for name in names:
        # A rebuilt bone keeps the pose channels of the one it replaces (Blender keeps them by
        # name): clear what a script or a broken file left there.
        bones[name].matrix_basis = Matrix.Identity(4)
    _settings(obj, chain, names, kept)
    settings = _setting_paths(obj, chain)
    start = rolls.start(obj, names)
    for spec_bone in spec.NETWORK:
        name = getattr(names, spec_bone.field)
        pose_bone = bones[name]
        pose_bone.rotation_mode = spec_bone.rotation_mode
        if spec_bone.start == "forward":
            pose_bone.rotation_quaternion = AIM_ROTATION
        elif spec_bone.start == "bent":
            pose_bone.rotation_euler = start
        for constraint in spec_bone.constraints:
            if constraint.source:
                template = made.template(constraint.kind, constraint.name, None)
                _source(template, chain, constraint.source)
                made.copy(pose_bone, template)
            else:
                space_bone = names.root if constraint.space == "CUSTOM" else ""
                target = getattr(names, constraint.target)
                made.constraint(
                    pose_bone, constraint.kind, constraint.name, obj, target, constraint.space, space_bone
                )
            if constraint.influence is not None:
                _driver(made, obj, name, constraint.influence, names, settings, shape, start)
        for driver in spec_bone.drivers:
            _driver(made, obj, name, driver, names, settings, shape, start)

    # The upper bone copies in world space (its solved bone has another parent; for a uniformly
    # scaled parent frame that blends as a local blend would); the lower bone see lower_space.
    for bone_name, solved_name, space in (
        (chain.upper_bone, names.upper, "WORLD"),
        (chain.lower_bone, names.lower, lower_space(obj.data.bones[chain.lower_bone])),
    ):
        made.constraint(bones[bone_name], "COPY_TRANSFORMS", CONSTRAINT, obj, solved_name, space)
        _influence(made, obj, bone_name, CONSTRAINT, chain, names)
    _sync(made, obj, chain, names, rebuild=True)


def _controls_constraint(obj, chain) -> None:
    """Make or update :data:`CONTROLS_CONSTRAINT` on the lower bone: muted, aimed at the chain's
    target and pole (a bone's name, or none for an object)."""
    pose_bone = obj.pose.bones[chain.lower_bone]
    constraint = pose_bone.constraints.get(CONTROLS_CONSTRAINT)
    if constraint is None:
        constraint = pose_bone.constraints.new("IK")
        constraint.name = CONTROLS_CONSTRAINT
        constraint.chain_count = 2
        constraint.show_expanded = False
        constraint.enabled = False
    for which, target, subtarget in (
        ("target", "target", "subtarget"),
        ("pole", "pole_target", "pole_subtarget"),
    ):
        named, bone = source(chain, which)
        if getattr(constraint, target) != named:
            setattr(constraint, target, named)
        if getattr(constraint, subtarget) != bone:
            setattr(constraint, subtarget, bone)


def place(obj, chain) -> None:
    """Put the chain's constraints (Copy Transforms on its bones, End Rotation on the end bone)
    first or last in their bones' stacks, as ``chain.stack_position`` says: last, the chain's pose
    comes out whatever the other constraints do; first, they act on it."""
    end = end_bone_name(obj, chain) if chain.end_rotation == "TARGET" else ""
    for bone_name, name in (
        (chain.upper_bone, CONSTRAINT),
        (chain.lower_bone, CONSTRAINT),
        (end, END_CONSTRAINT),
    ):
        pose_bone = obj.pose.bones.get(bone_name) if bone_name else None
        index = pose_bone.constraints.find(name) if pose_bone is not None else -1
        if index < 0:
            continue
        wanted = 0 if chain.stack_position == "FIRST" else len(pose_bone.constraints) - 1
        if index != wanted:
            pose_bone.constraints.move(index, wanted)


# The network's Copy Location of each of the chain's sources, on the network bone of that field.
SOURCE_CONSTRAINTS = spec.SOURCE
# The constraints the network puts on its own bones (network bone field -> constraint names).
OWN_CONSTRAINTS = spec.OWN_CONSTRAINTS


def _kept_paths(names: Parts) -> tuple[str, ...]:
    """F-Curve data paths on the network's bones that are a chain's own data in a network of the
    earlier layout (:func:`legacy`): its settings and rolls, which Update Mechanism moves to the lower
    bone (network/legacy.py). Today's networks keep no data of the chain's there."""
    settings = tuple(legacy_setting_path(names.root, name) for name, *_ in SETTINGS)
    return (
        *settings,
        f"{bone_path(names.upper)}.rotation_axis_angle",
        f"{bone_path(names.lower)}.rotation_quaternion",
    )


def foreign(obj, chain) -> list[str]:
    """What was added to the chain's network bones by hand, in words ('... on bone'): constraints
    of others, and keys or drivers other than on the settings and rolls (:func:`_kept_paths`).
    A rebuild (:func:`build`) removes them."""
    return foreign_all(obj, [chain])[0]


def foreign_all(obj, chains) -> list[list[str]]:
    """:func:`foreign` of each of ``chains``, reading the armature's F-Curves once."""
    found: list[list[str]] = [[] for _ in chains]
    chain_of_path = {}  # network bone path -> index of its chain in ``chains``
    kept, ours = set(), set()
    for index, chain in enumerate(chains):
        names = parts(chain.upper_bone, chain.lower_bone)
        for field, name in zip(Parts._fields, names, strict=True):
            chain_of_path[bone_path(name)] = index
            pose_bone = obj.pose.bones.get(name)
            own = OWN_CONSTRAINTS.get(field, ())
            for constraint in pose_bone.constraints if pose_bone is not None else ():
                if constraint.name not in own:
                    found[index].append(f"the constraint '{constraint.name}' on '{name}'")
        if legacy(obj, chain):
            kept |= set(_kept_paths(names))
        ours |= _network_drivers(names)
    for fcurves in animation_fcurves(obj):
        driver = fcurves == obj.animation_data.drivers
        for fcurve in fcurves:
            path = fcurve.data_path
            owner = chain_of_path.get(_bone_prefix(path))
            if owner is None or path in kept or (driver and (path, fcurve.array_index) in ours):
                continue
            bone = path.split('"')[1]
            found[owner].append(f"a {'driver' if driver else 'key'} on '{bone}' ({path.rsplit('.', 1)[-1]})")
    return [list(dict.fromkeys(lines)) for lines in found]  # one line for the channels of one property


def _network_drivers(names: Parts) -> set[tuple[str, int]]:
    """(data path, index) of the drivers the network makes on its own bones (:data:`.spec.DRIVERS`)."""
    return {
        (f"{bone_path(getattr(names, field))}.{channel}", index)
        for field, drivers in spec.DRIVERS.items()
        for channel, index in drivers
    }


def _clear_foreign(obj, chains_names: list[Parts]) -> None:
    """Remove keys and drivers on the networks' bones (the rebuild makes its drivers anew; the keys a
    network of the earlier layout kept there were moved or measured first: network/legacy.py), in one pass."""
    paths = {bone_path(name) for names in chains_names for name in names}
    for fcurves in animation_fcurves(obj):
        for fcurve in [f for f in fcurves if _bone_prefix(f.data_path) in paths]:
            fcurves.remove(fcurve)
    drivers_removed(obj)


# Blender keeps 63 bytes of a bone's name.
MAX_NAME_BYTES = 63


def first_users(obj) -> dict[str, tuple[int, str]]:
    """Each bone used by a chain of ``obj`` -> (``as_pointer()``, name) of the first chain in the
    list using it: that chain owns the bone (:func:`sharing`)."""
    users: dict[str, tuple[int, str]] = {}
    for chain in obj.two_bone_ik.chains:
        for bone in (chain.upper_bone, chain.lower_bone):
            users.setdefault(bone, (chain.as_pointer(), chain.name))
    return users


def sharing(obj, chain, users: dict[str, tuple[int, str]] | None = None) -> str:
    """The name of an earlier chain of ``obj`` using one of ``chain``'s bones ('' when none): the
    first chain in the list owns a bone, since two networks cannot drive one bone, and their bone
    names would clash. ``users``: :func:`first_users` of ``obj``, when a caller asks for many."""
    users = first_users(obj) if users is None else users
    pointer = chain.as_pointer() if hasattr(chain, "as_pointer") else None
    for bone in (chain.upper_bone, chain.lower_bone):
        first = users.get(bone)
        if first is not None and first[0] != pointer:
            return first[1]
    return ""


def _network_owners(obj) -> dict[str, list]:
    """Each network bone name of ``obj``'s chains -> the chains whose network has it."""
    owners: dict[str, list] = {}
    for chain in obj.two_bone_ik.chains:
        for name in parts(chain.upper_bone, chain.lower_bone):
            owners.setdefault(name, []).append(chain)
    return owners


def check_bones(obj, chain, owners: dict[str, list] | None = None) -> None:
    """ValueError naming the bone when the chain's bones are missing, not parent and child, or
    named too long for the network's bone names (Blender would cut them), or when another chain's
    network has a bone name this chain's needs. ``owners``: :func:`_network_owners` of ``obj``."""
    bones = obj.data.bones
    for name in (chain.upper_bone, chain.lower_bone):
        if not name or bones.get(name) is None:
            raise ValueError(f"bone {name!r} not found in {obj.name!r}")
    if bones[chain.lower_bone].parent != bones[chain.upper_bone]:
        raise ValueError(f"bone {chain.lower_bone!r} is not a child of {chain.upper_bone!r}")
    owners = _network_owners(obj) if owners is None else owners
    mine = parts(chain.upper_bone, chain.lower_bone)
    chain_bones = {chain.upper_bone, chain.lower_bone}
    for name in sorted(set(mine)):
        for other in owners.get(name, ()):
            # (A chain sharing a bone with this one is the sharing rule's, not a name clash.)
            if not {other.upper_bone, other.lower_bone} & chain_bones:
                raise ValueError(
                    f"the network bone {name!r} of chain {other.name!r} has the name this "
                    f"chain's network needs: rename bone {chain.lower_bone!r} or {chain.upper_bone!r}"
                )
    longest = max(mine, key=lambda name: len(name.encode()))
    if len(longest.encode()) > MAX_NAME_BYTES:
        extra = len(longest.encode()) - MAX_NAME_BYTES
        raise ValueError(
            f"bone name {chain.lower_bone!r} is too long for the network's bone {longest!r}: "
            f"shorten it by {extra} characters"
        )


def build(obj, chains, moved: list[str] | None = None) -> list[Parts]:
    """Build (or rebuild, whole) the native network of each of ``chains`` on armature ``obj``.

    A chain on a bone of an earlier chain (:func:`sharing`) is left out: its status says so.
    A chain has the settings of ``obj.two_bone_ik.chains`` items: ``upper_bone``, ``lower_bone``,
    ``target``, ``target_bone``, ``target_head_tail``, ``pole``, ``pole_bone``, ``pole_head_tail``,
    ``end_rotation``, ``end_bone``, ``stack_position``, and the initial ``influence``, ``enabled``,
    ``twist`` (radians) and ``softness`` (0 to 1), copied into the root bone's custom properties
    (:data:`SETTINGS`), which the drivers read from then on.

    One Edit Mode session for all chains; the armature goes back to the mode it was in. Returns
    the bone names of each chain. Raises MechanismError when bones cannot be added to the armature
    (library data, Edit Mode refused) and ValueError naming the bone when a chain's bones are
    missing or not parent and child; nothing is changed then.

    A network of the earlier layout (:func:`legacy`) is rebuilt with the settings' keys and drivers
    moved to the lower bone and its roll keys turned into keys on the roll properties
    (network/legacy.py); what moved is added to ``moved``, in words.
    """
    users, owners = first_users(obj), _network_owners(obj)
    chains = [chain for chain in chains if not sharing(obj, chain, users)]
    for chain in chains:
        check_bones(obj, chain, owners)
    reason = can_add_bones(obj)
    if reason:
        raise MechanismError(reason)
    # Read every setting before Edit Mode: leaving it may free Python references to the chains.
    names = [parts(chain.upper_bone, chain.lower_bone) for chain in chains]
    kept = [rolls.current(obj, name) for name in names]  # a rebuild keeps them
    chain_bones = [bone for chain in chains for bone in (chain.upper_bone, chain.lower_bone)]
    context = bpy.context
    old = {}  # chain index -> (keyed roll frames, the old network's solved poses)
    for index, (chain, name) in enumerate(zip(chains, names, strict=True)):
        if legacy(obj, chain):
            frames = legacy_layout.roll_frames(obj, name)
            old[index] = frames, legacy_layout.solved_poses(context, obj, name, frames)
    with edit_bones(obj) as edit:  # first: it may be refused, and nothing is changed yet
        for index in old:
            said = legacy_layout.move_settings(obj, chains[index], names[index])
            if moved is not None and said:
                moved.append(f"'{chains[index].lower_bone}': keys of {', '.join(said)}")
        collection, bones = bone_collection(obj.data, COLLECTION, visible=False), _EditBones(edit)
        shapes = [
            _edit_chain(bones, collection, chain, name) for chain, name in zip(chains, names, strict=True)
        ]
    _clear_foreign(obj, names)
    _clear_constraints(obj, names, chain_bones)
    with Templates() as made:
        for chain, name, shape, chain_rolls in zip(chains, names, shapes, kept, strict=True):
            _pose(made, obj, _fresh(obj, chain), name, shape, chain_rolls)
    for index, (frames, poses) in old.items():
        legacy_layout.remove_roll_channels(obj, names[index])
        keyed = legacy_layout.key_rolls(context, obj, names[index], frames, poses)
        if moved is not None and keyed:
            moved.append(f"'{chain_lower(names[index])}': roll keys on {keyed} frame(s)")
    return names


def _fresh(obj, chain):
    """``chain`` again after a mode switch, which may free Python references to stored data."""
    path = getattr(chain, "path_from_id", None)
    return obj.path_resolve(path()) if path is not None else chain


def end_bone_name(obj, chain) -> str:
    """The bone End Rotation turns: ``chain.end_bone`` when it is a child of the lower bone, else
    the lower bone's first child; '' when there is none."""
    lower = obj.data.bones.get(chain.lower_bone)
    if lower is None:
        return ""
    if chain.end_bone:
        return chain.end_bone if lower.children.get(chain.end_bone) is not None else ""
    return lower.children[0].name if len(lower.children) else ""


def drivers_removed(obj) -> None:
    """Call after removing drivers (or other F-Curves) of ``obj`` outside Edit Mode: Blender then
    copies ``obj`` into the depsgraph again. Until it does, the evaluated copy keeps its old list of
    drivers, which the depsgraph evaluates by position, so the drivers after a removed one turn
    invalid at the next update (measured: every driver of the armature's other chains)."""
    obj.update_tag()


def _remove_constraint(pose_bone, name: str) -> None:
    """Remove our constraint ``name`` from ``pose_bone`` with its influence driver."""
    constraint = pose_bone.constraints.get(name)
    if constraint is None:
        return
    with contextlib.suppress(RuntimeError, TypeError):  # no driver left: nothing to remove
        constraint.driver_remove("influence")
        drivers_removed(pose_bone.id_data)
    pose_bone.constraints.remove(constraint)


def sync(obj, chain) -> None:
    """Bring a built network in step with the chain's target, pole, Head/Tail and End Rotation
    (no Edit Mode). Does nothing when the network's bones are missing (the chain's status says to
    run Update Mechanism), and for a chain on an earlier chain's bones (:func:`sharing`)."""
    names = parts(chain.upper_bone, chain.lower_bone)
    bones = obj.pose.bones
    if sharing(obj, chain) or any(bones.get(name) is None for name in names):
        return
    with Templates() as made:
        _sync(made, obj, chain, names)


def _sync(made: Templates, obj, chain, names: Parts, rebuild: bool = False) -> None:
    """:func:`sync` of a chain with a whole network of its own. An End Rotation constraint there is
    kept (with what the rigger set on it) unless ``rebuild``, which makes it to its spec."""
    bones = obj.pose.bones
    for which, name in SOURCE_CONSTRAINTS.items():
        _source(bones[getattr(names, which)].constraints[name], chain, which)
    if bones.get(chain.lower_bone) is not None:
        _controls_constraint(obj, chain)
    lower = obj.data.bones.get(chain.lower_bone)
    end = end_bone_name(obj, chain) if chain.end_rotation == "TARGET" else ""
    for child in lower.children if lower is not None else ():
        if child.name != end:
            _remove_constraint(bones[child.name], END_CONSTRAINT)
    if end:
        constraint = bones[end].constraints.get(END_CONSTRAINT)
        if rebuild or constraint is None:
            _remove_constraint(bones[end], END_CONSTRAINT)
            constraint = made.template("COPY_ROTATION", END_CONSTRAINT, None)
        _source(constraint, chain, "target")
        constraint.mix_mode = "REPLACE"
        if constraint.id_data != obj:  # a scratch template: onto the bone, with its driver
            made.copy(bones[end], constraint)
            _influence(made, obj, end, END_CONSTRAINT, chain, names)
    place(obj, chain)


def _driven_constraints(obj, influences: set[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """The influence drivers that read one of the Influence settings of data paths ``influences``
    (their data paths), and the chain constraints they drive ((pose bone name, constraint name)):
    found by the driver, so a chain bone that was renamed is found too, and a driver left on a
    deleted bone. A constraint of another name is the rigger's (a switch driven by the chain's
    Influence): it and its driver stay."""
    animation = obj.animation_data
    if animation is None:
        return set(), set()
    paths, constraints = set(), set()
    for fcurve in animation.drivers:
        path = fcurve.data_path
        if not path.endswith(".influence") or ".constraints[" not in path:
            continue
        if not influences & {
            target.data_path for variable in fcurve.driver.variables for target in variable.targets
        }:
            continue
        try:
            pose_bone = obj.path_resolve(_bone_prefix(path))
            constraint = obj.path_resolve(path.removesuffix(".influence"))
        except ValueError:  # the bone is gone: only the driver is left
            paths.add(path)
            continue
        if constraint.name in (CONSTRAINT, END_CONSTRAINT):  # a rigger's own switch reading it stays
            paths.add(path)
            constraints.add((pose_bone.name, constraint.name))
    return paths, constraints


def remove(obj, chains) -> None:
    """Remove the networks of ``chains`` (of ``obj``): their constraints on the chain bones and the
    end bones with their drivers (found by the drivers too, so a renamed chain bone loses them),
    every F-Curve on their bones (the settings' keys and drivers, in actions, NLA strips and
    drivers), and their bones (where the armature can be edited; not those that chains of
    other objects sharing the armature use, since such objects share its bones), all in one pass
    and one Edit Mode session. The chain bones then show their own channels: the animator's pose,
    never written. A chain on an earlier chain's bones (:func:`sharing`) has no network of its
    own: skipped."""
    users = first_users(obj)
    chains = [chain for chain in chains if not sharing(obj, chain, users)]
    if not chains:
        return
    names = [parts(chain.upper_bone, chain.lower_bone) for chain in chains]
    # The settings' bone: the lower bone, or where its drivers read them after a rename.
    holders = {chain.lower_bone for chain in chains} | _settings_read(obj, names)
    settings = {setting_path(holder, name) for holder in holders for name in PROPERTIES}
    read = {setting_path(holder, "influence") for holder in holders}
    read |= {legacy_setting_path(name.root, "influence") for name in names}
    influences, constraints = _driven_constraints(obj, read)
    for chain in chains:
        constraints |= {(bone, CONSTRAINT) for bone in (chain.upper_bone, chain.lower_bone)}
        constraints |= {(holder, CONTROLS_CONSTRAINT) for holder in holders}
        lower = obj.data.bones.get(chain.lower_bone)
        constraints |= {
            (child.name, END_CONSTRAINT) for child in (lower.children if lower is not None else ())
        }
    network = {name for chain_names in names for name in chain_names}
    # Objects sharing the armature (linked duplicates) share its bones: those their chains use stay.
    needed = _users_parts(obj.data, skip=obj)
    present = [name for name in network if obj.data.bones.get(name) is not None and name not in needed]
    if can_add_bones(obj):
        present = []  # library bones: the armature keeps them
    paths = {bone_path(name) for name in network}
    influences |= {influence_path(bone, name) for bone, name in constraints} | settings
    if present:
        with edit_bones(obj) as edit:  # first: it may be refused, and nothing is changed yet
            _remove_fcurves(obj, paths, influences)
            _remove_settings(obj, holders)
            # Not aimed at the bones about to go: a relation to a deleted bone is a depsgraph error.
            for bone_name, name in constraints:
                pose_bone = obj.pose.bones.get(bone_name)
                constraint = pose_bone.constraints.get(name) if pose_bone is not None else None
                if constraint is not None:
                    constraint.target = None
            by_name = {bone.name: bone for bone in edit}  # edit_bones[name] walks the list
            for name in present:
                edit.remove(by_name[name])
        collection = obj.data.collections_all.get(COLLECTION)
        if collection is not None and not len(collection.bones):  # the last chain's network went
            obj.data.collections.remove(collection)
    else:
        _remove_fcurves(obj, paths, influences)
        _remove_settings(obj, holders)
    # Blender tests every constraint left on the armature after each single removal: bones whose
    # constraints are all the chains' are cleared in one call where it can (Pose Mode).
    _remove_constraints(obj, constraints)


def _remove_settings(obj, holders: set[str]) -> None:
    """Remove the settings' and rolls' custom properties from the pose bones ``holders``."""
    for name in holders:
        holder = obj.pose.bones.get(name)
        for key in PROPERTIES.values() if holder is not None else ():
            if key in holder:
                del holder[key]


def _settings_read(obj, names: list[Parts]) -> set[str]:
    """The bones whose Influence property the Copy Transforms of the networks ``names`` read (the
    lower bones, under their names now: Blender's rename re-points the drivers)."""
    solved = {name for chain_names in names for name in (chain_names.upper, chain_names.lower)}
    drivers = obj.animation_data.drivers if obj.animation_data is not None else ()
    key = f'["{PROPERTIES["influence"]}"]'
    found = set()
    for fcurve in drivers:
        path = fcurve.data_path
        if not path.endswith(".influence") or f'.constraints["{CONSTRAINT}"]' not in path:
            continue
        try:
            constraint = obj.path_resolve(path.removesuffix(".influence"))
        except ValueError:
            continue
        if getattr(constraint, "subtarget", None) not in solved:
            continue
        for variable in fcurve.driver.variables:
            for target in variable.targets:
                prefix = _bone_prefix(target.data_path)
                if prefix and target.data_path == prefix + key:
                    with contextlib.suppress(ValueError):
                        found.add(obj.path_resolve(prefix).name)
    return found


def _remove_fcurves(obj, paths: set[str], influences: set[str]) -> None:
    """Remove every F-Curve of ``obj`` on the pose bones of data ``paths`` (:func:`bone_path`) and
    those of data paths ``influences`` (constraint influences, the chains' settings), in one
    pass."""
    for fcurves in animation_fcurves(obj):
        doomed = [f for f in fcurves if _bone_prefix(f.data_path) in paths or f.data_path in influences]
        for fcurve in doomed:
            fcurves.remove(fcurve)
    drivers_removed(obj)


def _clear_constraints(obj, chains_names: list[Parts], chain_bones: list[str]) -> None:
    """Remove every constraint of the networks' existing bones (a bone made anew under the same
    name in Edit Mode keeps its pose channel, constraints and all; the settings on the root bone
    stay with it, as they should) and the chain's constraint on each of ``chain_bones``, with its
    influence driver, in as few calls as Blender allows (:func:`_clear_whole_stacks`)."""
    bones = obj.pose.bones
    constraints = {
        (name, constraint.name)
        for names in chains_names
        for name in names
        if (pose_bone := bones.get(name)) is not None
        for constraint in pose_bone.constraints
    }
    ours = {
        (bone, name)
        for bone in chain_bones
        for name in (CONSTRAINT, CONTROLS_CONSTRAINT)
        if (pose_bone := bones.get(bone)) is not None and pose_bone.constraints.get(name) is not None
    }
    _remove_fcurves(obj, set(), {influence_path(bone, name) for bone, name in ours})
    _remove_constraints(obj, constraints | ours)


def _remove_constraints(obj, constraints: set[tuple[str, str]]) -> None:
    """Remove ``constraints`` ((pose bone name, constraint name)) of ``obj``: whole stacks in one
    call (:func:`_clear_whole_stacks`), the rest one by one."""
    bones = obj.pose.bones
    for bone_name, name in sorted(_clear_whole_stacks(obj, constraints)):
        stack = bones[bone_name].constraints
        stack.remove(stack[name])


def _clear_whole_stacks(obj, constraints: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """Of ``constraints`` ((pose bone name, constraint name)) of ``obj``, remove those of the bones
    that have no others, in one call (Blender's Clear Pose Constraints, in Pose Mode: ``obj`` is
    switched there and back if need be). Returns the ones left that exist. Raises MechanismError
    when Blender refuses Pose Mode."""
    bones = obj.pose.bones
    by_bone: dict[str, set[str]] = {}
    for bone_name, name in constraints:
        pose_bone = bones.get(bone_name)
        if pose_bone is not None and pose_bone.constraints.get(name) is not None:
            by_bone.setdefault(bone_name, set()).add(name)
    whole = [
        bones[bone_name]
        for bone_name, names in by_bone.items()
        if {constraint.name for constraint in bones[bone_name].constraints} <= names
    ]
    if not whole:
        return [(bone_name, name) for bone_name, names in by_bone.items() for name in names]
    names_whole = [pose_bone.name for pose_bone in whole]
    # Outside Pose Mode, a switch there and back (two evaluations) beats a removal at a time.
    with contextlib.nullcontext() if obj.mode == "POSE" else in_mode(obj, "POSE"):
        whole = [bones[name] for name in names_whole]  # a mode switch may free the references
        with bpy.context.temp_override(object=obj, active_object=obj, selected_pose_bones=whole):
            if bpy.ops.pose.constraints_clear.poll():  # type: ignore[call-arg]  # the stub wants a context
                bpy.ops.pose.constraints_clear()
                for name in names_whole:
                    del by_bone[name]
    return [(bone_name, name) for bone_name, names in by_bone.items() for name in names]


def _rest_changed(obj, chain, names: Parts) -> str:
    """The chain bone whose parent, inherit settings or rest pose no longer match the network built
    for it ('' when they match): the network baked them in. Rest matrices are float32: positions
    are compared within 1e-5 x the chain's length or float32's precision at their distance from the
    armature's origin, whichever is coarser, and rotations within 1e-5 or what that precision
    makes of the bones' directions."""
    bones = obj.data.bones
    upper, lower, root = bones[chain.upper_bone], bones[chain.lower_bone], bones[names.root]
    length = upper.length + lower.length
    noise = 1e-6 * max(upper.head_local.length, lower.head_local.length, lower.tail_local.length)
    position = max(1e-5 * length, noise)
    rotation = max(1e-5, noise / min(upper.length, lower.length))
    if (
        root.parent != upper.parent
        or any(getattr(root, flag) != getattr(upper, flag) for flag in INHERIT)
        or not _near(root.matrix_local, upper.matrix_local, rotation, position)
    ):
        return upper.name
    offset = upper.matrix_local.inverted() @ lower.matrix_local
    solved = bones[names.upper].matrix_local.inverted() @ bones[names.lower].matrix_local
    if (
        not _near(offset, solved, rotation, position)
        or abs(bones[names.lower].length - lower.length) > position
    ):
        return lower.name
    return ""


def _near(first: Matrix, second: Matrix, rotation: float, position: float) -> bool:
    """Whether two 4x4 matrices agree: their 3x3 parts entry by entry within ``rotation``, their
    translations within ``position`` (a distance)."""
    difference = first - second
    if any(abs(difference[row][column]) > rotation for row in range(3) for column in range(3)):
        return False
    return (first.translation - second.translation).length <= position


def _users_parts(armature, skip=None) -> set[str]:
    """The network bone names of the chains of every object using ``armature`` but ``skip``."""
    return {
        name
        for user in bpy.data.objects
        if user.data == armature and user != skip
        for chain in user.two_bone_ik.chains
        for name in parts(chain.upper_bone, chain.lower_bone)
    }


def renamed_part(obj, chain) -> tuple[str, str] | None:
    """(network bone name, its name now) when one of the chain's network bones was renamed by hand:
    the chain lacks exactly that bone, and exactly one bone of the mechanism collection that is no
    chain's hangs from or holds one of the chain's network bones (Blender's rename kept it wired
    in: constraints, drivers and keys re-pointed). None otherwise."""
    names = parts(chain.upper_bone, chain.lower_bone)
    bones = obj.data.bones
    missing = [name for name in names if bones.get(name) is None]
    collection = obj.data.collections_all.get(COLLECTION)
    if len(missing) != 1 or collection is None:
        return None
    owned = _users_parts(obj.data)
    mine = set(names)
    wired = [
        bone.name
        for bone in collection.bones
        if bone.name not in owned
        and (
            (bone.parent is not None and bone.parent.name in mine)
            or any(c.name in mine for c in bone.children)
        )
    ]
    return (missing[0], wired[0]) if len(wired) == 1 else None


def problem(obj, chain) -> str:
    """Why the chain's network cannot give its pose ('' when it is whole): a bone shared with an
    earlier chain, a missing network bone, a chain bone whose Two-Bone IK constraint is missing or
    copies another bone, or inherit settings changed since the build (lower_space). The message
    says what to run."""
    other = sharing(obj, chain)
    if other:
        return f"A bone of this chain is also a bone of chain '{other}', which drives it: pick other bones"
    names = parts(chain.upper_bone, chain.lower_bone)
    bones = obj.pose.bones
    missing = next((name for name in names if bones.get(name) is None), "")
    if missing:
        moved = renamed_part(obj, chain)
        if moved:
            return (
                f"The chain's network bone '{moved[0]}' was renamed '{moved[1]}': run Pose > Two-Bone IK > "
                "Update Mechanism to name it back"
            )
        return f"The chain's network lacks bone '{missing}': run Pose > Two-Bone IK > Update Mechanism"
    if not legacy(obj, chain):
        start, own = rolls.start(obj, names), bones[names.lower].rotation_euler
        if (
            bones[names.lower].rotation_mode != "YXZ"
            or max(abs(own.x - start.x), abs(own.z - start.z)) > 1e-5
        ):
            return (
                f"The network bone '{names.lower}' was keyed or turned (Bake Action of every bone does): "
                "run Pose > Two-Bone IK > Update Mechanism"
            )
    changed = _rest_changed(obj, chain, names)
    if changed:
        return (
            f"The rest pose, parent or inherit settings of '{changed}' changed since the chain was built: "
            "run Pose > Two-Bone IK > Update Mechanism"
        )
    spaces = (
        ("WORLD", chain.upper_bone, names.upper),
        (lower_space(obj.data.bones[chain.lower_bone]), chain.lower_bone, names.lower),
    )
    for space, bone_name, solved in spaces:
        constraint = bones[bone_name].constraints.get(CONSTRAINT)
        if constraint is None or constraint.type != "COPY_TRANSFORMS" or constraint.subtarget != solved:
            return (
                f"'{bone_name}' lacks the chain's Copy Transforms: run Pose > Two-Bone IK > Update Mechanism "
                "(or, on a baked rig, remove the chain)"
            )
        if constraint.owner_space != space:
            return (
                f"The inherit settings of '{bone_name}' changed since the chain was built: "
                "run Pose > Two-Bone IK > Update Mechanism"
            )
    return _switch_problem(obj, chain)


def _switch_problem(obj, chain) -> str:
    """Why the chain's constraints do not follow its Influence and Enabled ('' when they do): one is
    muted, or its influence driver is gone, muted or stopped."""
    end = end_bone_name(obj, chain) if chain.end_rotation == "TARGET" else ""
    drivers = obj.animation_data.drivers if obj.animation_data is not None else None
    for bone_name, name in (
        (chain.upper_bone, CONSTRAINT),
        (chain.lower_bone, CONSTRAINT),
        (end, END_CONSTRAINT),
    ):
        constraint = obj.pose.bones[bone_name].constraints.get(name) if bone_name else None
        if constraint is None:
            continue
        if constraint.mute:
            return (
                f"The chain's constraint on '{bone_name}' is muted: unmute it (the chain's Enabled "
                "turns the chain off)"
            )
        fcurve = drivers.find(constraint.path_from_id("influence")) if drivers is not None else None
        if fcurve is None or fcurve.mute or not fcurve.driver.is_valid:
            return (
                f"The influence driver of the chain's constraint on '{bone_name}' is missing or muted: "
                "run Pose > Two-Bone IK > Update Mechanism"
            )
    return ""

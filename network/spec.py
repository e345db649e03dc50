# SPDX-License-Identifier: GPL-3.0-or-later
"""What a chain's network is, written once: each bone with its parent, rest, rotation mode,
constraints and drivers (variables and the :mod:`solver.expressions` rule of each), and what the
chain bones get. The builder (:mod:`.build`) makes the network from this table; the health checks,
the foreign-part and rename checks and Remove read it; ``docs/how-it-works.md`` shows it as a
table (``tests/static/network_table.py`` writes it), and a test keeps the two equal. No bpy: the
table is data.

Names are :class:`.naming.Parts` fields (``root``, ``target``, ...; ``upper`` and ``lower`` are the
solved bones ``MCH-IK-<upper>`` and ``MCH-IK-<lower>``). A constraint's target is such a field, or
with ``source`` the chain's own target or pole (its names in :data:`SOURCE`). Spaces are
Blender's; ``CUSTOM`` is the root bone's space, where the chain's bones are rigid
(docs/contract.md, D6).
"""

from __future__ import annotations

from typing import NamedTuple


class Variable(NamedTuple):
    """A driver variable. ``kind``: ``distance`` (between ``bones``, in ``space``), ``transform``
    (``channel`` of ``bones[0]`` in ``space``), ``property`` (``channel``, a data path from
    ``bones[0]``), ``setting`` (the chain's setting or roll ``channel``, a custom property of its
    lower bone), ``output`` (the influence of the upper chain bone's :data:`COPY_UPPER`), ``own`` (the
    lower chain bone's rotation channels of its rotation mode, read by path: their variables are
    :func:`solver.expressions.own_turn`'s; a path, unlike a transform-channel variable, depends
    on the bone's own channels only, not on its Copy Transforms of the network: no cycle)."""

    name: str
    kind: str
    bones: tuple[str, ...] = ()
    space: str = ""
    channel: str = ""


class Driver(NamedTuple):
    """A driver on ``channel`` (a data path from the pose bone; ``array_index`` -1 for a scalar) whose
    expression is the :mod:`solver.expressions` function ``rule``."""

    channel: str
    array_index: int
    rule: str
    variables: tuple[Variable, ...]


class Constraint(NamedTuple):
    """A constraint named ``name`` of Blender type ``kind``, aimed at network bone ``target`` (or,
    with ``source`` "target" or "pole", at the chain's own) in ``space``, its influence driven by
    ``influence`` when given."""

    name: str
    kind: str
    target: str = ""
    space: str = "WORLD"
    influence: Driver | None = None
    source: str = ""


class Bone(NamedTuple):
    """A network bone. ``parent``: a field, or ``""`` for the upper chain bone's parent. ``rest``
    and ``length`` name what the builder measures on the chain at rest (``upper``: the upper bone's
    rest; ``root``: at the root, armature-aligned; ``hint``: the rest bend side, a chain length
    out; ``solved upper``/``solved lower``: the chain's rest in the aim frame; ``probe``: a
    quarter of the chain). ``inherit``: ``upper`` copies the upper bone's inherit flags, ``hinge``
    keeps its parent's scale but not its rotation, ``""`` Blender's defaults. ``start``: the
    builder's initial rotation (``forward``: Y along +X; ``bent``: a quarter turn bent)."""

    field: str
    parent: str
    rest: str
    length: str
    inherit: str
    rotation_mode: str
    constraints: tuple[Constraint, ...]
    drivers: tuple[Driver, ...]
    does: str
    start: str = ""


def _setting(name: str, setting: str) -> Variable:
    return Variable(name, "setting", channel=setting)


# The start rotations of Bone.start (the builder's, held by constant drivers: START; the health
# check compares the undriven channels with them): "forward", the aim bone's quaternion, its Y axis
# along armature +X, where forward falls back (D2). "bent" depends on the chain's rest
# (network.rolls.start).
FORWARD = (0.7071067811865476, 0.0, 0.0, -0.7071067811865476)

# The root-target distance in the root's units.
DISTANCE = Variable("D", "distance", ("target", "root"), "LOCAL_SPACE")
# The aim frame's axes in armature space, m<row><column> (an RNA matrix path indexes column first).
AIM_AXES = tuple(
    Variable(f"m{row}{column}", "property", ("aim",), channel=f"matrix[{column}][{row}]")
    for row in range(3)
    for column in range(3)
)
# The chain's own target and pole: the Copy Location of each, on the network bone of that field.
SOURCE = {"target": "Target", "pole": "Pole"}

NETWORK: tuple[Bone, ...] = (
    Bone(
        "root",
        "",
        "upper",
        "upper",
        "upper",
        "QUATERNION",
        (),
        (),
        "a copy of the upper bone's rest: the chain's root, and its parents' scale",
    ),
    Bone(
        "target",
        "root",
        "upper",
        "probe",
        "",
        "QUATERNION",
        (Constraint(SOURCE["target"], "COPY_LOCATION", source="target"),),
        (),
        "Copy Location of the target: its local position measures the distance in root units",
    ),
    Bone(
        "aim",
        "",
        "root",
        "probe",
        "hinge",
        "QUATERNION",
        (
            Constraint(
                "Aim",
                "DAMPED_TRACK",
                "target",
                "CUSTOM",
                Driver('constraints["Aim"].influence', -1, "aim_influence", (DISTANCE,)),
            ),
        ),
        (),
        "at the root, Y aimed at the target in the root's space (+X when the target is at the root, D2)",
        start="forward",
    ),
    Bone(
        "pole",
        "aim",
        "root",
        "probe",
        "",
        "QUATERNION",
        (
            Constraint("Hint", "COPY_LOCATION", "hint"),
            Constraint(SOURCE["pole"], "COPY_LOCATION", source="pole"),
        ),
        (),
        "Copy Location of the hint, then of the pole: the pole hint in the aim frame",
    ),
    Bone(
        "hint",
        "root",
        "hint",
        "probe",
        "",
        "QUATERNION",
        (),
        (),
        "the pole hint used without a pole: the rest chain's bend side",
    ),
    Bone(
        "roll",
        "aim",
        "root",
        "probe",
        "",
        "XYZ",
        (),
        (
            Driver(
                "rotation_euler",
                1,
                "roll",
                (
                    *(
                        Variable(axis.lower(), "transform", ("pole",), "LOCAL_SPACE", f"LOC_{axis}")
                        for axis in "XYZ"
                    ),
                    *AIM_AXES,
                    _setting("t", "twist"),
                ),
            ),
        ),
        "turned about forward onto the pole's side, the fallback axis on the line (D3), plus twist (D9)",
    ),
    Bone(
        "end",
        "aim",
        "root",
        "probe",
        "",
        "QUATERNION",
        (),
        (Driver("location", 1, "soft_distance", (DISTANCE, _setting("k", "softness"))),),
        "along forward at the eased distance (softness, D10): where the end goes",
    ),
    Bone(
        "hinge",
        "roll",
        "root",
        "probe",
        "",
        "YXZ",
        (),
        (
            Driver(
                "rotation_euler",
                0,
                "upper_angle",
                (Variable("d", "property", ("end",), channel="location[1]"),),
            ),
            Driver("rotation_euler", 1, "upper_roll", (_setting("r", "upper_roll"),)),
        ),
        "turned about the bend normal (its X) by the upper angle (law of cosines, clamped), after "
        "the upper roll about the upper segment (its Y)",
    ),
    Bone(
        "upper",
        "hinge",
        "solved upper",
        "upper",
        "",
        "QUATERNION",
        (),
        (),
        "the solved upper bone",
    ),
    Bone(
        "lower",
        "upper",
        "solved lower",
        "lower",
        "",
        "YXZ",
        (Constraint("Bend", "DAMPED_TRACK", "end", "CUSTOM"),),
        (Driver("rotation_euler", 1, "lower_roll", (_setting("r", "lower_roll"), Variable("", "own"))),),
        "the solved lower bone: tracks the end probe from a start bent a quarter turn; its Y "
        "adds the lower roll and the lower bone's own turn about its axis (its rotation's twist)",
        start="bent",
    ),
)

# The chain's influence: on the upper bone's Copy Transforms by the chain's settings, 0 where the
# network cannot solve; the others take the upper bone's (SAME_INFLUENCE), its checks evaluated once.
INFLUENCE = Driver(
    "influence",
    -1,
    "influence",
    (
        _setting("influence", "influence"),
        _setting("enabled", "enabled"),
        Variable("v", "property", ("target",), channel=f'constraints["{SOURCE["target"]}"].is_valid'),
        DISTANCE,
        Variable("P", "distance", ("pole", "root"), "WORLD_SPACE"),
        Variable("s", "transform", ("root",), "WORLD_SPACE", "SCALE_Y"),
    ),
)
SAME_INFLUENCE = Driver("influence", -1, "same_influence", (Variable("w", "output"),))


class Output(NamedTuple):
    """A constraint the chain puts on a bone of its own: the chain's edge, where the network's solve
    reaches the rig. ``slot``: ``upper`` and ``lower`` (the chain bones) or ``end`` (the lower bone's
    child End Rotation turns, with End Rotation Target only). ``kind``: Blender's type. ``copies``:
    the solved bone (a field) it copies, or ``sources``: the chain's own target and pole it aims at.
    ``space``: its owner space (``LOWER``: local where the lower bone inherits as Blender's defaults
    do, else world: network/outputs.py). ``influence``: its driver; None for one kept muted, which
    poses nothing. The posing ones sit first or last in their stacks (the chain's Constraint
    Position)."""

    name: str
    slot: str
    kind: str
    copies: str = ""
    sources: tuple[str, ...] = ()
    space: str = "WORLD"
    influence: Driver | None = None
    does: str = ""


OUTPUT = "Two-Bone IK"
OUTPUTS: tuple[Output, ...] = (
    Output(
        OUTPUT,
        "upper",
        "COPY_TRANSFORMS",
        copies="upper",
        influence=INFLUENCE,
        does="the upper bone takes its solved bone (world: the solved bone has another parent)",
    ),
    Output(
        OUTPUT,
        "lower",
        "COPY_TRANSFORMS",
        copies="lower",
        space="LOWER",
        influence=SAME_INFLUENCE,
        does="the lower bone takes its solved bone",
    ),
    Output(
        "Two-Bone IK End Rotation",
        "end",
        "COPY_ROTATION",
        sources=("target",),
        influence=SAME_INFLUENCE,
        does="with End Rotation Target, the end bone takes the target's rotation",
    ),
    Output(
        "Two-Bone IK Controls",
        "lower",
        "IK",
        sources=("target", "pole"),
        does="a muted IK naming the target and pole: Select > Constraint Target finds them, as for "
        "Blender's IK",
    ),
)
COPY_UPPER, COPY_LOWER, END_ROTATION, CONTROLS = OUTPUTS
# The chain's constraints that pose its bones (a muted one poses nothing).
POSING = tuple(output for output in OUTPUTS if output.influence is not None)

# The constraints on each network bone (field -> names), and the drivers (field -> (channel, index)).
OWN_CONSTRAINTS = {
    bone.field: tuple(c.name for c in bone.constraints) for bone in NETWORK if bone.constraints
}
DRIVERS = {
    bone.field: tuple(
        (driver.channel, max(driver.array_index, 0))
        for driver in (*bone.drivers, *(c.influence for c in bone.constraints if c.influence))
    )
    for bone in NETWORK
}

# The network bones turned through their Euler channels get a constant driver on their rotation
# mode (its rule ``rotation_mode``: the spec's mode), so that a tool setting every bone's mode
# (Rigify's Convert Rotation Modes, a script) leaves their drivers driving the channel Blender reads.
# Quaternion bones keep their turn in any mode (docs/design.md, "Tools that rewrite every bone").
MODE = Driver("rotation_mode", -1, "rotation_mode", ())
MODE_DRIVEN = tuple(bone.field for bone in NETWORK if bone.rotation_mode != "QUATERNION")
for _field in MODE_DRIVEN:
    DRIVERS[_field] += ((MODE.channel, 0),)

# The channels of each start (Bone.start) that hold a turn, each with a constant driver (its rule
# ``start``: the channel's start value), so that Blender's clear tools (Clear User Transforms, Clear
# Transform, all bones) leave the start in place: the aim bone's forward is the start where the
# target is at the root (D2), and the solved lower bone's Damped Track turns from its start, which
# sets its roll about its own axis (docs/design.md, "Tools that rewrite every bone"). A "bent"
# start's Y is the lower roll's driver's. A channel whose start is 0 gets none (clearing keeps it).
START = {
    "forward": (("rotation_quaternion", 0), ("rotation_quaternion", 3)),
    "bent": (("rotation_euler", 0), ("rotation_euler", 2)),
}
START_DRIVEN = {bone.field: START[bone.start] for bone in NETWORK if bone.start}
for _field, _channels in START_DRIVEN.items():
    DRIVERS[_field] += _channels


def _moving_with(source: str) -> tuple[str, ...]:
    """The fields of the network bones that move with the chain's ``source`` ("target" or "pole"):
    those whose constraint copies it, and every bone parented to, aimed at or driven by one of
    those, in the table's order."""
    found: set[str] = set()
    while True:
        more = {
            bone.field
            for bone in NETWORK
            if bone.field not in found and (bone.parent in found or _reads(bone, found, source))
        }
        if not more:
            return tuple(bone.field for bone in NETWORK if bone.field in found)
        found |= more


def _reads(bone: Bone, fields: set[str], source: str) -> bool:
    """Whether ``bone``'s constraints or drivers read the chain's ``source`` or one of ``fields``."""
    drivers = (*bone.drivers, *(c.influence for c in bone.constraints if c.influence is not None))
    read = {c.target for c in bone.constraints} | {
        name for driver in drivers for variable in driver.variables for name in variable.bones
    }
    return any(c.source == source for c in bone.constraints) or bool(read & fields)


# The network bones that move with the chain's target: a target or pole that follows one of them
# (or a chain bone, which copies them) would chase itself, a cycle.
MOVING_WITH_TARGET = _moving_with("target")

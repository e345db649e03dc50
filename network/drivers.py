# SPDX-License-Identifier: GPL-3.0-or-later
"""The network's drivers, made from the spec's rows (:class:`.spec.Driver`, :class:`.spec.Variable`):
each a simple expression of :mod:`solver.expressions` with its variables (docs/design.md, "The
network written once"). :mod:`.build` makes the bones and constraints and calls :func:`make_driver`.
"""

from __future__ import annotations

from mathutils import Euler

from ..solver import expressions
from .layout import SOLVER_TOLERANCE, bone_path
from .naming import Parts, chain_lower, side
from .rest import RestShape
from .templates import Templates

# The key of the upper chain bone's influence path among a driver's setting paths (the ``output``
# variables read it).
OUTPUT_PATH = "output"


def _property(driver, name: str, obj, path: str) -> None:
    variable = driver.variables.new()
    variable.name, variable.type = name, "SINGLE_PROP"
    target = variable.targets[0]
    target.id_type, target.id, target.data_path = "OBJECT", obj, path


# The variables of solver.expressions.own_turn for each rotation mode it reads: (name, channel, index).
_OWN_TURN = {
    "QUATERNION": (("qw", "rotation_quaternion", 0), ("qy", "rotation_quaternion", 2)),
    "AXIS_ANGLE": tuple(
        (name, "rotation_axis_angle", index) for index, name in enumerate(("aa", "ax", "ay", "az"))
    ),
}
_EULER = tuple((name, "rotation_euler", index) for index, name in enumerate("xyz"))


def _variables(driver, variables, obj, names: Parts, settings: dict[str, str]) -> None:
    """Add ``variables`` (:class:`.spec.Variable`) to ``driver``: network bones by ``names``, the
    chain's settings at the data paths ``settings`` (build's ``_setting_paths``), the lower chain bone's
    rotation channels (``own``) by path."""
    for wanted in variables:
        if wanted.kind == "own":
            lower = bone_path(chain_lower(names))
            _property(driver, "m", obj, f"{lower}.rotation_mode")
            for mode in expressions.own_turn_modes(obj.pose.bones[chain_lower(names)].rotation_mode):
                for name, channel, index in _OWN_TURN.get(mode, _EULER):
                    _property(driver, name, obj, f"{lower}.{channel}[{index}]")
            continue
        if wanted.kind in ("setting", "output", "property"):
            path = (
                settings[wanted.channel]
                if wanted.kind == "setting"
                else settings[OUTPUT_PATH]
                if wanted.kind == "output"
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


def _expression(
    rule: str, shape: RestShape | None = None, start: Euler | None = None, turn: tuple[float, str] = (1.0, "")
) -> str:
    """The text of :mod:`solver.expressions` rule ``rule`` for a chain of rest ``shape``, whose
    solved lower bone starts at ``start`` (the rules that need them); ``turn``: the chain's side
    (:func:`.naming.side`) and its lower bone's rotation mode."""
    if rule == "influence":
        return expressions.influence()
    if rule == "same_influence":
        return expressions.same_influence()
    assert shape is not None and start is not None
    a, b = shape.upper_length, shape.lower_length
    texts = {
        "aim_influence": lambda: expressions.aim_influence(a + b, SOLVER_TOLERANCE),
        "soft_distance": lambda: expressions.soft_distance(a, b),
        "roll": lambda: expressions.roll(a + b, SOLVER_TOLERANCE, turn[0]),
        "upper_angle": lambda: expressions.upper_angle(a, b, SOLVER_TOLERANCE),
        "upper_roll": lambda: expressions.offset_angle(0.0, turn[0]),
        "lower_roll": lambda: expressions.offset_angle(start.y, turn[0], expressions.own_turn(turn[1])),
    }
    return texts[rule]()


def make_driver(
    made: Templates, obj, bone: str, wanted, names: Parts, settings, shape=None, start=None
) -> None:
    """Make driver ``wanted`` (:class:`.spec.Driver`) on pose bone ``bone``."""
    path = f"{bone_path(bone)}.{wanted.channel}"
    lower = chain_lower(names)
    turn = (side(lower), obj.pose.bones[lower].rotation_mode)
    driver = made.driver(obj, path, wanted.array_index, _expression(wanted.rule, shape, start, turn))
    _variables(driver, wanted.variables, obj, names, settings)

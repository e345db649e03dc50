# SPDX-License-Identifier: GPL-3.0-or-later
"""The names of a chain's network and of its settings: the network bones (:class:`Parts`), the
custom properties on the lower bone that hold the chain's settings and rolls, and the data paths
of both. Read by the builder, the rolls and everything that finds a chain's parts."""

from __future__ import annotations

import math
from typing import NamedTuple

import bpy

PREFIX = "MCH-IK-"
# The solver's tolerance for the network and the status: Blender stores bones and matrices in
# float32 (contract D2).
SOLVER_TOLERANCE = 1e-6
# The chain's animatable settings: custom properties of its lower bone, so that keys and drivers on
# them play in a Blender without the extension and the animation editors list them under the bone.
# (name, default, min, max)
SETTINGS = (
    ("influence", 1.0, 0.0, 1.0),
    ("enabled", 1.0, 0.0, 1.0),
    ("twist", 0.0, -math.inf, math.inf),
    ("softness", 0.0, 0.0, 1.0),
)
# The chain's rolls (docs/contract.md, D11), custom properties beside the settings. (name, default)
ROLLS = (("upper_roll", 0.0), ("lower_roll", 0.0))
# The custom property of each setting and roll on the lower bone.
PROPERTIES = {
    "influence": "IK Influence",
    "enabled": "IK Enabled",
    "twist": "IK Twist",
    "softness": "IK Softness",
    "upper_roll": "IK Upper Roll",
    "lower_roll": "IK Lower Roll",
}
# What each property says in Blender's interface (its tooltip).
DESCRIPTIONS = {
    "influence": "How much of the Two-Bone IK chain's pose the bones take (0 FK, 1 IK)",
    "enabled": "Whether the Two-Bone IK chain poses its bones (keys step, as a constraint's switch)",
    "twist": "Turn of the Two-Bone IK chain's bend plane about the root-target line",
    "softness": "Share of the Two-Bone IK chain's reach that eases towards full extension",
    "upper_roll": "Turn of the Two-Bone IK chain's upper bone about its segment (Snap IK to FK sets it)",
    "lower_roll": "Turn of the Two-Bone IK chain's lower bone about its own axis (Snap IK to FK sets it)",
}


class Parts(NamedTuple):
    """The names of one chain's network bones."""

    root: str
    target: str
    aim: str
    pole: str
    hint: str
    roll: str
    end: str
    hinge: str
    upper: str
    lower: str


def parts(upper_bone: str, lower_bone: str) -> Parts:
    """The network bone names of the chain on ``upper_bone``/``lower_bone``."""
    base = f"{PREFIX}{lower_bone}-"
    return Parts(
        root=f"{base}root",
        target=f"{base}target",
        aim=f"{base}aim",
        pole=f"{base}pole",
        hint=f"{base}hint",
        roll=f"{base}roll",
        end=f"{base}end",
        hinge=f"{base}hinge",
        upper=f"{PREFIX}{upper_bone}",
        lower=f"{PREFIX}{lower_bone}",
    )


def bone_path(name: str) -> str:
    """The data path (from the armature object) of pose bone ``name``."""
    return f'pose.bones["{bpy.utils.escape_identifier(name)}"]'


def number(value) -> float:
    """A setting's or roll's custom property ``value`` as a float: NaN when it is not a number (Edit
    Property can make it text or an array, which no driver reads), so the chain's status names it
    (chain/settings.py, ``checked``) where ``float`` would raise."""
    return float(value) if isinstance(value, (int, float)) else math.nan


def set_number(holder, key: str, value: float | bool) -> None:
    """Write custom property ``key`` of ``holder`` (a pose bone); one that holds something else than
    a number (:func:`number`) is made anew, as Blender refuses to change a property's type."""
    if key in holder and not isinstance(holder[key], (int, float)):
        del holder[key]
    holder[key] = value


def setting_path(lower: str, setting: str) -> str:
    """The data path of one of the chain's :data:`SETTINGS` or :data:`ROLLS` on its lower bone
    ``lower`` (:data:`PROPERTIES`)."""
    return f'{bone_path(lower)}["{PROPERTIES[setting]}"]'


def legacy_setting_path(root: str, setting: str) -> str:
    """Where networks of the earlier layout kept setting ``setting``: a custom property of their root
    bone ``root`` (``MCH-IK-<lower>-root``), hidden from the animation editors."""
    return f'{bone_path(root)}["{setting}"]'


def source(chain, which: str) -> tuple[object, str]:
    """(object, bone name) the chain's ``which`` ("target" or "pole") names: the bone name only
    when the object is an armature ('' for any other object: on a mesh it would name a vertex
    group); (None, '') when unset."""
    obj = getattr(chain, which)
    return obj, getattr(chain, f"{which}_bone") if obj is not None and obj.type == "ARMATURE" else ""


def chain_lower(names: Parts) -> str:
    """The lower chain bone of the network ``names`` (``MCH-IK-<lower>`` is its solved bone)."""
    return names.lower[len(PREFIX) :]

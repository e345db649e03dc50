# SPDX-License-Identifier: GPL-3.0-or-later
"""Bone names, built and read back in one place: a chain's network bones (:class:`Parts`,
``MCH-IK-<lower>-<field>`` and the solved ``MCH-IK-<bone>``), the controls Add makes
(``IK Target shin.L``), and a bone's side by Blender's naming rule. Every module that makes a name
or parses one back asks here, so the two can never disagree."""

from __future__ import annotations

from typing import NamedTuple

import bpy

PREFIX = "MCH-IK-"
# Names of the controls of the chain on lower bone ``{lower}`` (bones, or Add's empties), with the
# lower bone's name first where its side is at its front (:func:`control_name`).
TARGET_NAME = "IK Target {lower}"
POLE_NAME = "IK Pole {lower}"


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


# The network bones named after the chain's lower bone (``MCH-IK-<lower>-<field>``); the others are
# the solved bones, named after the chain bone they solve.
_OWN_FIELDS = tuple(field for field in Parts._fields if field not in ("upper", "lower"))


def parts(upper_bone: str, lower_bone: str) -> Parts:
    """The network bone names of the chain on ``upper_bone``/``lower_bone``."""
    own = {field: f"{PREFIX}{lower_bone}-{field}" for field in _OWN_FIELDS}
    return Parts(**own, upper=f"{PREFIX}{upper_bone}", lower=f"{PREFIX}{lower_bone}")


def chain_parts(chain) -> Parts:
    """The network bone names of ``chain`` (anything with ``upper_bone`` and ``lower_bone``)."""
    return parts(chain.upper_bone, chain.lower_bone)


def suffixed(names: Parts, suffix: str) -> Parts:
    """``names`` with ``suffix`` on each bone: Blender's ``.001``, as Join names a copy."""
    return Parts(*(f"{name}{suffix}" for name in names))


def chain_lower(names: Parts) -> str:
    """The lower chain bone of the network ``names`` (``MCH-IK-<lower>`` is its solved bone)."""
    return names.lower[len(PREFIX) :]


def is_network_bone(name: str) -> bool:
    """Whether bone ``name`` is named as a network bone is (every network bone is)."""
    return name.startswith(PREFIX)


def solved_bone(name: str) -> str:
    """The chain bone a solved bone ``name`` (``MCH-IK-<bone>``) solves; '' for another name."""
    return name[len(PREFIX) :] if is_network_bone(name) else ""


def root_of(name: str) -> tuple[str, str] | None:
    """(lower bone, suffix) a network root bone's name ``name`` names: ``MCH-IK-shin-root.001`` gives
    ("shin", ".001") (a Join's copy); None when ``name`` is not a root bone's."""
    marker = parts("", "").root[len(PREFIX) :]  # "-root"
    if not is_network_bone(name) or marker not in name:
        return None
    lower, suffix = name[len(PREFIX) :].rsplit(marker, 1)
    return lower, suffix


def side(bone_name: str) -> float:
    """-1.0 when ``bone_name`` is the right one of a mirrored pair by Blender's naming rule (the rule
    Paste X-Flipped Pose, X-Axis Mirror and Symmetrize pair bones by: ``shin.R``, ``Right_shin``,
    ``r_shin``), else 1.0 (a left bone, or one with no side).

    The chain's angles (Twist, the rolls) are stored times its side, so that the same value on both
    sides of a mirrored rig gives mirrored poses, and Blender's tools, which copy custom properties
    unchanged, mirror them (docs/contract.md, D9 and D11)."""
    flipped = bpy.utils.flip_name(bone_name)
    if flipped == bone_name:
        return 1.0
    first = next(
        index for index, (mine, other) in enumerate(zip(bone_name, flipped, strict=False)) if mine != other
    )
    return -1.0 if bone_name[first] in "Rr" else 1.0


def control_name(template: str, lower_name: str) -> str:
    """The name of a control (:data:`TARGET_NAME` or :data:`POLE_NAME`) of the chain on
    ``lower_name``: "IK Target shin.L". Blender's mirror tools (Paste X-Flipped Pose, X-Axis Mirror,
    Symmetrize) pair bones by a side at either end of the name (``bpy.utils.flip_name``): where the
    lower bone's side is at its front ("Left_shin", "L_shin"), the name starts with the lower bone's
    ("Left_shin IK Target"), so that the left and right controls pair as the bones do."""
    name = template.format(lower=lower_name)
    if bpy.utils.flip_name(lower_name) == lower_name or bpy.utils.flip_name(name) != name:
        return name
    return f"{lower_name} {template.format(lower='').strip()}"


def is_control_name(name: str) -> bool:
    """Whether ``name`` is named as :func:`control_name` names a control, either form, with
    Blender's ".001" when the name was taken."""
    base = name.rsplit(".", 1)[0] if name.rsplit(".", 1)[-1].isdigit() else name
    kinds = tuple(template.format(lower="").strip() for template in (TARGET_NAME, POLE_NAME))
    return name.startswith(tuple(f"{kind} " for kind in kinds)) or base.endswith(
        tuple(f" {kind}" for kind in kinds)
    )

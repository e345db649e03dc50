# SPDX-License-Identifier: GPL-3.0-or-later
"""What a chain's network keeps besides its bones (whose names :mod:`.naming` builds): the custom
properties on the lower bone that hold the chain's settings and rolls, what its root bone records
(side, layout, the lower bone's rotation mode), the constraint and collection names, and the data
paths of all of them."""

from __future__ import annotations

import math

import bpy

from .naming import Parts, chain_lower, chain_parts, side

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
# The custom property of a network's root bone that says its chain's side (-1 right, 1 left or
# middle: :func:`.naming.side`), which the angles above are stored in. Networks built before it (no such
# property) read the angles as they are and not the lower bone's own turn (:func:`reads_own_turn`).
SIDE = "IK Side"
# The custom property of a network's root bone that names the rotation mode whose channels of the
# lower bone its lower roll's driver reads (the lower bone's own turn about its axis), beside
# quaternions (solver.expressions.own_turn_modes).
TURN_MODE = "IK Turn Mode"
# The custom property of a network's root bone that records the layout the network was built with
# (LAYOUTS), so that an upgrade reads a number instead of guessing from the bones.
LAYOUT = "IK Layout"
# The network layouts users' files can hold, by number (docs/design.md, "Network layouts and their
# numbers"). A network built before the number was recorded is recognised by what its root bone
# holds (:func:`built_layout`).
LAYOUTS = {
    1: "0.1.0: no network; the chain's pose was written by a handler (chain/upgrade.py)",
    2: "unreleased: the settings on the network's root bone, the rolls in its solved bones",
    3: "unreleased: the settings and rolls on the lower bone, angles as stored",
    4: "0.2.0: angles stored times the chain's side, the lower bone's own turn read, the Euler "
    "network bones' rotation modes driven",
}
CURRENT_LAYOUT = max(LAYOUTS)
# What each property says in Blender's interface (its tooltip).
DESCRIPTIONS = {
    "influence": "How much of the Two-Bone IK chain's pose the bones take (0 FK, 1 IK)",
    "enabled": "Whether the Two-Bone IK chain poses its bones (keys step, as a constraint's switch)",
    "twist": "Turn of the Two-Bone IK chain's bend plane about the root-target line (the same value on "
    "both sides of a mirrored rig mirrors)",
    "softness": "Share of the Two-Bone IK chain's reach that eases towards full extension",
    "upper_roll": "Turn of the Two-Bone IK chain's upper bone about its segment (Snap IK to FK sets it)",
    "lower_roll": "Turn of the Two-Bone IK chain's lower bone about its own axis, added to the turn of its "
    "own rotation (Snap IK to FK sets it)",
}


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


# The bone collection of the networks' bones.
COLLECTION = "Two-Bone IK Mechanism"
# The inherit settings the root bone copies from the upper bone when it is built.
INHERIT = ("use_connect", "use_inherit_rotation", "inherit_scale", "use_local_location")


def bone_prefix(path: str) -> str:
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


def built_layout(obj, names: Parts) -> int:
    """The number of the layout (:data:`LAYOUTS`) the network of ``names`` was built with: the one
    its root bone records, else what the root bone holds tells (settings there: 2; the chain's side
    recorded: 4; neither: 3); 0 when there is no root bone."""
    root = obj.pose.bones.get(names.root)
    if root is None:
        return 0
    if LAYOUT in root:
        return int(root[LAYOUT])
    if "influence" in root:
        return 2
    return 4 if SIDE in root else 3


def legacy(obj, chain) -> bool:
    """Whether the chain's network is of layout 2 (settings on its root bone, rolls in its solved
    bones' channels): it plays as built, and Update Mechanism moves its keys."""
    return built_layout(obj, chain_parts(chain)) == 2


def built_side(obj, names: Parts) -> float:
    """The side the chain's network was built for (:data:`SIDE` on its root bone), 1.0 for a network
    built before sides, the lower bone's :func:`.naming.side` for a chain with no network yet (it is built
    for it): what the stored angles are multiplied by to give the solve's."""
    root = obj.pose.bones.get(names.root)
    if root is None:
        return side(chain_lower(names))
    value = root.get(SIDE)
    return -1.0 if isinstance(value, (int, float)) and value < 0.0 else 1.0


def reads_own_turn(obj, names: Parts) -> bool:
    """Whether the chain's network adds the lower bone's own turn about its axis (from its rotation
    channel) to the lower roll: layout 4 and later; earlier ones play as built."""
    return built_layout(obj, names) >= 4


def stale_turn(obj, names: Parts) -> str:
    """The lower bone's rotation mode when it is not the one the network reads its own turn from
    (:data:`TURN_MODE`: a script or a tool changed it since the build), else ''."""
    root = obj.pose.bones.get(names.root)
    lower = obj.pose.bones.get(chain_lower(names))
    if root is None or lower is None or TURN_MODE not in root:
        return ""
    return lower.rotation_mode if lower.rotation_mode not in (root[TURN_MODE], "QUATERNION") else ""

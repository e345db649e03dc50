# SPDX-License-Identifier: GPL-3.0-or-later
"""Files saved by earlier versions: chains get their network, once, on load.

- 0.1.0 wrote the solved pose into the chain bones' own channels and kept the animator's pose in
hidden chain properties: ``fk_<slot>`` (the FK ``matrix_basis``), ``written_<slot>`` (what it last
wrote), ``has_written``/``has_written_end`` and ``fk_serial``, for the slots upper, lower and end.
A channel that still holds what 0.1.0 wrote gets its FK value back; one that differs was set by the
user or the animation since, and is the FK pose already. Then the old properties are deleted and
the chain gets its network (network/build.py), which shows the same evaluated pose.
"""

from __future__ import annotations

import re

from mathutils import Matrix

from .. import compat
from ..network import build, layout, naming
from . import pose
from .bones import ChainError, chain_bones, end_bone

LEGACY_KEYS = (
    "fk_upper",
    "fk_lower",
    "fk_end",
    "written_upper",
    "written_lower",
    "written_end",
    "has_written",
    "has_written_end",
    "fk_serial",
)


def _stored(chain):
    """The chain's stored ID properties: Blender 5.0+ keeps registered properties apart from the
    user's custom properties (``bl_system_properties_get``); before 5.0 they are the same."""
    if hasattr(chain, "bl_system_properties_get"):
        return chain.bl_system_properties_get() or {}
    return chain


def is_legacy(chain) -> bool:
    """Whether ``chain`` still holds 0.1.0's FK bookkeeping."""
    stored = _stored(chain)
    return any(key in stored for key in LEGACY_KEYS)


def _matrix(values) -> Matrix:
    values = list(values)
    return Matrix((values[0:4], values[4:8], values[8:12], values[12:16]))


def restore_fk(obj, chain) -> None:
    """Put 0.1.0's stored FK pose back into the channels that still hold its output, then delete
    the old properties. Chains whose bones are gone only lose the old properties."""
    stored = _stored(chain)
    try:
        upper, lower = chain_bones(obj, chain)
        end = end_bone(chain, lower)
    except ChainError:
        upper = lower = end = None
    if upper is not None and lower is not None:
        length = (lower.head_local - upper.head_local).length + lower.length  # 0.1.0's change scale
        for slot, bone, flag in (
            ("upper", upper, "has_written"),
            ("lower", lower, "has_written"),
            ("end", end, "has_written_end"),
        ):
            if bone is None or not stored.get(flag, False) or f"fk_{slot}" not in stored:
                continue
            pose_bone = obj.pose.bones[bone.name]
            written = _matrix(stored[f"written_{slot}"])
            if not pose.differs(pose_bone.matrix_basis, written, length):
                pose_bone.matrix_basis = _matrix(stored[f"fk_{slot}"])
    for key in LEGACY_KEYS:
        if key in stored:
            del stored[key]


# A chain setting addressed by position or by name, as earlier versions keyed it.
_SETTING_PATH = re.compile(
    r'two_bone_ik\.chains\[(\d+|"(?:[^"\\]|\\.)*")\]\.(influence|enabled|twist|softness)$'
)


def _chain_of(obj, key: str):
    chains = obj.two_bone_ik.chains
    if key.startswith('"'):
        return chains.get(key[1:-1].replace('\\"', '"').replace("\\\\", "\\"))
    index = int(key)
    return chains[index] if index < len(chains) else None


def repoint_settings(obj) -> int:
    """Re-point the F-Curves of ``obj`` that animate chain settings by their old paths to the
    custom properties of the chains' lower bones; returns how many."""
    count = 0
    for fcurves in compat.animation_fcurves(obj):
        for fcurve in list(fcurves):
            match = _SETTING_PATH.match(fcurve.data_path)
            chain = _chain_of(obj, match.group(1)) if match else None
            if chain is None:
                continue
            fcurve.data_path = layout.setting_path(chain.lower_bone, match.group(2))
            count += 1
    return count


def needs_network(obj, chain) -> bool:
    """Whether ``chain`` was saved without a network (0.1.0, or before the network existed) and can
    have one: its bones are there, its network's root bone is not."""
    try:
        chain_bones(obj, chain)
    except ChainError:
        return False
    return obj.pose.bones.get(naming.chain_parts(chain).root) is None


def upgrade(obj) -> list[str]:
    """Upgrade the chains of armature object ``obj`` (not linked) saved by earlier versions: FK back
    into the channels (0.1.0), network built, setting animation re-pointed. Returns the names of
    the chains upgraded.

    Raises MechanismError when the network's bones cannot be added (the chains' status then says
    to run Update Mechanism); the FK pose is back in the channels either way.
    """
    for chain in obj.two_bone_ik.chains:
        if is_legacy(chain):
            restore_fk(obj, chain)
    old = [chain for chain in obj.two_bone_ik.chains if needs_network(obj, chain)]
    names = [chain.name for chain in old]
    for chain in old:
        chain.stack_position = "FIRST"  # where those versions put the chain's constraints
    if old:
        build.build(obj, old)
        repoint_settings(obj)
    return names

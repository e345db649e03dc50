# SPDX-License-Identifier: GPL-3.0-or-later
"""Files saved by 0.1.0: give the animator's FK pose back to the channels, once, on load.

0.1.0 wrote the solved pose into the chain bones' own channels and kept the animator's pose in
hidden chain properties: ``fk_<slot>`` (the FK ``matrix_basis``), ``written_<slot>`` (what it last
wrote), ``has_written``/``has_written_end`` and ``fk_serial``, for the slots upper, lower and end.
A channel that still holds what 0.1.0 wrote gets its FK value back; one that differs was set by the
user or the animation since, and is the FK pose already. Then the old properties are deleted and
the chain gets its mechanism (mechanism.py), which shows the same evaluated pose.
"""

from __future__ import annotations

from mathutils import Matrix

from . import mechanism, pose
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


def upgrade(obj) -> list[str]:
    """Upgrade the 0.1.0 chains of armature object ``obj`` (not linked): FK back into the channels,
    old properties gone, mechanism built. Returns the names of the chains upgraded.

    Raises MechanismError when the mechanism's bones cannot be added (the chains' status then says
    to run Update Mechanism); the FK pose is back in the channels either way.
    """
    legacy = [chain for chain in obj.two_bone_ik.chains if is_legacy(chain)]
    names = [chain.name for chain in legacy]
    for chain in legacy:
        restore_fk(obj, chain)
    if legacy:
        mechanism.build(obj, legacy)
    return names

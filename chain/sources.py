# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's target and pole: the one reader of what they are (object and bone), where they are,
and the checks that they can be used (set, found, not a mechanism bone, not moving with the chain,
a target rotation End Rotation Target can copy)."""

from __future__ import annotations

from mathutils import Vector

from ..network import layout, naming, outputs, spec
from . import memo, pose
from .bones import ChainError, renamed_source
from .relations import follows


def source_of(chain, which: str):
    """The chain's ``which`` ("target" or "pole") as (object, pose bone or None): the one reader of
    what a chain's target or pole is, for the status, Apply, Bake and Snap. (None, None) when
    unset. Raises ChainError for a bone that is missing (or was renamed), the chain's own armature
    without a bone, or one of the chains' network bones."""
    source, bone_name = layout.source(chain, which)
    if source is None:
        return None, None
    if source == chain.id_data and not bone_name:
        raise ChainError(f"The {which} is this armature: pick one of its control bones as {which} bone")
    if not bone_name:
        return source, None
    bone = source.pose.bones.get(bone_name) if source.pose is not None else None
    if bone is None:
        now = renamed_source(chain.id_data, chain, which)
        if now:
            raise ChainError(
                f"{which.capitalize()} bone '{bone_name}' was renamed '{now}': run Pose > Two-Bone IK > "
                "Update Mechanism"
            )
        raise ChainError(f"{which.capitalize()} bone '{bone_name}' not found in '{source.name}'")
    if source == chain.id_data and naming.is_network_bone(bone_name):
        raise ChainError(f"The {which} bone '{bone_name}' is a chain's mechanism bone: pick a control bone")
    return source, bone


def source_point(chain, which: str) -> Vector | None:
    """World position of the chain's ``which`` ("target" or "pole"): the object's origin, or the
    point of its bone that Head/Tail picks; None when unset. Raises ChainError as
    :func:`source_of`."""
    source, bone = source_of(chain, which)
    if source is None:
        return None
    if bone is None:
        return source.matrix_world.translation.copy()
    return source.matrix_world @ bone.head.lerp(bone.tail, getattr(chain, f"{which}_head_tail"))


def _moves_with(obj, chain, source, bone_name: str) -> bool:
    """Whether ``source`` (or its bone ``bone_name``) follows the chain's upper bone or the part of
    its network that follows the target (through parenting, constraints, drivers or a deformed
    mesh): a cycle, the chain would chase its own target."""

    def walk() -> bool:
        names = naming.chain_parts(chain)
        moving = {getattr(names, field) for field in spec.MOVING_WITH_TARGET}
        moving |= {bone for _, bone in outputs.slots(obj, chain)}
        return any(armature == obj and name in moving for armature, name in follows(source, bone_name))

    # A question of the rig's relations alone: the panel keeps its answer until they change.
    key = ("moves with", obj.session_uid, chain.upper_bone, chain.lower_bone, source.session_uid, bone_name)
    return memo.relations_scoped(key, walk)


def check_sources(chain) -> None:
    """ChainError (the chain's status) for a target or pole that is unusable: missing, a missing
    bone, the armature itself without a bone, a mechanism bone, or one that moves with the chain's
    bones (a cycle)."""
    obj = chain.id_data
    for which in ("target", "pole"):
        if source_point(chain, which) is None:
            if which == "target":
                raise ChainError("Set a target object")
            continue
        source, bone_name = layout.source(chain, which)
        if _moves_with(obj, chain, source, bone_name):
            label = f"{which} bone '{bone_name}'" if bone_name else f"{which} '{source.name}'"
            raise ChainError(f"The {label} moves with the chain's own bones: a cycle")


def target_point(chain) -> Vector | None:
    """World position the chain reaches for, or None (unset, or a missing bone)."""
    try:
        return source_point(chain, "target")
    except ChainError:
        return None


def check_target_rotation(chain) -> None:
    """ChainError when the target's world rotation, which End Rotation Target copies onto the end
    bone, is not a rotation: a zero, flat or non-finite scale, or a non-finite rotation."""
    source = chain.target
    matrix = source.matrix_world
    bone_name = chain.target_bone if source.type == "ARMATURE" else ""
    if bone_name:
        matrix = matrix @ source.pose.bones[bone_name].matrix
    if not pose.invertible(matrix.to_3x3()):
        raise ChainError(
            f"The target '{source.name}' has a zero or non-finite rotation or scale: End Rotation "
            "Target has no rotation to copy"
        )

# SPDX-License-Identifier: GPL-3.0-or-later
"""IK/FK snapping: move the target and pole onto the FK pose, or make the solved pose the FK pose."""

from __future__ import annotations

import math

from mathutils import Matrix

from . import evaluate, pose, visual
from .chains import current_pole_side, fk_bases, pole_point, pose_matrices, solved
from .evaluate import ChainError, chain_bones, evaluate_chain


def controlled(chain, which: str):
    """What moves for the chain's ``which`` ("target" or "pole"): the pose bone named by
    ``<which>_bone`` when the source is an armature and a bone is named, else the source object;
    None when the chain has no such source.

    Raises
    ------
    ChainError
        When a bone is named but the armature has no such bone: the armature object itself is
        never taken in its place.
    """
    source = getattr(chain, which)
    if source is None:
        return None
    bone_name = getattr(chain, f"{which}_bone")
    if not bone_name or source.type != "ARMATURE":
        return source
    pose_bone = source.pose.bones.get(bone_name) if source.pose is not None else None
    if pose_bone is None:
        raise ChainError(f"{which.capitalize()} bone '{bone_name}' not found in '{source.name}'")
    return pose_bone


def _invertible(matrix: Matrix) -> bool:
    determinant = matrix.determinant()
    return math.isfinite(determinant) and abs(determinant) >= 1e-12


def check_sources(context, obj, chain) -> None:
    """Refuse to snap a chain whose target or pole cannot be moved onto its FK pose.

    The driver's own checks (:func:`evaluate.source_matrix`) refuse a target or pole that is the
    chain's armature without a bone, a missing bone, or anything that moves with the chain's bones
    (a cycle); moving any of those would move the rig or the chain itself. A source on an armature
    with zero or invalid scale is refused too: a bone there cannot be placed.

    Raises
    ------
    ChainError
        With the chain's status: no target, or a target or pole that cannot be snapped.
    """
    if not _invertible(obj.matrix_world):
        raise ChainError(f"Armature '{obj.name}' has zero or invalid scale: nothing to solve")
    depsgraph = context.evaluated_depsgraph_get()
    for which in ("target", "pole"):
        if evaluate.source_matrix(obj, chain, depsgraph, which, check_cycle=True) is None:
            if which == "target":
                raise ChainError("Set a target object")
            continue
        moved = controlled(chain, which)
        source = getattr(chain, which)
        if moved is not source and not _invertible(source.matrix_world):
            raise ChainError(
                f"Armature '{source.name}' has zero or invalid scale: its {which} bone cannot be placed"
            )


def _place(chain, which: str, point, rotation: Matrix | None = None) -> None:
    """Put the chain's target or pole (object origin, or bone head) at world ``point``, and turn it
    to the world 3x3 ``rotation`` when given; its scale and parenting are kept."""
    source = getattr(chain, which)
    moved = controlled(chain, which)
    current = source.matrix_world @ moved.matrix if moved != source else source.matrix_world
    _, turn, scale = current.decompose()
    if rotation is not None:
        turn = rotation.to_quaternion()
    wanted = Matrix.LocRotScale(point, turn, scale)
    if moved != source:
        moved.matrix = source.matrix_world.inverted() @ wanted
    else:
        source.matrix_world = wanted


def snap_ik_to_fk(context, obj, chain) -> None:
    """Move the chain's target to the FK tip and its pole into the FK bend plane.

    After this, solving the chain reproduces its FK pose (the bones' channels), so turning the
    chain on or its influence up changes nothing. With End Rotation set to Target, the target also
    turns to the end bone's FK rotation.

    Nothing moves when the chain cannot be snapped (:func:`check_sources`).

    Raises
    ------
    ChainError
        With the chain's status when its bones are missing, it has no target, or its target or
        pole cannot be moved onto the FK pose (:func:`check_sources`).
    """
    upper_bone, lower_bone = chain_bones(obj, chain)
    context.view_layer.update()  # the parent's pose matrix must be current
    check_sources(context, obj, chain)
    bases = fk_bases(obj, chain)
    by_slot = {slot: basis for slot, _, basis in bases}
    matrices = pose_matrices(obj, upper_bone.name, lower_bone.name, by_slot["upper"], by_slot["lower"])
    root, joint, end, side = current_pole_side(obj, upper_bone.name, lower_bone.name, matrices)
    world = obj.matrix_world
    rotation = None
    for slot, name, basis in bases:
        if slot == "end":
            end_matrix = pose.to_pose(obj.data.bones[name], basis, matrices[1])
            rotation = (world.to_3x3() @ end_matrix.to_3x3()).normalized()
    length = (joint - root).length + (end - joint).length
    pole = pole_point(joint, side, length)
    if not math.isfinite(end.length + pole.length):  # NaN or inf in either
        raise ChainError("The FK pose is at a non-finite position: nothing to snap to")
    _place(chain, "target", world @ end, rotation)
    if chain.pole is not None:
        _place(chain, "pole", world @ pole)


def snap_fk_to_ik(context, obj, chain) -> None:
    """Make the chain's full solve (influence 1) its FK pose: the bones' channels hold the solve,
    so turning the chain off or its influence down changes nothing.

    Raises
    ------
    ChainError
        With the chain's status when it cannot be solved now.
    """
    if chain.target is None:
        raise ChainError("Set a target object")
    # Solved here, not by the handler: a disabled chain is snapped too, from this frame's inputs.
    evaluate_chain(obj, chain, context.evaluated_depsgraph_get())
    context.view_layer.update()  # the mechanism bones' new pose reaches the evaluated armature
    depsgraph = context.evaluated_depsgraph_get()
    if not solved(chain.status):
        raise ChainError(chain.status)
    for name, basis in visual.result_bases(obj, chain, depsgraph, influence=1.0):
        obj.pose.bones[name].matrix_basis = basis

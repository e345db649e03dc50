# SPDX-License-Identifier: GPL-3.0-or-later
"""IK/FK snapping: move the target and pole onto the FK pose, or make the solved pose the FK pose."""

from __future__ import annotations

from mathutils import Matrix

from . import fk, pose
from .chains import chain_bone_slots, current_pole_side, fk_bases, pole_point, pose_matrices, solved
from .evaluate import ChainError, chain_bones, evaluate_chain


def controlled(source, bone_name: str):
    """What moves for a chain's target or pole: the pose bone ``bone_name`` when ``source`` is an
    armature with that bone, else the object ``source`` itself."""
    if bone_name and source.type == "ARMATURE" and source.pose is not None:
        pose_bone = source.pose.bones.get(bone_name)
        if pose_bone is not None:
            return pose_bone
    return source


def _place(source, bone_name: str, point, rotation: Matrix | None = None) -> None:
    """Put the target or pole (object origin, or bone head) at world ``point``, and turn it to the
    world 3x3 ``rotation`` when given; its scale and parenting are kept."""
    moved = controlled(source, bone_name)
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

    After this, solving the chain reproduces its FK pose (:func:`chains.fk_bases`), so turning the
    chain on or its influence up changes nothing. With End Rotation set to Target, the target also
    turns to the end bone's FK rotation. The FK pose is stored as the chain's FK, so a disabled
    chain blends from what it shows once enabled.

    Raises
    ------
    ChainError
        When the chain's bones are missing or it has no target.
    """
    upper_bone, lower_bone = chain_bones(obj, chain)
    if chain.target is None:
        raise ChainError("Set a target object")
    context.view_layer.update()  # the parent's pose matrix must be current
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
    _place(chain.target, chain.target_bone, world @ end, rotation)
    if chain.pole is not None:
        length = (joint - root).length + (end - joint).length
        _place(chain.pole, chain.pole_bone, world @ pole_point(joint, side, length))
    fk.store(chain, fk={slot: basis for slot, _, basis in bases})


def snap_fk_to_ik(context, obj, chain) -> None:
    """Make the chain's full solve (influence 1) its FK pose: the bones' channels hold the solve,
    so turning the chain off or its influence down changes nothing.

    Raises
    ------
    ChainError
        With the chain's status when it cannot be solved now.
    """
    slots = chain_bone_slots(obj, chain)
    if chain.target is None:
        raise ChainError("Set a target object")
    depsgraph = context.evaluated_depsgraph_get()
    influence = chain.influence
    chain.influence = 1.0
    try:
        evaluate_chain(obj, chain, depsgraph)
    finally:
        chain.influence = influence
    if not solved(chain.status):
        raise ChainError(chain.status)
    fk.store(chain, fk={slot: obj.pose.bones[name].matrix_basis for slot, name in slots})

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


# Placing a control is checked against where Blender evaluates it; a few corrections absorb
# constraints whose effect depends on the control's own transform.
PLACE_ATTEMPTS = 3
PLACE_TOLERANCE = 1e-5  # metres, and radians for End Rotation Target's rotation


def _evaluated(context, source, control) -> Matrix:
    """World matrix Blender gives the control now: parents and constraints included."""
    evaluated = source.evaluated_get(context.evaluated_depsgraph_get())
    if control is source:
        return evaluated.matrix_world.copy()
    return evaluated.matrix_world @ evaluated.pose.bones[control.name].matrix


def _channels_world(source, control, basis: Matrix) -> Matrix:
    """World matrix of the control's channels ``basis`` under its parents, without its constraints."""
    bone = None if control is source else control
    return source.convert_space(pose_bone=bone, matrix=basis, from_space="LOCAL", to_space="WORLD")


def _basis_for(source, control, world: Matrix) -> Matrix:
    bone = None if control is source else control
    return source.convert_space(pose_bone=bone, matrix=world, from_space="WORLD", to_space="LOCAL")


def _locked(control, before: Matrix, after: Matrix) -> str:
    """The first locked channel the change from ``before`` to ``after`` would move, or ''."""
    old_location, old_rotation, old_scale = before.decompose()
    location, rotation, scale = after.decompose()
    for axis, name in enumerate("XYZ"):
        if control.lock_location[axis] and abs(location[axis] - old_location[axis]) > PLACE_TOLERANCE:
            return f"location {name}"
        if control.lock_scale[axis] and abs(scale[axis] - old_scale[axis]) > PLACE_TOLERANCE:
            return f"scale {name}"
    if any(control.lock_rotation) and old_rotation.rotation_difference(rotation).angle > PLACE_TOLERANCE:
        return "rotation"
    return ""


def _placed(current: Matrix, wanted: Matrix, turn: bool) -> bool:
    off = (current.translation - wanted.translation).length
    if off > PLACE_TOLERANCE * max(1.0, wanted.translation.length):
        return False
    return not turn or current.to_quaternion().rotation_difference(wanted.to_quaternion()).angle <= 1e-4


def _place(context, chain, which: str, point, rotation: Matrix | None = None) -> None:
    """Put the chain's target or pole (object origin, or bone head) where Blender evaluates it at
    world ``point``, turned to the world 3x3 ``rotation`` when given; its scale is kept.

    Parents and constraints on the control (Child Of, Armature, Copy Transforms...) are accounted
    for: its channels are set so that its evaluated place is the wanted one, checked by evaluating.

    Raises
    ------
    ChainError
        When a locked channel would have to move, or the evaluated place cannot be reached (a
        constraint pins it, a connected bone): the control is left as it was.
    """
    source = getattr(chain, which)
    control = controlled(chain, which)
    before = control.matrix_basis.copy()
    current = _evaluated(context, source, control)
    _, turn, scale = current.decompose()
    if rotation is not None:
        turn = rotation.to_quaternion()
    wanted = Matrix.LocRotScale(point, turn, scale)
    for _ in range(PLACE_ATTEMPTS):
        if _placed(current, wanted, rotation is not None):
            return
        # What parents and constraints do to the channels' world matrix, taken as a left factor
        # (exact for parenting, Child Of, Armature): undo it on the wanted place.
        follow = current @ _channels_world(source, control, control.matrix_basis).inverted()
        basis = _basis_for(source, control, follow.inverted() @ wanted)
        locked = _locked(control, before, basis)
        if locked:
            _restore(context, control, before)
            raise ChainError(f"The {which} '{control.name}' has its {locked} locked: nothing was snapped")
        control.matrix_basis = basis
        context.view_layer.update()
        current = _evaluated(context, source, control)
    if not _placed(current, wanted, rotation is not None):
        _restore(context, control, before)
        off = (current.translation - wanted.translation).length
        raise ChainError(
            f"The {which} '{control.name}' cannot be put on the FK pose ({off:.3g} off): a constraint or "
            "its parenting holds it; nothing was snapped"
        )


def _restore(context, control, basis: Matrix) -> None:
    control.matrix_basis = basis
    context.view_layer.update()


def snap_ik_to_fk(context, obj, chain) -> None:
    """Move the chain's target to the FK tip and its pole into the FK bend plane.

    After this, solving the chain reproduces its FK pose (the bones' channels), so turning the
    chain on or its influence up changes nothing. With End Rotation set to Target, the target also
    turns to the end bone's FK rotation.

    Target and pole land where Blender evaluates them, through their parents and constraints (a
    Child Of to a prop, an Armature constraint). Nothing moves when the chain cannot be snapped
    (:func:`check_sources`, a locked channel, a constraint that pins a control).

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
    target_before = controlled(chain, "target").matrix_basis.copy()
    _place(context, chain, "target", world @ end, rotation)
    if chain.pole is not None:
        try:
            _place(context, chain, "pole", world @ pole)
        except ChainError:
            _restore(context, controlled(chain, "target"), target_before)
            raise


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

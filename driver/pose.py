# SPDX-License-Identifier: GPL-3.0-or-later
"""Solved positions -> pose-bone ``matrix_basis`` (armature space, SPEC D6).

The only place that turns positions into pose-bone matrices. Each bone is aimed with the rotation
that maps its rest direction onto its solved direction and the rest bend-plane normal onto the
solved one, so the joint is a pure hinge and the knee follows the pole whatever the bones' roll.
Location and scale channels keep their FK values: the driver writes rotations only.
"""

from __future__ import annotations

from typing import NamedTuple

from mathutils import Matrix, Quaternion, Vector

# Relative size under which a cross product counts as parallel (float32 bone data).
PARALLEL = 1e-6


class ChainRest(NamedTuple):
    """Rest-pose geometry of a chain, armature space.

    upper_direction: unit vector from the upper head to the lower head.
    lower_direction: unit vector from the lower head to the lower tail.
    normal:          unit rest bend-plane normal (upper's X axis for a straight rest chain).
    pole_side:       unit direction from the rest chain's line towards its joint.
    upper_length:    rest distance upper head -> lower head (metres, armature units).
    lower_length:    rest length of the lower bone.
    """

    upper_direction: Vector
    lower_direction: Vector
    normal: Vector
    pole_side: Vector
    upper_length: float
    lower_length: float


def chain_rest(upper_bone, lower_bone) -> ChainRest:
    """Rest geometry from two ``bpy.types.Bone`` (armature-space rest data)."""
    head = upper_bone.head_local
    joint = lower_bone.head_local
    tail = lower_bone.tail_local
    upper = joint - head
    lower = tail - joint
    upper_length, lower_length = upper.length, lower.length
    upper_direction = upper.normalized() if upper_length > 0.0 else upper_bone.matrix_local.col[1].xyz.normalized()
    lower_direction = lower.normalized() if lower_length > 0.0 else lower_bone.matrix_local.col[1].xyz.normalized()
    normal = upper_direction.cross(lower_direction)
    if normal.length <= PARALLEL:
        # Straight rest chain: Blender's usual hinge axis, the upper bone's local X.
        normal = upper_bone.matrix_local.col[0].xyz
    normal = _orthonormal(normal, upper_direction)
    reach = tail - head
    forward = reach.normalized() if reach.length > PARALLEL * (upper_length + lower_length) else upper_direction
    # The joint sits on this side of the root-end line (n = s x f for a bent chain).
    pole_side = forward.cross(normal).normalized()
    return ChainRest(upper_direction, lower_direction, normal, pole_side, upper_length, lower_length)


def _orthonormal(vector: Vector, axis: Vector) -> Vector:
    """``vector`` with its ``axis`` component removed, normalised."""
    return (vector - vector.dot(axis) * axis).normalized()


def _frame(direction: Vector, normal: Vector) -> Matrix:
    """Right-handed orthonormal 3x3 with columns (direction, normal, direction x normal)."""
    normal = _orthonormal(normal, direction)
    return Matrix((direction, normal, direction.cross(normal))).transposed()


def aim(rest_direction: Vector, rest_normal: Vector, direction: Vector, normal: Vector) -> Matrix:
    """Rotation (3x3) taking rest_direction to direction and rest_normal's plane to normal's."""
    return _frame(direction, normal) @ _frame(rest_direction, rest_normal).transposed()


def solved_normal(root: Vector, joint: Vector, end: Vector, pole_hint: Vector) -> Vector | None:
    """Unit bend-plane normal of a solved chain, oriented like the rest normal (n = pole side x forward).

    For a straight solve the joint is on the line, so the pole hint gives the plane. None when
    neither defines one.
    """
    upper = joint - root
    lower = end - joint
    scale = upper.length * lower.length
    normal = upper.cross(lower)
    if scale > 0.0 and normal.length > PARALLEL * scale:
        return normal.normalized()
    forward = end - root
    normal = (pole_hint - root).cross(forward)
    scale = (pole_hint - root).length * forward.length
    if scale > 0.0 and normal.length > PARALLEL * scale:
        return normal.normalized()
    return None


def _with_rotation(basis: Matrix, rotation: Quaternion) -> Matrix:
    """``basis`` (a matrix_basis) with its rotation replaced, location and scale kept."""
    location, _, scale = basis.decompose()
    return Matrix.LocRotScale(location, rotation, scale)


def solve_bases(
    upper_bone,
    lower_bone,
    rest: ChainRest,
    parent_matrix: Matrix | None,
    root: Vector,
    joint: Vector,
    end: Vector,
    normal: Vector,
    fk_upper: Matrix,
    fk_lower: Matrix,
) -> tuple[Matrix, Matrix]:
    """The two ``matrix_basis`` values that put the chain on (root, joint, end).

    Parameters
    ----------
    upper_bone, lower_bone : bpy.types.Bone
        The chain's bones (rest data and inherit flags).
    rest : ChainRest
        From :func:`chain_rest`.
    parent_matrix : Matrix or None
        The upper bone's parent's pose matrix (armature space), None for a root bone.
    root, joint, end : Vector
        Solved positions, armature space.
    normal : Vector
        Unit solved bend-plane normal (:func:`solved_normal`).
    fk_upper, fk_lower : Matrix
        The FK ``matrix_basis`` values; their location and scale channels are kept.

    Returns
    -------
    (Matrix, Matrix)
        ``matrix_basis`` for the upper and the lower bone. ``Bone.convert_local_to_pose`` does the
        space conversion, so every inherit flag and Local Location setting is honoured.
    """
    upper_rest = upper_bone.matrix_local
    lower_rest = lower_bone.matrix_local
    upper_direction = (joint - root).normalized() if rest.upper_length > 0.0 else None
    lower_direction = (end - joint).normalized() if rest.lower_length > 0.0 else None
    # A zero-length bone keeps the other bone's turn (SPEC: the chain degenerates to one bone).
    upper_turn = aim(
        rest.upper_direction if upper_direction else rest.lower_direction,
        rest.normal,
        upper_direction or lower_direction,
        normal,
    )
    lower_turn = aim(
        rest.lower_direction if lower_direction else rest.upper_direction,
        rest.normal,
        lower_direction or upper_direction,
        normal,
    )

    upper_pose = Matrix.Translation(root) @ (upper_turn @ upper_rest.to_3x3()).to_4x4()
    if parent_matrix is None:
        basis = upper_bone.convert_local_to_pose(upper_pose, upper_rest, invert=True)
    else:
        basis = upper_bone.convert_local_to_pose(
            upper_pose, upper_rest, parent_matrix=parent_matrix,
            parent_matrix_local=upper_bone.parent.matrix_local, invert=True,
        )
    upper_basis = _with_rotation(fk_upper, basis.to_quaternion())
    # The lower bone hangs from the upper bone's new pose matrix, not the stored one.
    if parent_matrix is None:
        upper_pose = upper_bone.convert_local_to_pose(upper_basis, upper_rest)
    else:
        upper_pose = upper_bone.convert_local_to_pose(
            upper_basis, upper_rest, parent_matrix=parent_matrix,
            parent_matrix_local=upper_bone.parent.matrix_local,
        )
    lower_pose = Matrix.Translation(joint) @ (lower_turn @ lower_rest.to_3x3()).to_4x4()
    basis = lower_bone.convert_local_to_pose(
        lower_pose, lower_rest, parent_matrix=upper_pose, parent_matrix_local=upper_rest, invert=True
    )
    lower_basis = _with_rotation(fk_lower, basis.to_quaternion())
    return upper_basis, lower_basis


def blend(fk: Matrix, solved: Matrix, influence: float) -> Matrix:
    """matrix_basis blended from FK (0) to the solve (1): rotations slerp, the rest is FK's."""
    if influence >= 1.0:
        return solved
    if influence <= 0.0:
        return fk.copy()
    rotation = fk.to_quaternion().slerp(solved.to_quaternion(), influence)
    return _with_rotation(fk, rotation)

# SPDX-License-Identifier: GPL-3.0-or-later
"""Solved positions -> pose-bone ``matrix_basis`` (armature space, contract D6).

The only place that turns positions into pose-bone matrices. Each bone is aimed with the rotation
that maps its rest direction onto its solved direction and the rest bend-plane normal onto the
solved one, so the joint is a pure hinge and the knee follows the pole whatever the bones' roll.
Location and scale channels keep their FK values: the driver writes rotations only.
"""

from __future__ import annotations

import math
from typing import NamedTuple, cast

from mathutils import Matrix, Quaternion, Vector

# Relative size under which a cross product counts as parallel (float32 bone data).
PARALLEL = 1e-6
# Changes below these are float32 noise (upgrade.py: a channel the earlier handler wrote is its own).
# Rotation entries of matrix_basis are unitless; location entries scale with the chain.
ROTATION_EPSILON = 2e-6
LOCATION_EPSILON = 2e-6  # x chain length


def differs(first: Matrix, second: Matrix, length: float) -> bool:
    """True when two ``matrix_basis`` values differ by more than float32 noise.

    ``length`` is the chain's length (armature units), the scale of the location entries.
    """
    difference = first - second
    first_row, second_row, third_row, _ = difference  # type: ignore[misc]  # a Matrix iterates by rows
    # A row's length bounds each of its entries: cheaper than visiting the nine entries. Written as
    # "not <=" so that a NaN (a broken value to replace) counts as a difference.
    rows = (first_row.xyz.length, second_row.xyz.length, third_row.xyz.length)
    if not all(row <= ROTATION_EPSILON for row in rows):
        return True
    return not difference.translation.length <= LOCATION_EPSILON * length


def invertible(matrix: Matrix) -> bool:
    """Whether a world matrix can be inverted reliably: finite, and its determinant not tiny next to
    the product of its axes' lengths (relative, so a 1e-4 scale is fine and a flat one is not)."""
    determinant = matrix.determinant()
    axes = matrix.col[0].xyz.length * matrix.col[1].xyz.length * matrix.col[2].xyz.length
    return math.isfinite(determinant) and axes > 0.0 and abs(determinant) > 1e-6 * axes


def rotation_of(matrix: Matrix) -> Matrix:
    """The 3x3 rotation Blender's constraints take from ``matrix`` (3x3 or 4x4): its axes
    normalized, all three negated when it mirrors (a negative determinant: a scale of -1 on an
    axis), as Blender's own decomposition does, so that the result is a rotation."""
    rotation = matrix.to_3x3().normalized()
    return rotation if rotation.determinant() >= 0.0 else rotation @ Matrix.Diagonal((-1.0, -1.0, -1.0))


def uniform(matrix: Matrix) -> bool:
    """Whether a 3x3 is a rotation times a uniform scale (no shear, the same scale on every axis)."""
    gram = matrix.transposed() @ matrix
    scale = gram[0][0]
    return scale > 0.0 and all(
        abs(gram[row][column] - (scale if row == column else 0.0)) <= 1e-6 * scale
        for row in range(3)
        for column in range(3)
    )


def _orthonormal(vector: Vector, axis: Vector) -> Vector:
    """``vector`` with its ``axis`` component removed, normalised."""
    return (vector - vector.dot(axis) * axis).normalized()


def turn(axis: Vector, angle: float) -> Quaternion:
    """The rotation by ``angle`` (radians) about ``axis``, right-handed. Its half-angle sine and
    cosine are taken in float64 (mathutils would reduce the angle in float32: a visible error for
    a twist of many turns)."""
    half = 0.5 * angle
    sine = axis.normalized() * math.sin(half)
    return Quaternion((math.cos(half), sine.x, sine.y, sine.z))


def _with_rotation(basis: Matrix, rotation: Quaternion) -> Matrix:
    """``basis`` (a matrix_basis) with its rotation replaced, location and scale kept."""
    location, _, scale = basis.decompose()
    return Matrix.LocRotScale(location, rotation, scale)


def to_pose(bone, basis: Matrix, parent_matrix: Matrix | None) -> Matrix:
    """Pose matrix (armature space) of ``bone`` for a ``matrix_basis``, under its parent's pose matrix."""
    if parent_matrix is None:
        return bone.convert_local_to_pose(basis, bone.matrix_local)
    return bone.convert_local_to_pose(
        basis, bone.matrix_local, parent_matrix=parent_matrix, parent_matrix_local=bone.parent.matrix_local
    )


def to_basis(bone, pose_matrix: Matrix, parent_matrix: Matrix | None) -> Matrix:
    """``matrix_basis`` that gives ``bone`` the armature-space ``pose_matrix``; honours every inherit flag."""
    if parent_matrix is None:
        return bone.convert_local_to_pose(pose_matrix, bone.matrix_local, invert=True)
    return bone.convert_local_to_pose(
        pose_matrix,
        bone.matrix_local,
        parent_matrix=parent_matrix,
        parent_matrix_local=bone.parent.matrix_local,
        invert=True,
    )


class ChainShape(NamedTuple):
    """The chain as its FK location and scale channels make it, before any rotation; armature space.

    Solving from this shape instead of the bare rest pose keeps pose scale, inherit flags and
    Local Location exact: the solver gets the lengths the bones really have.

    head, joint, tail:            the upper head, lower head and lower tail (the chain's root, joint, end).
    upper_matrix, lower_matrix:   3x3 orientation (with scale) of each bone in this shape.
    normal:                       unit bend-plane normal (the upper bone's X axis for a straight chain).
    pole_side:                    unit direction from the root-end line towards the joint.
    upper_length, lower_length:   |joint - head| and |tail - joint|.
    """

    head: Vector
    joint: Vector
    tail: Vector
    upper_matrix: Matrix
    lower_matrix: Matrix
    normal: Vector
    pole_side: Vector
    upper_length: float
    lower_length: float


def chain_rest(upper_bone, lower_bone) -> ChainShape:
    """The chain's rest-pose :class:`ChainShape` (armature-space rest data, no parent pose)."""
    identity = Matrix.Identity(4)
    return chain_shape(upper_bone, lower_bone, None, identity, identity)


def _unrotated(basis: Matrix) -> Matrix:
    location, _, scale = basis.decompose()
    return Matrix.LocRotScale(location, Quaternion(), scale)


def chain_shape(
    upper_bone, lower_bone, parent_matrix: Matrix | None, fk_upper: Matrix, fk_lower: Matrix
) -> ChainShape:
    """The :class:`ChainShape` for FK bases ``fk_upper``/``fk_lower`` under the upper bone's parent pose."""
    upper_pose = to_pose(upper_bone, _unrotated(fk_upper), parent_matrix)
    lower_pose = to_pose(lower_bone, _unrotated(fk_lower), upper_pose)
    head = upper_pose.translation
    joint = lower_pose.translation
    tail = lower_pose @ Vector((0.0, lower_bone.length, 0.0))
    upper, lower = joint - head, tail - joint
    upper_length, lower_length = upper.length, lower.length
    upper_matrix, lower_matrix = upper_pose.to_3x3(), lower_pose.to_3x3()
    upper_direction = upper / upper_length if upper_length > 0.0 else upper_matrix.col[1].normalized()
    lower_direction = lower / lower_length if lower_length > 0.0 else lower_matrix.col[1].normalized()
    normal = cast(Vector, upper_direction.cross(lower_direction))  # 3D vectors: a Vector, not a float
    if normal.length <= PARALLEL:
        # Straight chain: Blender's usual hinge axis, the upper bone's local X.
        normal = upper_matrix.col[0].normalized()
    normal = _orthonormal(normal, upper_direction)
    reach = tail - head
    forward = (
        reach.normalized() if reach.length > PARALLEL * (upper_length + lower_length) else upper_direction
    )
    # The joint sits on this side of the root-end line (n = side x forward for a bent chain).
    pole_side = forward.cross(normal).normalized()
    return ChainShape(
        head, joint, tail, upper_matrix, lower_matrix, normal, pole_side, upper_length, lower_length
    )


def turned_basis(
    bone, fk_basis: Matrix, head: Vector, orientation: Matrix, parent_matrix: Matrix | None
) -> Matrix:
    """``fk_basis`` with the rotation channel that gives the bone ``orientation`` (3x3, armature space)."""
    wanted = Matrix.Translation(head) @ orientation.to_4x4()
    return _with_rotation(fk_basis, to_basis(bone, wanted, parent_matrix).to_quaternion())


def blend(fk: Matrix, solved: Matrix, influence: float) -> Matrix:
    """matrix_basis blended from FK (0) to the solve (1): rotations slerp, the rest is FK's."""
    if influence >= 1.0:
        return solved
    if influence <= 0.0:
        return fk.copy()
    rotation = fk.to_quaternion().slerp(solved.to_quaternion(), influence)
    return _with_rotation(fk, rotation)


def current_pole_side(
    obj, upper_name: str, lower_name: str, matrices: tuple[Matrix, Matrix] | None = None
) -> tuple[Vector, Vector, Vector, Vector]:
    """(root, joint, end, side) of the chain's current pose, armature space.

    ``side`` is the unit direction from the root-end line to the joint; for a straight pose it is
    the rest pole side carried by the upper bone's current rotation, so a pole placed along it keeps
    the bones' roll. ``matrices`` are (upper, lower) pose matrices to use instead of the current
    pose (see :func:`pose_matrices`).
    """
    upper_bone, lower_bone = obj.data.bones[upper_name], obj.data.bones[lower_name]
    if matrices is None:
        matrices = (obj.pose.bones[upper_name].matrix, obj.pose.bones[lower_name].matrix)
    upper_matrix, lower_matrix = matrices
    root, joint = upper_matrix.translation.copy(), lower_matrix.translation.copy()
    end = joint + lower_matrix.col[1].xyz * lower_bone.length  # Blender's pose tail
    forward = end - root
    offset = joint - root
    if forward.length > 0.0:
        offset -= offset.dot(forward) / forward.length_squared * forward
    rest = chain_rest(upper_bone, lower_bone)
    if offset.length > PARALLEL * (rest.upper_length + rest.lower_length):
        return root, joint, end, offset.normalized()
    turn = upper_matrix.to_3x3().normalized() @ upper_bone.matrix_local.to_3x3().inverted()
    return root, joint, end, (turn @ rest.pole_side).normalized()


def pose_matrices(obj, upper_name: str, lower_name: str, upper_basis: Matrix, lower_basis: Matrix):
    """Armature-space pose matrices (upper, lower) the chain would have with these ``matrix_basis``
    values, the upper bone's parent staying where it is (every inherit flag honoured)."""
    upper_bone, lower_bone = obj.data.bones[upper_name], obj.data.bones[lower_name]
    parent = upper_bone.parent
    parent_matrix = obj.pose.bones[parent.name].matrix if parent is not None else None
    upper_matrix = to_pose(upper_bone, upper_basis, parent_matrix)
    return upper_matrix, to_pose(lower_bone, lower_basis, upper_matrix)

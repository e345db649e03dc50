# SPDX-License-Identifier: GPL-3.0-or-later
"""pose.py's rules for many chains at once, with numpy: solved positions -> rotation channels.

Rows are chains. Matrices are row-major (N, 4, 4) or (N, 3, 3) float64, armature space. Only the
case the driver batches is covered (batch.py checks it): bones with Blender's default inherit
settings (inherit rotation, full inherit scale, Local Location), unit FK scale, and a parent pose
with uniform scale, so that ``pose = parent pose @ rest offset @ basis`` holds exactly and every
rotation is a plain rotation. Each function mirrors the pose.py function of the same name.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .pose import PARALLEL


def _norms(vectors: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("ij,ij->i", vectors, vectors))


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = _norms(vectors)
    return vectors / np.where(norms > 0.0, norms, 1.0)[:, None]


def _orthonormal(vectors: np.ndarray, axes: np.ndarray) -> np.ndarray:
    """Each vector with its axis component removed, normalised."""
    return _unit(vectors - np.einsum("ij,ij->i", vectors, axes)[:, None] * axes)


def _translation(points: np.ndarray) -> np.ndarray:
    matrices = np.tile(np.eye(4), (len(points), 1, 1))
    matrices[:, :3, 3] = points
    return matrices


class ChainShapes(NamedTuple):
    """pose.ChainShape for each row; ``frame`` is the upper bone's parent pose @ rest offset, 3x3."""

    head: np.ndarray
    joint: np.ndarray
    tail: np.ndarray
    upper_matrix: np.ndarray
    lower_matrix: np.ndarray
    normal: np.ndarray
    pole_side: np.ndarray
    upper_length: np.ndarray
    lower_length: np.ndarray
    frame: np.ndarray


def chain_shapes(parent, upper_offset, lower_offset, upper_location, lower_location, lower_bone_length):
    """The chains before any rotation, from their FK location channels (pose.chain_shape).

    parent: (N, 4, 4) the upper bones' parent pose matrices (identity for a root bone).
    upper_offset, lower_offset: (N, 4, 4) rest offsets (parent rest⁻¹ @ rest; the rest itself for a
    root bone). upper_location, lower_location: (N, 3) FK location channels. lower_bone_length: (N,).
    """
    frame = parent @ upper_offset
    upper_pose = frame @ _translation(upper_location)
    lower_pose = upper_pose @ lower_offset @ _translation(lower_location)
    head, joint = upper_pose[:, :3, 3], lower_pose[:, :3, 3]
    tail = joint + lower_pose[:, :3, 1] * lower_bone_length[:, None]
    upper, lower = joint - head, tail - joint
    upper_length, lower_length = _norms(upper), _norms(lower)
    upper_matrix, lower_matrix = upper_pose[:, :3, :3], lower_pose[:, :3, :3]
    upper_direction = np.where((upper_length > 0.0)[:, None], upper, upper_matrix[:, :, 1])
    lower_direction = np.where((lower_length > 0.0)[:, None], lower, lower_matrix[:, :, 1])
    upper_direction, lower_direction = _unit(upper_direction), _unit(lower_direction)
    normal = np.cross(upper_direction, lower_direction)
    straight = _norms(normal) <= PARALLEL
    normal = np.where(straight[:, None], _unit(upper_matrix[:, :, 0]), normal)
    normal = _orthonormal(normal, upper_direction)
    reach = tail - head
    bent = _norms(reach) > PARALLEL * (upper_length + lower_length)
    forward = np.where(bent[:, None], _unit(reach), upper_direction)
    pole_side = _unit(np.cross(forward, normal))
    return ChainShapes(
        head,
        joint,
        tail,
        upper_matrix,
        lower_matrix,
        normal,
        pole_side,
        upper_length,
        lower_length,
        frame[:, :3, :3],
    )


def solved_normals(root, joint, end, pole_hint, twist) -> tuple[np.ndarray, np.ndarray]:
    """(normals, found) as pose.solved_normal (``twist``: (N,) radians); rows where it gives None
    have found False."""
    upper, lower = joint - root, end - joint
    upper_length, lower_length = _norms(upper), _norms(lower)
    scale = upper_length * lower_length
    normal = np.cross(upper, lower)
    bent = (scale > 0.0) & (_norms(normal) > PARALLEL * scale)
    forward = end - root
    folded = _norms(forward) <= PARALLEL * (upper_length + lower_length)
    forward = np.where(folded[:, None], np.array([1.0, 0.0, 0.0]), forward)
    side = np.where(folded[:, None], upper, pole_hint - root)
    turned = (twist != 0.0) & ~folded
    if turned.any():  # the pole side turned about forward (Rodrigues), as pose.solved_normal
        axis, vector, angle = _unit(forward[turned]), side[turned], twist[turned][:, None]
        along = np.einsum("ij,ij->i", axis, vector)[:, None] * axis
        side[turned] = (
            vector * np.cos(angle) + np.cross(axis, vector) * np.sin(angle) + along * (1.0 - np.cos(angle))
        )
    side_normal = np.cross(side, forward)
    side_scale = _norms(side) * _norms(forward)
    sided = (side_scale > 0.0) & (_norms(side_normal) > PARALLEL * side_scale)
    normal = np.where(bent[:, None], normal, side_normal)
    return _unit(normal), bent | sided


def _frames(directions: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """pose._frame per row: columns (direction, normal', direction x normal')."""
    normals = _orthonormal(normals, directions)
    return np.stack((directions, normals, np.cross(directions, normals)), axis=2)


def aim(rest_direction, rest_normal, direction, normal) -> np.ndarray:
    """pose.aim per row: (N, 3, 3) rotations."""
    return _frames(direction, normal) @ np.swapaxes(_frames(rest_direction, rest_normal), 1, 2)


def quaternions(rotations: np.ndarray) -> np.ndarray:
    """(N, 4) unit quaternions (w, x, y, z) of (N, 3, 3) rotations, by the largest-diagonal branch
    (accurate to float64 rounding, unlike the branch-free formula)."""
    m = rotations
    trace = m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    candidates = np.stack(
        (
            np.stack(
                (1.0 + trace, m[:, 2, 1] - m[:, 1, 2], m[:, 0, 2] - m[:, 2, 0], m[:, 1, 0] - m[:, 0, 1]), 1
            ),
            np.stack(
                (
                    m[:, 2, 1] - m[:, 1, 2],
                    1.0 + m[:, 0, 0] - m[:, 1, 1] - m[:, 2, 2],
                    m[:, 0, 1] + m[:, 1, 0],
                    m[:, 0, 2] + m[:, 2, 0],
                ),
                1,
            ),
            np.stack(
                (
                    m[:, 0, 2] - m[:, 2, 0],
                    m[:, 0, 1] + m[:, 1, 0],
                    1.0 - m[:, 0, 0] + m[:, 1, 1] - m[:, 2, 2],
                    m[:, 1, 2] + m[:, 2, 1],
                ),
                1,
            ),
            np.stack(
                (
                    m[:, 1, 0] - m[:, 0, 1],
                    m[:, 0, 2] + m[:, 2, 0],
                    m[:, 1, 2] + m[:, 2, 1],
                    1.0 - m[:, 0, 0] - m[:, 1, 1] + m[:, 2, 2],
                ),
                1,
            ),
        ),
        axis=1,
    )
    branch = np.argmax(np.stack((trace, m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]), axis=1), axis=1)
    chosen = candidates[np.arange(len(m)), branch]
    return _unit(chosen * np.where(chosen[:, :1] < 0.0, -1.0, 1.0))


def rotation_matrices(quaternions: np.ndarray) -> np.ndarray:
    """(N, 3, 3) rotations of (N, 4) unit quaternions (w, x, y, z)."""
    w, x, y, z = quaternions.T
    return np.stack(
        (
            np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)), 1),
            np.stack((2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)), 1),
            np.stack((2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)), 1),
        ),
        axis=1,
    )


def solve_rotations(shape: ChainShapes, lower_offset, joint, end, normal) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) rotation channels as (N, 4) quaternions that put each chain on (head, joint,
    end) with bend-plane ``normal`` (pose.solve_bases; both bones of non-zero length)."""
    root = shape.head
    upper_turn = aim(_unit(shape.joint - root), shape.normal, _unit(joint - root), normal)
    lower_turn = aim(_unit(shape.tail - shape.joint), shape.normal, _unit(end - joint), normal)
    # basis = (parent pose @ rest offset)⁻¹ @ wanted pose; with unit FK scale only its rotation counts.
    upper_rotation = _inverse(shape.frame) @ upper_turn @ shape.upper_matrix
    upper_quaternion = quaternions(_normalised_columns(upper_rotation))
    lower_frame = shape.frame @ rotation_matrices(upper_quaternion) @ lower_offset[:, :3, :3]
    lower_rotation = _inverse(lower_frame) @ lower_turn @ shape.lower_matrix
    return upper_quaternion, quaternions(_normalised_columns(lower_rotation))


def _inverse(frames: np.ndarray) -> np.ndarray:
    """Inverses of rotations times a uniform scale: transposed, divided by the scale squared."""
    return np.swapaxes(frames, 1, 2) / np.einsum("ni,ni->n", frames[:, :, 0], frames[:, :, 0])[:, None, None]


def _normalised_columns(matrices: np.ndarray) -> np.ndarray:
    # As mathutils' to_quaternion: a parent's uniform scale divides out.
    return matrices / np.sqrt(np.einsum("nij,nij->nj", matrices, matrices))[:, None, :]

# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain's bone rolls (docs/contract.md, "Bone orientation"): each solved bone turned about its
own axis by an angle the chain keeps in the network's channels, so that Add and Snap IK to FK leave
an FK pose whose knee bends off the rest bend plane where it was.

The rolls are the rotation channels of the solved bones ``MCH-IK-<upper>`` (axis-angle about the
upper segment) and ``MCH-IK-<lower>`` (the Damped Track's start, a quaternion): plain channels, so
keys on them play in any Blender. Functions take the chain's network names (``network.build.parts``).
"""

from __future__ import annotations

import math

from mathutils import Matrix, Quaternion, Vector


def _frames(obj, names) -> tuple[Vector, Matrix, Matrix]:
    """What the rolls turn about, from the built network's rest: the upper segment (root -> joint)
    in the solved upper bone's own frame; the solved lower bone's rest orientation in the aim frame
    at rest (where the upper segment is +Y and the bend normal -X); and the turn about that normal
    that bends the lower bone a quarter turn from the upper segment: the Damped Track's start, from
    which it never turns half a turn (where its axis is undefined)."""
    bones = obj.data.bones
    upper = bones[names.upper].matrix_local.to_3x3()
    lower = bones[names.lower].matrix_local.to_3x3()
    direction = lower @ Vector((0.0, 1.0, 0.0))
    bend = Matrix.Rotation(-0.5 * math.pi - math.atan2(direction.z, direction.y), 3, "X")
    return upper.transposed() @ Vector((0.0, 1.0, 0.0)), lower, bend


def _start(rest: Matrix, bend: Matrix, upper: float) -> Matrix:
    """The solved lower bone's rotation before its roll: its rest hangs off the rolled upper bone,
    so undo that roll (about the upper segment, +Y of the aim frame), then bend a quarter turn."""
    return rest.transposed() @ Matrix.Rotation(-upper, 3, "Y") @ bend @ rest


def set_rolls(obj, names, upper: float, lower: float, near: Quaternion | None = None) -> None:
    """Turn the chain's solved bones about their own axes: the upper bone by ``upper`` radians about
    its segment (root -> joint), the lower bone by ``lower`` about its own Y axis, right-handed.
    Joints and end do not move; 0 and 0 is the rest bend plane mapped onto the solved one. The
    lower bone's quaternion takes the sign nearest ``near`` (default: the channel's value), so keys
    on it interpolate the short way."""
    axis, rest, bend = _frames(obj, names)
    bones = obj.pose.bones
    bones[names.upper].rotation_axis_angle = (upper, axis.x, axis.y, axis.z)
    own = (_start(rest, bend, upper) @ Matrix.Rotation(lower, 3, "Y")).to_quaternion()
    reference = bones[names.lower].rotation_quaternion if near is None else near
    bones[names.lower].rotation_quaternion = (
        own if own.dot(reference) >= 0.0 else Quaternion([-c for c in own])
    )


def _upper_angle(obj, names, axis: Vector) -> float:
    """The upper roll as its channel holds it (not wrapped), signed about ``axis``."""
    angle, *channel_axis = obj.pose.bones[names.upper].rotation_axis_angle
    return angle if Vector(channel_axis).dot(axis) >= 0.0 else -angle


def current(obj, names) -> tuple[float, float]:
    """The chain's (upper, lower) rolls in radians (:func:`set_rolls`); (0, 0) before it has a
    network of this shape, or when a channel holds no number."""
    bones = obj.pose.bones
    if any(bones.get(name) is None for name in (names.hinge, names.upper, names.lower)):
        return 0.0, 0.0
    axis, rest, bend = _frames(obj, names)
    upper = _upper_angle(obj, names, axis)
    own = (
        _start(rest, bend, upper).transposed() @ bones[names.lower].rotation_quaternion.to_matrix()
    ).to_quaternion()
    lower = 2.0 * math.atan2(own.y, own.w)
    if not (math.isfinite(upper) and math.isfinite(lower)):
        return 0.0, 0.0
    return math.remainder(upper, 2.0 * math.pi), math.remainder(lower, 2.0 * math.pi)


def _turn_about(solved: Matrix, wanted: Matrix, axis: Vector) -> float:
    """The angle about ``axis`` (in ``solved``'s own frame) that turns pose matrix ``solved`` onto
    ``wanted`` (3x3 or 4x4, armature space; scale and a mirror cancel in the relative turn)."""
    own = (solved.to_3x3().inverted() @ wanted.to_3x3()).normalized().to_quaternion()
    return 2.0 * math.atan2(Vector(own[1:]).dot(axis.normalized()), own.w)


def match(context, obj, names, upper_pose: Matrix, lower_pose: Matrix) -> tuple[float, float]:
    """Set the rolls so that the solved bones take the orientations of ``upper_pose`` and
    ``lower_pose`` (armature-space pose matrices of the chain's bones, the FK pose) about their own
    axes, for the chain's current target and pole; returns them (radians). Updates the view layer.

    The rolls are the ones nearest the channels' values before (the frame's keyed rolls), so that
    keys Snap makes on successive frames interpolate the short way, never a turn around."""
    axis, _, _ = _frames(obj, names)
    before = _upper_angle(obj, names, axis), obj.pose.bones[names.lower].rotation_quaternion.copy()
    set_rolls(obj, names, 0.0, 0.0)
    context.view_layer.update()
    solved = obj.evaluated_get(context.evaluated_depsgraph_get()).pose.bones
    upper = _turn_about(solved[names.upper].matrix, upper_pose, axis)
    reference = before[0] if math.isfinite(before[0]) else 0.0
    upper = reference + math.remainder(upper - reference, 2.0 * math.pi)
    lower = _turn_about(solved[names.lower].matrix, lower_pose, Vector((0.0, 1.0, 0.0)))
    set_rolls(obj, names, upper, lower, near=before[1])
    context.view_layer.update()
    return upper, lower

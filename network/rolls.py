# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain's bone rolls (docs/contract.md, D11): each solved bone turned about its own axis by an
angle the chain keeps, so that Add and Snap IK to FK leave an FK pose whose knee bends off the rest
bend plane where it was.

The rolls are custom properties of the lower chain bone (``IK Upper Roll``, ``IK Lower Roll``:
:data:`.layout.PROPERTIES`), beside the settings, where the animation editors list their keys; two
drivers read them. They are stored times the chain's side (:func:`.layout.built_side`: -1 on the
right of a mirrored rig), so that Blender's tools, which copy custom properties unchanged, mirror
them; the functions here take and give the solve's angles. The lower bone's own turn about its axis
(its rotation channel's) is added to the lower roll by the network itself.

The upper roll turns the hinge bone about its Y (the upper segment at rest) before its bend (Euler
YXZ); the lower roll turns the solved lower bone about its own Y before its Damped Track (Euler
YXZ, the track's start in the other channels). Functions take the chain's network names
(:func:`.naming.parts`).

Networks of the earlier layout kept the rolls in the solved bones' own channels (an axis-angle and a
quaternion that also held the track's start, undoing the upper roll): :func:`legacy_current`
reads them, and the build turns their keys into keys on the properties
(:func:`.legacy.key_rolls`).
"""

from __future__ import annotations

import math

from mathutils import Euler, Matrix, Vector

from .layout import PROPERTIES, ROLLS, bone_path, built_side, number, set_number
from .naming import chain_lower


def _frames(obj, names) -> tuple[Vector, Matrix, Matrix]:
    """What the rolls turn about, from the built network's rest: the upper segment (root -> joint)
    in the solved upper bone's own frame; the solved lower bone's rest orientation in the aim frame
    at rest (where the upper segment is +Y and the bend normal -X); and the turn about that normal
    that bends the lower bone a quarter turn from the upper segment: the Damped Track's start, from
    which it turns at most a quarter turn plus the upper roll."""
    bones = obj.data.bones
    upper = bones[names.upper].matrix_local.to_3x3()
    lower = bones[names.lower].matrix_local.to_3x3()
    direction = lower @ Vector((0.0, 1.0, 0.0))
    bend = Matrix.Rotation(-0.5 * math.pi - math.atan2(direction.z, direction.y), 3, "X")
    return upper.transposed() @ Vector((0.0, 1.0, 0.0)), lower, bend


def start(obj, names) -> Euler:
    """The solved lower bone's own rotation at roll 0 (Euler YXZ, so that its Y channel plus the
    lower roll is the roll): its rest bent a quarter turn from the upper segment about the bend
    normal. Its parent carries the upper roll."""
    _, rest, bend = _frames(obj, names)
    return (rest.transposed() @ bend @ rest).to_euler("YXZ")


def set_rolls(obj, names, upper: float, lower: float) -> None:
    """Set the chain's rolls (radians, right-handed): the upper bone turned by ``upper`` about its
    segment (root -> joint), the lower bone by ``lower`` about its own Y axis. Joints and end do not
    move; 0 and 0 is the rest bend plane mapped onto the solved one. Tags ``obj`` (a custom property
    written from Python tags nothing, and the drivers would keep the old values)."""
    holder = obj.pose.bones[chain_lower(names)]
    side = built_side(obj, names)
    for (name, _), value in zip(ROLLS, (upper, lower), strict=True):
        set_number(holder, PROPERTIES[name], side * float(value))
    obj.update_tag()


def current(obj, names) -> tuple[float, float]:
    """The chain's (upper, lower) rolls in radians (:func:`set_rolls`), wrapped to [-pi, pi]; (0, 0)
    when the chain has none yet or a roll is not a number. A network of the earlier layout gives
    its channels' rolls (:func:`legacy_current`)."""
    holder = obj.pose.bones.get(chain_lower(names))
    keys = [PROPERTIES[name] for name, _ in ROLLS]
    if holder is None or any(key not in holder for key in keys):
        return legacy_current(obj, names)
    side = built_side(obj, names)
    upper, lower = (side * number(holder[key]) for key in keys)
    if not (math.isfinite(upper) and math.isfinite(lower)):
        return 0.0, 0.0
    return math.remainder(upper, 2.0 * math.pi), math.remainder(lower, 2.0 * math.pi)


def _turn_about(solved: Matrix, wanted: Matrix, axis: Vector) -> float:
    """The angle about ``axis`` (in ``solved``'s own frame) that turns pose matrix ``solved`` onto
    ``wanted`` (3x3 or 4x4, armature space; scale and a mirror cancel in the relative turn)."""
    own = (solved.to_3x3().inverted() @ wanted.to_3x3()).normalized().to_quaternion()
    return 2.0 * math.atan2(Vector(own[1:]).dot(axis.normalized()), own.w)


def _near(angle: float, reference: float) -> float:
    """``angle`` plus whole turns, nearest ``reference``."""
    reference = reference if math.isfinite(reference) else 0.0
    return reference + math.remainder(angle - reference, 2.0 * math.pi)


def match(context, obj, names, upper_pose: Matrix, lower_pose: Matrix) -> tuple[float, float]:
    """Set the rolls so that the solved bones take the orientations of ``upper_pose`` and
    ``lower_pose`` (armature-space pose matrices of the chain's bones, the FK pose) about their own
    axes, for the chain's current target and pole; returns them (radians). Updates the view layer
    (twice more: the lower roll is measured with the upper one in place, since the solved lower
    bone hangs off the rolled upper one).

    The rolls are the ones nearest the values before (the frame's keyed rolls), so that keys Snap
    makes on successive frames interpolate the short way, never a turn around."""
    axis, _, _ = _frames(obj, names)
    before = current(obj, names)
    set_rolls(obj, names, 0.0, 0.0)
    context.view_layer.update()
    solved = obj.evaluated_get(context.evaluated_depsgraph_get()).pose.bones
    upper = _near(_turn_about(solved[names.upper].matrix, upper_pose, axis), before[0])
    set_rolls(obj, names, upper, 0.0)
    context.view_layer.update()
    solved = obj.evaluated_get(context.evaluated_depsgraph_get()).pose.bones
    lower = _near(_turn_about(solved[names.lower].matrix, lower_pose, Vector((0.0, 1.0, 0.0))), before[1])
    set_rolls(obj, names, upper, lower)
    context.view_layer.update()
    return upper, lower


# --- Networks of the earlier layout ----------------------------------------------------------------------

LEGACY_UPPER = "rotation_axis_angle"
LEGACY_LOWER = "rotation_quaternion"


def legacy_current(obj, names) -> tuple[float, float]:
    """The rolls a network of the earlier layout holds in its solved bones' channels (the upper bone's
    axis-angle about its segment; the lower bone's quaternion, its start undoing the upper roll,
    then its roll about Y); (0, 0) when these bones are missing or a channel holds no number."""
    bones = obj.pose.bones
    if any(bones.get(name) is None for name in (names.hinge, names.upper, names.lower)):
        return 0.0, 0.0
    axis, rest, bend = _frames(obj, names)
    angle, *channel_axis = bones[names.upper].rotation_axis_angle
    upper = angle if Vector(channel_axis).dot(axis) >= 0.0 else -angle
    legacy_start = rest.transposed() @ Matrix.Rotation(-upper, 3, "Y") @ bend @ rest
    own = (legacy_start.transposed() @ bones[names.lower].rotation_quaternion.to_matrix()).to_quaternion()
    lower = 2.0 * math.atan2(own.y, own.w)
    if not (math.isfinite(upper) and math.isfinite(lower)):
        return 0.0, 0.0
    return math.remainder(upper, 2.0 * math.pi), math.remainder(lower, 2.0 * math.pi)


def legacy_paths(names) -> tuple[str, str]:
    """The data paths of the channels that held the rolls in the earlier layout (:func:`legacy_current`)."""
    return f"{bone_path(names.upper)}.{LEGACY_UPPER}", f"{bone_path(names.lower)}.{LEGACY_LOWER}"

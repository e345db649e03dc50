# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a chain is now, from its evaluated bones and its sources alone, no status: its joint and
end, the :class:`Glance` the overlay and the chain list draw on every redraw, and the world
distance the readouts measure (in float64)."""

from __future__ import annotations

import math
from typing import NamedTuple

from mathutils import Vector

from .bones import ChainError
from .sources import source_point
from .status import SHEAR_TOLERANCE

ORIGIN = (0.0, 0.0, 0.0)


FLOAT32_MAX = 3.4028234663852886e38


def lower_pose_bone(chain):
    obj = chain.id_data
    if obj.pose is None:
        return None
    return obj.pose.bones.get(chain.lower_bone)


def joint(chain) -> tuple[float, float, float]:
    """World position of the lower bone's head (the joint), or the origin when it is missing."""
    bone = lower_pose_bone(chain)
    return tuple(chain.id_data.matrix_world @ bone.head) if bone else ORIGIN


def end(chain) -> tuple[float, float, float]:
    """World position of the lower bone's tail (the chain's end), or the origin when it is missing."""
    bone = lower_pose_bone(chain)
    return tuple(chain.id_data.matrix_world @ bone.tail) if bone else ORIGIN


class Glance(NamedTuple):
    """Where a chain is now, world space, from its evaluated bones and its sources alone (no
    status): root, joint and end, the target and pole (None without one), and whether the end is
    on the target within the readouts' tolerance."""

    root: Vector
    joint: Vector
    end: Vector
    target: Vector
    pole: Vector | None
    on_target: bool


def on_target(end_point: Vector, point: Vector, root: Vector, joint_point: Vector) -> bool:
    """Whether ``end_point`` is on ``point`` within SHEAR_TOLERANCE x the chain's length (world)."""
    length = (joint_point - root).length + (end_point - joint_point).length
    return distance(end_point, point) <= SHEAR_TOLERANCE * length


def glance(chain, obj=None) -> Glance | None:
    """The chain's :class:`Glance` in ``obj`` (its armature, or an evaluated copy of it), or None
    when there is nothing to show: the armature in its Rest Position, a bone missing, no target, or
    a target or pole that cannot be read (the status says why). Disabled or not. Costs no status:
    the overlay and the chain list draw from it on every redraw."""
    obj = obj or chain.id_data
    if obj.pose is None or obj.data.pose_position == "REST":
        return None
    upper, lower = obj.pose.bones.get(chain.upper_bone), obj.pose.bones.get(chain.lower_bone)
    try:
        target = source_point(chain, "target")
        pole = source_point(chain, "pole")
    except ChainError:
        return None
    if upper is None or lower is None or target is None:
        return None
    world = obj.matrix_world
    root, joint_point, end_point = world @ upper.head, world @ lower.head, world @ lower.tail
    return Glance(root, joint_point, end_point, target, pole, on_target(end_point, target, root, joint_point))


def distance(end_point, point: Vector) -> float:
    # In float64: mathutils is float32 and a far target's squared distance would overflow.
    distance = math.dist(end_point, point.to_tuple())
    return min(distance, FLOAT32_MAX) if math.isfinite(distance) else 0.0  # the property is float32

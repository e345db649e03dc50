# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's live outputs, read from the pose (world space, metres): joint, end, shortfall.

Used as property getters, so nothing is written per update; they read the original data, which
the active depsgraph keeps current.
"""

from __future__ import annotations

import math

from mathutils import Vector

ORIGIN = (0.0, 0.0, 0.0)


def _lower(chain):
    obj = chain.id_data
    if obj.pose is None:
        return None
    return obj.pose.bones.get(chain.lower_bone)


def joint(chain) -> tuple[float, float, float]:
    """World position of the lower bone's head (the joint), or the origin when it is missing."""
    bone = _lower(chain)
    return tuple(chain.id_data.matrix_world @ bone.head) if bone else ORIGIN


def end(chain) -> tuple[float, float, float]:
    """World position of the lower bone's tail (the chain's end), or the origin when it is missing."""
    bone = _lower(chain)
    return tuple(chain.id_data.matrix_world @ bone.tail) if bone else ORIGIN


def target_point(chain) -> Vector | None:
    """World position the chain reaches for: the target's origin, or its bone's head; None if unset."""
    target = chain.target
    if target is None:
        return None
    if chain.target_bone and target.type == "ARMATURE" and target.pose is not None:
        bone = target.pose.bones.get(chain.target_bone)
        if bone is None:
            return None
        return target.matrix_world @ bone.head
    return target.matrix_world.translation


def shortfall(chain) -> float:
    """Distance from the end to the target (0 when reachable or when there is nothing to measure)."""
    if chain.reachable or _lower(chain) is None:
        return 0.0
    point = target_point(chain)
    if point is None:
        return 0.0
    # In float64: mathutils is float32 and a far target's squared distance would overflow.
    distance = math.dist(end(chain), point.to_tuple())
    return distance if math.isfinite(distance) else 0.0

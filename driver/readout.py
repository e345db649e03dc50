# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's live outputs, read from the pose (world space, metres): joint, end, shortfall and
what causes it.

Used as property getters, so nothing is written per update; they read the original data, which
the active depsgraph keeps current.
"""

from __future__ import annotations

import math

from mathutils import Vector

from .status import SHEAR_TOLERANCE, STATE_CODES

ORIGIN = (0.0, 0.0, 0.0)
FLOAT32_MAX = 3.4028234663852886e38

# chain.shortfall_cause items, in the order they are checked (the first that applies).
CAUSES = (
    ("NONE", "None", "The end is on the target"),
    ("NOT_SOLVED", "Not solved", "The chain did not solve (see its status)"),
    ("REST", "Rest Position", "The armature shows its Rest Position"),
    (
        "INFLUENCE",
        "Influence",
        "The chain is disabled or its influence is below 1: the FK pose shows through",
    ),
    ("WAITING", "One update late", "The chain reads another chain's pose one update late"),
    ("CONSTRAINTS", "Constraints", "Other constraints or uneven scale move the chain after the solve"),
    ("TOO_CLOSE", "Too close", "The target is nearer the root than the folded chain"),
    ("TOO_FAR", "Out of reach", "The target is further than the chain reaches"),
    ("SOFTNESS", "Softness", "Softness eases the end short of the target"),
)
_CAUSE_CODES = {identifier: code for code, (identifier, _, _) in enumerate(CAUSES)}


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
    """World position the chain reaches for: the target's origin, or the point of its bone that
    Head/Tail picks; None if unset."""
    target = chain.target
    if target is None:
        return None
    if chain.target_bone and target.type == "ARMATURE" and target.pose is not None:
        bone = target.pose.bones.get(chain.target_bone)
        if bone is None:
            return None
        return target.matrix_world @ bone.head.lerp(bone.tail, chain.target_head_tail)
    return target.matrix_world.translation


def shortfall(chain) -> float:
    """World distance from the evaluated end to the target, whatever keeps them apart (0 when there
    is nothing to measure)."""
    point = target_point(chain)
    if _lower(chain) is None or point is None:
        return 0.0
    return _distance(end(chain), point)


def _distance(end_point, point: Vector) -> float:
    # In float64: mathutils is float32 and a far target's squared distance would overflow.
    distance = math.dist(end_point, point.to_tuple())
    return min(distance, FLOAT32_MAX) if math.isfinite(distance) else 0.0  # the property is float32


def shortfall_cause(chain) -> int:
    """The code of the first of CAUSES that applies to the chain's shortfall ("NONE" when the end
    is on the target within float32 noise)."""
    bone = _lower(chain)
    point = target_point(chain)
    if bone is None or chain.state_code == STATE_CODES["ERROR"] or point is None:
        return _CAUSE_CODES["NOT_SOLVED"]
    upper = chain.id_data.pose.bones.get(chain.upper_bone)
    world = chain.id_data.matrix_world
    head, joint_, tail = (world @ p for p in (upper.head if upper else bone.head, bone.head, bone.tail))
    if _distance(tail, point) <= SHEAR_TOLERANCE * ((joint_ - head).length + (tail - joint_).length):
        return _CAUSE_CODES["NONE"]
    state = chain.state
    if state == "REST":
        return _CAUSE_CODES["REST"]
    if not chain.enabled or chain.influence < 1.0:
        return _CAUSE_CODES["INFLUENCE"]
    if state in ("WAITING", "OFF_TARGET"):
        return _CAUSE_CODES["WAITING" if state == "WAITING" else "CONSTRAINTS"]
    if not chain.reachable:
        return _CAUSE_CODES["TOO_CLOSE" if chain.too_close else "TOO_FAR"]
    return _CAUSE_CODES["SOFTNESS" if chain.softness > 0.0 else "CONSTRAINTS"]

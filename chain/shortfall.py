# SPDX-License-Identifier: GPL-3.0-or-later
"""What keeps a chain's end off its target: the shortfall (world units), its cause (the Shortfall
Cause property's items), and the :class:`Summary` the panel draws from one status read."""

from __future__ import annotations

from typing import NamedTuple

from . import reading, settings
from .glance import distance, end, lower_pose_bone, on_target
from .sources import target_point

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
    (
        "CONSTRAINTS",
        "Constraints",
        "Other constraints, pose scale or uneven scale move the chain off the solve",
    ),
    ("TOO_CLOSE", "Too close", "The target is nearer the root than the folded chain"),
    ("TOO_FAR", "Out of reach", "The target is further than the chain reaches"),
    ("SOFTNESS", "Softness", "Softness eases the end short of the target"),
)
_CAUSE_CODES = {identifier: code for code, (identifier, _, _) in enumerate(CAUSES)}


def shortfall(chain) -> float:
    """World distance from the evaluated end to the target, whatever keeps them apart (0 when there
    is nothing to measure)."""
    point = target_point(chain)
    if lower_pose_bone(chain) is None or point is None:
        return 0.0
    return distance(end(chain), point)


def shortfall_cause(chain) -> int:
    """The code of :func:`cause` (the Shortfall Cause property's getter)."""
    return _CAUSE_CODES[cause(chain, reading.read(chain))]


def cause(chain, chain_reading: reading.Reading) -> str:
    """The first of CAUSES that applies to the chain's shortfall, given its :func:`reading.read`
    ("NONE" when the end is on the target within float32 noise). A chain off its solve is
    "CONSTRAINTS" even with its end on the target: its pose is not the one its bones' channels ask
    for (own scale ignored)."""
    bone = lower_pose_bone(chain)
    point = target_point(chain)
    if bone is None or chain_reading.status.state == "ERROR" or point is None:
        return "NOT_SOLVED"
    if chain_reading.status.state == "OFF_TARGET":
        return "CONSTRAINTS"
    upper = chain.id_data.pose.bones.get(chain.upper_bone)
    world = chain.id_data.matrix_world
    head, joint_, tail = (world @ p for p in (upper.head if upper else bone.head, bone.head, bone.tail))
    if on_target(tail, point, head, joint_):
        return "NONE"
    state = chain_reading.status.state
    if state == "REST":
        return "REST"
    values = settings.values(chain)
    if not values["enabled"] > 0.0 or values["influence"] < 1.0:
        return "INFLUENCE"
    if not chain_reading.reachable:
        return "TOO_CLOSE" if chain_reading.too_close else "TOO_FAR"
    return "SOFTNESS" if values["softness"] > 0.0 else "CONSTRAINTS"


class Summary(NamedTuple):
    """Everything the panel shows of a chain, from one :func:`reading.read`: its Reading, the shortfall
    (world units) and its cause (a CAUSES identifier)."""

    reading: reading.Reading
    shortfall: float
    cause: str


def summary(chain) -> Summary:
    """The chain's :class:`Summary`: the status worked out once for a whole panel draw (each of the
    chain's readout properties works it out again when read)."""
    now = reading.read(chain)
    return Summary(now, shortfall(chain), cause(chain, now))

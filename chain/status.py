# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's state (data: what the panel, overlay, operators and command line branch on) and the
sentence the user reads with it.

Worked out by the readouts (reading.py) when read. No code tests a status sentence: rewording or
translating one changes no behaviour.
"""

from __future__ import annotations

from typing import NamedTuple

# A pole closer to the root-target line than this share of the chain's length makes the bend
# plane unstable (a small move swings the knee): the chain says so, though it still solves.
POLE_NEAR_LINE = 1e-3
# An end further than this share of the chain's length from the solve is a miss: float32 noise
# reaches 2e-5 on a folded chain a few metres from the origin; shears from uneven scale are cm.
SHEAR_TOLERANCE = 1e-4

# chain.state items (identifier, name, description). Every state but ERROR means the chain solved
# and its pose was written.
STATES = (
    ("OK", "Solved", "The chain solved cleanly"),
    ("NOTE", "Solved, with a note", "The chain solved; the status says something worth knowing"),
    ("WARNING", "Solved, with a warning", "The chain solved, but its bend is unstable or a fallback"),
    ("OFF_TARGET", "Off target", "The chain solved, but something after it moves its end off the solve"),
    ("REST", "Rest Position", "The armature shows its Rest Position: the chain is not applied"),
    ("ERROR", "Not solved", "The chain did not solve: its pose was left alone"),
)
STATE_CODES = {identifier: code for code, (identifier, _, _) in enumerate(STATES)}


class Status(NamedTuple):
    """What a solve says: ``state`` (an identifier of STATES) and the sentence for the user."""

    state: str
    text: str = ""


CLEAN = Status("OK")
NO_POLE = Status("NOTE", "No pole: the joint bends as in the rest pose")
POLE_ON_LINE = Status("WARNING", "Pole is on the root-target line: the bend uses the fallback axis")
POLE_NEAR = Status("WARNING", "Pole is nearly on the root-target line: the bend is unstable")
REST = "Armature '{}' is in Rest Position: the chain is not applied"


def applied(state: str) -> bool:
    """Whether a chain in ``state`` moves the bones: it solved and the armature is posed."""
    return state not in ("ERROR", "REST")


def error(text: str) -> Status:
    return Status("ERROR", text)

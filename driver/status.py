# SPDX-License-Identifier: GPL-3.0-or-later
"""What a chain's status says, and writing a chain's outputs (status, reachable, too close).

Shared by the exact per-chain path (evaluate.py) and the batched one (batch.py).
"""

from __future__ import annotations

# Blender stores bones and matrices in float32 (contract D2).
SOLVER_TOLERANCE = 1e-6
# A pole closer to the root-target line than this share of the chain's length makes the bend
# plane unstable (a small move swings the knee): the chain says so, though it still solves.
POLE_NEAR_LINE = 1e-3

# Statuses of chains that still solved; any other status means the chain did not solve.
NO_POLE = "No pole: the joint bends as in the rest pose"
POLE_ON_LINE = "Pole is on the root-target line: the bend uses the fallback axis"
POLE_NEAR = "Pole is nearly on the root-target line: the bend is unstable"
WAITS = "Waits on"
SHEARED = "Uneven pose scale shears"
# An end further than this share of the chain's length from the solve is a miss: float32 noise
# reaches 2e-5 on a folded chain a few metres from the origin; shears from uneven scale are cm.
SHEAR_TOLERANCE = 1e-4
WARNING_PREFIXES = ("No pole", "Pole is on", "Pole is nearly", "Constraints on", WAITS, SHEARED)
# Statuses of chains that solved but whose end misses the target: the panel shows the miss.
OFF_TARGET_PREFIXES = ("Constraints on", SHEARED)


def solved(status: str) -> bool:
    """Whether a chain with this ``status`` solved: no status, or only a warning."""
    return not status or status.startswith(WARNING_PREFIXES)


def set_outputs(chain, status: str, reachable: bool, too_close: bool = False) -> None:
    # Write only what changed: every write tags the armature for another evaluation.
    if chain.reachable != reachable:
        chain.reachable = reachable
    if chain.too_close != too_close:
        chain.too_close = too_close
    if chain.status != status:
        chain.status = status

# SPDX-License-Identifier: GPL-3.0-or-later
"""Analytic two-bone IK solver, free of Blender (docs/contract.md, D1-D10).

``solve_two_bone_ik`` is pure Python. ``solve_two_bone_ik_batch`` solves many chains at once
with numpy, which is imported only when the batch form is first used, so ``import solver``
needs neither numpy nor bpy nor mathutils.

>>> from solver import solve_two_bone_ik
>>> result = solve_two_bone_ik((0, 0, 0), (6, 0, 0), (0, 1, 0), 5.0, 5.0)
>>> result.joint, result.end, result.reachable
((3.0, 4.0, 0.0), (6.0, 0.0, 0.0), True)
"""

from ._inputs import TINY as MIN_REACH  # the least upper_length + lower_length the solver takes (D4)
from .scalar import TwoBoneIKResult, solve_two_bone_ik

__all__ = [
    "MIN_REACH",
    "TwoBoneIKBatchResult",
    "TwoBoneIKResult",
    "solve_two_bone_ik",
    "solve_two_bone_ik_batch",
]

_BATCH_NAMES = ("TwoBoneIKBatchResult", "solve_two_bone_ik_batch")


def __getattr__(name):
    # PEP 562: load the numpy-based batch module on first use only.
    if name in _BATCH_NAMES:
        from . import batch

        return getattr(batch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

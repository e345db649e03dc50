# SPDX-License-Identifier: GPL-3.0-or-later
"""Analytic two-bone IK solver: pure Python, no Blender (SPEC "Function solveTwoBoneIK").

>>> from solver import solve_two_bone_ik
>>> result = solve_two_bone_ik((0, 0, 0), (1.2, 0, 0.5), (1.2, 0.5, 0.5), 1.0, 1.0)
>>> result.reachable, result.end
(True, (1.2, 0.0, 0.5))
"""

from .scalar import TwoBoneIKResult, solve_two_bone_ik

__all__ = ["TwoBoneIKResult", "solve_two_bone_ik"]

# SPDX-License-Identifier: GPL-3.0-or-later
"""The handed solver cases (public IK bug reports restated against the contract), with right values.

Right values are the contract's rules evaluated in exact arithmetic. Positions compare to
position_tolerance x (upper_length + lower_length): 1e-12, or 5e-8 next to full extension or full
fold where the joint is ill-conditioned (contract D8). Default tolerance=1e-9.
"""

import math
from typing import NamedTuple

import pytest

from solver import solve_two_bone_ik

inf = math.inf
nan = math.nan


class Case(NamedTuple):
    id: str
    root: tuple
    target: tuple
    pole_hint: tuple
    upper_length: float
    lower_length: float
    joint: tuple
    end: tuple
    reachable: bool
    position_tolerance: float


# fmt: off
CASES = [
    Case('full-extension-rounding', (0, 0, 0), (1, 0, 0), (0, 1, 0), 0.45, 0.55,
         (0.44999999999999996, 5.241948097746927e-09, 0.0), (1.0, 0.0, 0.0), True, 5e-08),
    Case('full-extension-rounding-2', (0, 0, 0), (0.30000000000000004, 0, 0), (0, 1, 0), 0.1, 0.2,
         (0.1, 0.0, 0.0), (0.30000000000000004, 0.0, 0.0), True, 5e-08),
    Case('pole-crosses-line-positive', (0, 0, 0), (1.2, 0, 0.5), (1.2, 0.5, 0.5), 1, 1,
         (0.6, 0.7599342076785331, 0.25), (1.2, 0.0, 0.5), True, 1e-12),
    Case('pole-crosses-line-on', (0, 0, 0), (1.2, 0, 0.5), (1.2, 0, 0.5), 1, 1,
         (0.6, 0.7599342076785331, 0.25), (1.2, 0.0, 0.5), True, 1e-12),
    Case('pole-crosses-line-negative', (0, 0, 0), (1.2, 0, 0.5), (1.2, -0.5, 0.5), 1, 1,
         (0.6, -0.7599342076785331, 0.25), (1.2, 0.0, 0.5), True, 1e-12),
    Case('fallback-tie', (0, 0, 0), (1.5, 0, 0), (3, 0, 0), 1, 1,
         (0.75, 0.6614378277661477, 0.0), (1.5, 0.0, 0.0), True, 1e-12),
    Case('near-extension-1.9', (0, 0, 0), (1.9, 0, 0), (0, 1, 0), 1, 1,
         (0.95, 0.31224989991992, 0.0), (1.9, 0.0, 0.0), True, 1e-12),
    Case('near-extension-1.99', (0, 0, 0), (1.99, 0, 0), (0, 1, 0), 1, 1,
         (0.995, 0.09987492177719094, 0.0), (1.99, 0.0, 0.0), True, 1e-12),
    Case('near-extension-1.999', (0, 0, 0), (1.999, 0, 0), (0, 1, 0), 1, 1,
         (0.9995, 0.031618823507523014, 0.0), (1.999, 0.0, 0.0), True, 1e-12),
    Case('near-extension-1.9999', (0, 0, 0), (1.9999, 0, 0), (0, 1, 0), 1, 1,
         (0.99995, 0.00999987499921819, 0.0), (1.9999, 0.0, 0.0), True, 1e-12),
    Case('near-extension-2.0', (0, 0, 0), (2.0, 0, 0), (0, 1, 0), 1, 1,
         (1.0, 0.0, 0.0), (2.0, 0.0, 0.0), True, 5e-08),
    Case('near-extension-2.0001', (0, 0, 0), (2.0001, 0, 0), (0, 1, 0), 1, 1,
         (1.0, 0.0, 0.0), (2.0, 0.0, 0.0), False, 1e-12),
    Case('target-at-root-equal', (0, 0, 0), (0, 0, 0), (0, 1, 0), 1, 1,
         (0.0, 1.0, 0.0), (0.0, 0.0, 0.0), True, 5e-08),
    Case('target-at-root-unequal', (0, 0, 0), (0, 0, 0), (0, 1, 0), 1, 0.6,
         (1.0, 2.82842712474619e-30, 0.0), (0.4, 0.0, 0.0), False, 1e-12),
    Case('target-and-pole-at-root', (0, 0, 0), (0, 0, 0), (0, 0, 0), 1, 1,
         (0.0, 1.0, 0.0), (0.0, 0.0, 0.0), True, 5e-08),
    Case('pole-at-root-offset-root', (1, 2, 3), (2.2, 2, 3.5), (1, 2, 3), 1, 1,
         (1.6, 2.759934207678533, 3.25), (2.2, 2.0, 3.5), True, 1e-12),
    Case('zero-upper-too-far', (0, 0, 0), (2, 0, 0), (0, 1, 0), 0, 1,
         (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), False, 1e-12),
    Case('zero-lower-too-close', (0, 0, 0), (0.5, 0, 0), (0, 1, 0), 1, 0,
         (1.0, 0.0, 0.0), (1.0, 0.0, 0.0), False, 1e-12),
    Case('zero-upper-reachable', (0, 0, 0), (0, 1, 0), (1, 0, 0), 0, 1,
         (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), True, 5e-08),
    Case('zero-lower-reachable', (0, 0, 0), (0, 0, 1), (0, 1, 0), 1, 0,
         (0.0, 0.0, 1.0), (0.0, 0.0, 1.0), True, 5e-08),
    Case('far-target-no-stretch', (0, 0, 0), (5, 0, 0), (0, 1, 0), 1, 1,
         (1.0, 0.0, 0.0), (2.0, 0.0, 0.0), False, 1e-12),
    Case('uniform-scale-armature-space', (0, 0, 0), (1.5, 0, 0), (0, 2, 0), 1, 1,
         (0.75, 0.6614378277661477, 0.0), (1.5, 0.0, 0.0), True, 1e-12),
]

ERROR_CASES = [
    ('both-zero', (0, 0, 0), (1, 0, 0), (0, 1, 0), 0, 0),
    ('negative-length', (0, 0, 0), (1, 0, 0), (0, 1, 0), -1, 1),
    ('nan-target', (0, 0, 0), (nan, 0, 0), (0, 1, 0), 1, 1),
    ('inf-pole', (0, 0, 0), (1, 0, 0), (0, inf, 0), 1, 1),
]
# fmt: on


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_handed_case(case):
    """Each handed case gives its exact right joint, end and reachable flag."""
    result = solve_two_bone_ik(case.root, case.target, case.pole_hint, case.upper_length, case.lower_length)
    scale = case.position_tolerance * (case.upper_length + case.lower_length)
    assert result.reachable is case.reachable
    assert max(abs(p - q) for p, q in zip(result.joint, case.joint, strict=True)) <= scale
    assert max(abs(p - q) for p, q in zip(result.end, case.end, strict=True)) <= scale


@pytest.mark.parametrize(
    "case_id, root, target, pole_hint, upper_length, lower_length",
    ERROR_CASES,
    ids=[c[0] for c in ERROR_CASES],
)
def test_handed_error_case(case_id, root, target, pole_hint, upper_length, lower_length):
    """Each handed bad input raises ValueError."""
    with pytest.raises(ValueError):
        solve_two_bone_ik(root, target, pole_hint, upper_length, lower_length)

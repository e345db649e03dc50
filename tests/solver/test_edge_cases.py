# SPDX-License-Identifier: GPL-3.0-or-later
"""The contract's edge cases (docs/contract.md), each with its exact right value; input rules D1, D4.

Most cases use the 5-5-6 triangle (joint 3 along forward, 4 along the pole: exact in binary).
Positions compare to 1e-15 x max(a + b, |root|): a few ulps of rounding, no more.
"""

import math
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import pytest

from solver import TwoBoneIKResult, solve_two_bone_ik

inf, nan = math.inf, math.nan
SQRT6 = math.sqrt(6.0)


class Edge(NamedTuple):
    id: str
    root: tuple
    target: tuple
    pole_hint: tuple
    a: float
    b: float
    tolerance: float
    joint: tuple
    end: tuple
    reachable: bool


ZERO = (0.0, 0.0, 0.0)
E = 2.0**-10  # a tolerance that makes eps exact
# fmt: off
EDGES = [
    # The plain case and the pole's role (contract, "The solve").
    Edge("5-5-6", ZERO, (6, 0, 0), (0, 1, 0), 5, 5, 1e-9, (3, 4, 0), (6, 0, 0), True),
    Edge("pole-below-bends-below", ZERO, (6, 0, 0), (0, -7, 0), 5, 5, 1e-9, (3, -4, 0), (6, 0, 0), True),
    Edge("pole-forward-part-ignored", ZERO, (6, 0, 0), (100, 0, 0.5), 5, 5, 1e-9, (3, 0, 4), (6, 0, 0), True),
    Edge("translated-root", (10, 20, 30), (16, 20, 30), (10, 25, 30), 5, 5, 1e-9,
         (13, 24, 30), (16, 20, 30), True),
    Edge("1000-units", ZERO, (6000, 0, 0), (0, 1, 0), 5000, 5000, 1e-9, (3000, 4000, 0), (6000, 0, 0), True),
    Edge("0.001-units", ZERO, (0.006, 0, 0), (0, 1, 0), 0.005, 0.005, 1e-9,
         (0.003, 0.004, 0), (0.006, 0, 0), True),
    # Unreachable targets clamp: straight towards the target, or folded (contract, "Unreachable
    # targets clamp").
    Edge("too-far-straightens", ZERO, (20, 0, 0), (0, 1, 0), 5, 5, 1e-9, (5, 0, 0), (10, 0, 0), False),
    Edge("too-far-unequal", ZERO, (0, 10, 0), (1, 0, 0), 3, 1, 1e-9, (0, 3, 0), (0, 4, 0), False),
    Edge("too-close-upper-longer", ZERO, (1, 0, 0), (0, 1, 0), 3, 1, 1e-9, (3, 0, 0), (2, 0, 0), False),
    Edge("too-close-lower-longer", ZERO, (1, 0, 0), (0, 1, 0), 1, 3, 1e-9, (-1, 0, 0), (2, 0, 0), False),
    Edge("exactly-full-extension", ZERO, (4, 0, 0), (0, 1, 0), 3, 1, 1e-9, (3, 0, 0), (4, 0, 0), True),
    Edge("exactly-full-fold", ZERO, (2, 0, 0), (0, 1, 0), 3, 1, 1e-9, (3, 0, 0), (2, 0, 0), True),
    # One tolerance (contract D2): eps = tolerance * (a + b).
    Edge("within-eps-beyond-reach", ZERO, (2 + 1e-9, 0, 0), (0, 1, 0), 1, 1, 1e-9,
         (1, 0, 0), (2, 0, 0), True),
    Edge("past-eps-beyond-reach", ZERO, (2 + 3e-9, 0, 0), (0, 1, 0), 1, 1, 1e-9, (1, 0, 0), (2, 0, 0), False),
    Edge("within-eps-inside-fold", ZERO, (1 - 2e-9, 0, 0), (0, 1, 0), 2, 1, 1e-9, (2, 0, 0), (1, 0, 0), True),
    Edge("past-eps-inside-fold", ZERO, (1 - 4e-9, 0, 0), (0, 1, 0), 2, 1, 1e-9, (2, 0, 0), (1, 0, 0), False),
    Edge("blender-tolerance", ZERO, (2 + 1e-6, 0, 0), (0, 1, 0), 1, 1, 1e-6, (1, 0, 0), (2, 0, 0), True),
    Edge("tolerance-0-at-reach", ZERO, (2, 0, 0), (0, 1, 0), 1, 1, 0.0, (1, 0, 0), (2, 0, 0), True),
    Edge("tolerance-0-ulp-past-reach", ZERO, (math.nextafter(2, 3), 0, 0), (0, 1, 0), 1, 1, 0.0,
         (1, 0, 0), (2, 0, 0), False),
    # Exactly on each threshold (tolerance 2**-10, a + b = 1: eps = 2**-10, all exact): the contract's
    # comparisons are inclusive.
    Edge("exactly-eps-past-reach", ZERO, (1 + E, 0, 0), (0, 1, 0), 0.5, 0.5, E, (0.5, 0, 0), (1, 0, 0), True),
    Edge("ulp-more-than-eps-past-reach", ZERO, (math.nextafter(1 + E, 2), 0, 0), (0, 1, 0), 0.5, 0.5, E,
         (0.5, 0, 0), (1, 0, 0), False),
    Edge("exactly-eps-inside-fold", ZERO, (0.5 - E, 0, 0), (0, 1, 0), 0.75, 0.25, E,
         (0.75, 0, 0), (0.5, 0, 0), True),
    Edge("target-exactly-eps-from-root-is-at-root", ZERO, (0, E, 0), (0, 0, 1), 0.5, 0.5, E,
         (0, 0, 0.5), ZERO, True),
    Edge("pole-exactly-at-line-tolerance", ZERO, (0, 0.5, 0), (0, 0, -E), 0.5, 0.5, E,
         (0.4330127018922193, 0.25, 0), (0, 0.5, 0), True),
    # Target at the root: forward = +X, d = 0 before clamping (contract, "Degenerate inputs", D2, D5).
    Edge("target-at-root-equal-bones", ZERO, ZERO, (0, 0, 1), 2, 2, 1e-9, (0, 0, 2), ZERO, True),
    Edge("target-within-eps-of-root", ZERO, (1e-10, 0, 0), (0, 1, 0), 1, 1, 1e-9, (0, 1, 0), ZERO, True),
    Edge("target-at-root-upper-longer", ZERO, ZERO, (0, 1, 0), 2, 1, 1e-9, (2, 0, 0), (1, 0, 0), False),
    Edge("target-at-root-lower-longer", ZERO, ZERO, (0, 1, 0), 1, 2, 1e-9, (-1, 0, 0), (1, 0, 0), False),
    Edge("target-and-pole-at-root", ZERO, ZERO, ZERO, 2, 2, 1e-9, (0, 2, 0), ZERO, True),
    # Pole on the line or at the root: the fallback axis (contract D3).
    Edge("fallback-forward-x-gives-y", ZERO, (6, 0, 0), (12, 0, 0), 5, 5, 1e-9, (3, 4, 0), (6, 0, 0), True),
    Edge("fallback-forward-minus-x-gives-y", ZERO, (-6, 0, 0), (-1, 0, 0), 5, 5, 1e-9,
         (-3, 4, 0), (-6, 0, 0), True),
    Edge("fallback-forward-y-gives-x", ZERO, (0, 6, 0), (0, 3, 0), 5, 5, 1e-9, (4, 3, 0), (0, 6, 0), True),
    Edge("fallback-forward-z-gives-x", ZERO, (0, 0, 6), (0, 0, -3), 5, 5, 1e-9, (4, 0, 3), (0, 0, 6), True),
    Edge("fallback-forward-xy-gives-z", ZERO, (3.6, 4.8, 0), (7.2, 9.6, 0), 5, 5, 1e-9,
         (1.8, 2.4, 4), (3.6, 4.8, 0), True),
    Edge("fallback-three-way-tie-gives-x", ZERO, (2, 2, 2), (4, 4, 4), 2, 2, 1e-9,
         (1 + 2 / SQRT6, 1 - 1 / SQRT6, 1 - 1 / SQRT6), (2, 2, 2), True),
    Edge("pole-at-root", ZERO, (6, 0, 0), ZERO, 5, 5, 1e-9, (3, 4, 0), (6, 0, 0), True),
    Edge("pole-at-target", ZERO, (6, 0, 0), (6, 0, 0), 5, 5, 1e-9, (3, 4, 0), (6, 0, 0), True),
    Edge("pole-within-tolerance-of-line", ZERO, (6, 0, 0), (3, 0, -1e-9), 5, 5, 1e-9,
         (3, 4, 0), (6, 0, 0), True),
    Edge("pole-just-past-tolerance", ZERO, (6, 0, 0), (3, 0, -1e-7), 5, 5, 1e-9, (3, 0, -4), (6, 0, 0), True),
    Edge("pole-1e-12-off-line-tolerance-0", ZERO, (6, 0, 0), (3, 0, -1e-12), 5, 5, 0.0,
         (3, 0, -4), (6, 0, 0), True),
    # A zero-length bone: the chain is one bone (contract, "Degenerate inputs").
    Edge("zero-upper-too-far", ZERO, (6, 8, 0), (0, 0, 1), 0, 5, 1e-9, ZERO, (3, 4, 0), False),
    Edge("zero-upper-too-close", ZERO, (1, 0, 0), (0, 1, 0), 0, 5, 1e-9, ZERO, (5, 0, 0), False),
    Edge("zero-upper-reachable", ZERO, (3, 4, 0), (0, 0, 1), 0, 5, 1e-9, ZERO, (3, 4, 0), True),
    Edge("zero-lower-reachable", ZERO, (3, 4, 0), (0, 0, 1), 5, 0, 1e-9, (3, 4, 0), (3, 4, 0), True),
    Edge("zero-lower-too-far", ZERO, (0, 0, 9), (1, 0, 0), 5, 0, 1e-9, (0, 0, 5), (0, 0, 5), False),
]
# fmt: on


@pytest.mark.parametrize("case", EDGES, ids=[case.id for case in EDGES])
def test_edge_case(case):
    """Each edge case gives its exact right joint, end and reachable flag."""
    result = solve_two_bone_ik(
        case.root, case.target, case.pole_hint, case.a, case.b, tolerance=case.tolerance
    )
    scale = max(case.a + case.b, math.hypot(*case.root))
    assert result.reachable is case.reachable
    assert math.dist(result.joint, case.joint) <= 1e-15 * scale, result.joint
    assert math.dist(result.end, case.end) <= 1e-15 * scale, result.end


def test_reachable_end_within_3_eps_at_the_root():
    """Contract D5: reachable => |end - target| <= 2 eps, but 3 eps when the target is within eps of
    the root, where forward is +X.

    A target eps away from the root on the -X side, with |a - b| = 1.9 eps: reachable (|a - b| -
    eps <= |target - root|), at the root (|target - root| <= eps), so forward is +X and the end
    is |a - b| along +X: 2.9 eps from the target, past 2 eps and within the 3 eps D5 allows there.
    """
    tolerance = 1e-9
    eps = tolerance * 2.0
    upper, lower = 1.0 + 0.95 * eps, 1.0 - 0.95 * eps  # |a - b| = 1.9 eps, a + b = 2
    target = (-0.999 * eps, 0.0, 0.0)
    result = solve_two_bone_ik((0, 0, 0), target, (0, 1, 0), upper, lower, tolerance=tolerance)
    assert result.reachable
    assert result.end == pytest.approx((1.9 * eps, 0.0, 0.0), rel=1e-6)
    assert math.dist(result.end, target) == pytest.approx(2.899 * eps, rel=1e-6)


# fmt: off
BAD_INPUTS = [
    # (id, arguments, tolerance, the name the message must contain)
    ("root-nan", ((nan, 0, 0), (1, 0, 0), (0, 1, 0), 1, 1), 1e-9, "root"),
    ("root-inf", ((inf, 0, 0), (1, 0, 0), (0, 1, 0), 1, 1), 1e-9, "root"),
    ("target-nan", ((0, 0, 0), (0, nan, 0), (0, 1, 0), 1, 1), 1e-9, "target"),
    ("pole-inf", ((0, 0, 0), (1, 0, 0), (0, 0, -inf), 1, 1), 1e-9, "pole_hint"),
    ("upper-negative", ((0, 0, 0), (1, 0, 0), (0, 1, 0), -1, 1), 1e-9, "upper_length"),
    ("upper-nan", ((0, 0, 0), (1, 0, 0), (0, 1, 0), nan, 1), 1e-9, "upper_length"),
    ("lower-inf", ((0, 0, 0), (1, 0, 0), (0, 1, 0), 1, inf), 1e-9, "lower_length"),
    ("lower-negative-tiny", ((0, 0, 0), (1, 0, 0), (0, 1, 0), 1, -1e-300), 1e-9, "lower_length"),
    ("both-zero", ((0, 0, 0), (1, 0, 0), (0, 1, 0), 0, 0), 1e-9, "upper_length \\+ lower_length"),
    ("tolerance-negative", ((0, 0, 0), (1, 0, 0), (0, 1, 0), 1, 1), -1e-9, "tolerance"),
    ("tolerance-nan", ((0, 0, 0), (1, 0, 0), (0, 1, 0), 1, 1), nan, "tolerance"),
    ("tolerance-inf", ((0, 0, 0), (1, 0, 0), (0, 1, 0), 1, 1), inf, "tolerance"),
    ("root-two-coordinates", ((0, 0), (1, 0, 0), (0, 1, 0), 1, 1), 1e-9, "root"),
    ("target-four-coordinates", ((0, 0, 0), (1, 0, 0, 0), (0, 1, 0), 1, 1), 1e-9, "target"),
    ("pole-not-a-sequence", ((0, 0, 0), (1, 0, 0), None, 1, 1), 1e-9, "pole_hint"),
    ("root-a-string", ("abc", (1, 0, 0), (0, 1, 0), 1, 1), 1e-9, "root"),
    ("target-string-coordinate", ((0, 0, 0), ("1", 0, 0), (0, 1, 0), 1, 1), 1e-9, "target"),
    ("upper-a-string", ((0, 0, 0), (1, 0, 0), (0, 1, 0), "1", 1), 1e-9, "upper_length"),
    ("lower-complex", ((0, 0, 0), (1, 0, 0), (0, 1, 0), 1, 1j), 1e-9, "lower_length"),
    ("root-int-too-big-for-float", ((10**400, 0, 0), (1, 0, 0), (0, 1, 0), 1, 1), 1e-9, "root"),
    ("first-bad-argument-named", ((nan, 0, 0), (nan, 0, 0), (0, 1, 0), -1, 1), 1e-9, "root"),
]
# fmt: on


@pytest.mark.parametrize("case_id, arguments, tolerance, name", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_raises_value_error_naming_the_argument(case_id, arguments, tolerance, name):
    """Contract D4: ValueError naming the argument, for every kind of bad input."""
    with pytest.raises(ValueError, match=name):
        solve_two_bone_ik(*arguments, tolerance=tolerance)


class _Vector:
    """A 3-sequence like mathutils.Vector (contract D1), without Blender."""

    def __init__(self, *coordinates):
        self._coordinates = [float(c) for c in coordinates]

    def __len__(self):
        return 3

    def __getitem__(self, index):
        return self._coordinates[index]


def _numpy_array(*coordinates):
    return np.array(coordinates, dtype=np.float64)


@pytest.mark.parametrize(
    "convert",
    [
        lambda *c: tuple(c),
        lambda *c: list(c),
        lambda *c: _Vector(*c),
        lambda *c: _numpy_array(*c),
        lambda *c: (Decimal(x) for x in c),
        lambda *c: [Fraction(x) for x in c],
        lambda *c: [int(x) for x in c],
    ],
    ids=["tuple", "list", "vector-like", "numpy", "decimal-generator", "fraction", "int"],
)
def test_points_may_be_any_real_3_sequence(convert):
    """Contract D1: any 3-sequence of real numbers; the result is the same floats as for tuples."""
    expected = solve_two_bone_ik((1, 2, 3), (7, 2, 3), (1, 9, 3), 5.0, 5.0)
    result = solve_two_bone_ik(convert(1, 2, 3), convert(7, 2, 3), convert(1, 9, 3), 5.0, 5.0)
    assert result == expected == TwoBoneIKResult((4.0, 6.0, 3.0), (7.0, 2.0, 3.0), True)
    assert all(type(c) is float for c in result.joint + result.end)


@pytest.mark.parametrize(
    "lengths",
    [(5, 5), (True, 5.0), (Fraction(5), Decimal(5)), (5.0, 5.0)],
    ids=["int", "bool-and-float", "exact", "float"],
)
def test_lengths_may_be_any_real_number(lengths):
    upper, lower = lengths
    if upper is True:
        expected = solve_two_bone_ik((0, 0, 0), (3, 0, 0), (0, 1, 0), 1.0, 5.0)
    else:
        expected = TwoBoneIKResult((3.0, 4.0, 0.0), (6.0, 0.0, 0.0), True)
    result = solve_two_bone_ik((0, 0, 0), (3, 0, 0) if upper is True else (6, 0, 0), (0, 1, 0), upper, lower)
    assert result == expected


def test_result_is_a_named_tuple():
    """Contract D1: a named tuple (joint, end, reachable)."""
    result = solve_two_bone_ik((0, 0, 0), (6, 0, 0), (0, 1, 0), 5, 5)
    joint, end, reachable = result
    assert (joint, end, reachable) == (result.joint, result.end, result.reachable)
    assert isinstance(result, TwoBoneIKResult) and result._fields == ("joint", "end", "reachable")

# SPDX-License-Identifier: GPL-3.0-or-later
"""Properties every solve must have, over random rigs of every degenerate kind (hypothesis).

Rigs from 0.001 to 1000 units (tests/solver/solver_rigs.py). Geometry is compared at
1e-12 x max(a + b, |root|) (contract D5). Where a check depends on a threshold decision (target at
the root, pole hint on the line, fallback-axis tie, reachable), rigs whose exact value lies within
a few ulps of that threshold are exempt from it: floating point may decide either side there
(documented in solve_two_bone_ik's Notes).
"""

import math

from hypothesis import given
from solver_reference import solve_reference
from solver_rigs import PROPERTY_SETTINGS, rigs

from solver import solve_two_bone_ik

# A decision this close (relative) to its threshold may go either way in floating point.
DECISION_BAND = 1e-12
# reachable compares |target - root| (a few ulps of rounding) with |a - b| - eps and a + b + eps.
REACHABLE_BAND = 1e-14


def _solve(rig):
    return solve_two_bone_ik(
        rig.root, rig.target, rig.pole_hint, rig.upper_length, rig.lower_length, tolerance=rig.tolerance
    )


def _scale(rig) -> float:
    return max(rig.upper_length + rig.lower_length, math.hypot(*rig.root))


def _sub(p, q):
    return tuple(x - y for x, y in zip(p, q, strict=True))


def _dot(p, q) -> float:
    return math.fsum(x * y for x, y in zip(p, q, strict=True))


def _cross(u, v):
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def _branches_clear(reference) -> bool:
    """True when no threshold decision of the rig is within DECISION_BAND of its threshold."""
    tie = reference.on_line and reference.tie_margin <= DECISION_BAND
    return reference.root_margin > DECISION_BAND and reference.line_margin > DECISION_BAND and not tie


@PROPERTY_SETTINGS
@given(rigs())
def test_output_is_finite_and_bones_keep_their_lengths(rig):
    """Never NaN or inf; |joint - root| = a and |end - joint| = b to 1e-12 x scale (contract D4, D5)."""
    result = _solve(rig)
    assert all(math.isfinite(c) for c in result.joint + result.end)
    assert type(result.reachable) is bool
    limit = 1e-12 * _scale(rig)
    assert abs(math.dist(result.joint, rig.root) - rig.upper_length) <= limit
    assert abs(math.dist(result.end, result.joint) - rig.lower_length) <= limit
    if result.reachable:
        # Contract D5: 2 eps, and 3 eps at the root (forward +X, d clamped to |a - b| <= 2 eps):
        # see test_edge_cases.test_reachable_end_within_3_eps_at_the_root.
        eps = rig.tolerance * (rig.upper_length + rig.lower_length)
        assert math.dist(result.end, rig.target) <= 3.0 * eps + limit


@PROPERTY_SETTINGS
@given(rigs())
def test_end_on_the_ray_joint_towards_the_pole_reachable_per_d2(rig):
    """Against the contract's rules in exact arithmetic (tests/solver/solver_reference.py):

    - end = root + d * forward, d = |target - root| clamped to [|a - b|, a + b] (contract D2);
    - the joint lies in the plane of forward and the pole direction, on the pole's side (or the
      fallback axis's), which is what stops a knee from flipping (contract D3);
    - reachable iff |a - b| - eps <= |target - root| <= a + b + eps, eps = tolerance (a + b).
    """
    reference = solve_reference(*rig)
    result = _solve(rig)
    limit = 1e-12 * _scale(rig)
    if reference.root_margin > DECISION_BAND:  # else forward itself is a toss-up
        forward = tuple(float(f) for f in reference.forward)
        offset = _sub(result.end, rig.root)
        assert abs(math.hypot(*offset) - float(reference.d)) <= limit
        assert math.hypot(*_cross(offset, forward)) <= limit  # on the line ...
        assert _dot(offset, forward) >= -limit  # ... on the target's side
    if _branches_clear(reference):
        pole = tuple(float(u) for u in reference.pole)
        offset = _sub(result.joint, rig.root)
        assert _dot(offset, pole) >= -limit
        assert abs(_dot(offset, _cross(forward, pole))) <= limit
    if reference.reach_margin > REACHABLE_BAND:
        assert result.reachable is reference.reachable


@PROPERTY_SETTINGS
@given(rigs())
def test_solves_are_deterministic_and_container_independent(rig):
    """Same inputs, same bits (contract D7), whether points come as tuples, lists or other sequences."""
    first = _solve(rig)
    again = _solve(rig)
    as_lists = solve_two_bone_ik(
        list(rig.root),
        list(rig.target),
        list(rig.pole_hint),
        rig.upper_length,
        rig.lower_length,
        tolerance=rig.tolerance,
    )
    assert _bits(first) == _bits(again) == _bits(as_lists)
    assert all(type(c) is float for c in first.joint + first.end)


def _bits(result):
    return tuple(c.hex() for c in result.joint + result.end), result.reachable

# SPDX-License-Identifier: GPL-3.0-or-later
"""The checked path (solver/_scaled.py): same numbers as the fast path, and sound at any scale.

solve_two_bone_ik runs everyday float inputs inline and everything else (other number types,
tolerance below 2**-100, magnitudes past 2**200) through solve_scaled, which does the same
arithmetic on power-of-two scaled values. Both must agree bit for bit wherever both apply, and
the scaled one must stay finite and exact up to the float range.
"""

import math

import pytest
from solver_rigs import random_rigs

from solver import solve_two_bone_ik
from solver._scaled import solve_scaled


def _bits(joint, end, reachable):
    return tuple(c.hex() for c in joint + end), reachable


def test_fast_and_scaled_paths_agree_bit_for_bit():
    """On 3000 everyday rigs of every kind, the inline path and solve_scaled give identical bits."""
    for rig in random_rigs(3000, 11, tolerances=(1e-9, 1e-6, 1e-12)):
        fast = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance)
        flat = [float(c) for c in rig.root + rig.target + rig.pole_hint]
        scaled = solve_scaled(*flat, rig.upper_length, rig.lower_length, rig.tolerance)
        assert _bits(*fast) == _bits(*scaled), rig


@pytest.mark.parametrize("exponent", [-1000, -600, -300, 300, 600, 900, 1010])
def test_solves_scale_exactly_by_powers_of_two(exponent):
    """Scaling a rig by 2**k (k up to +-1000, through the 2**1000 prescale) scales the answer by
    exactly 2**k: nothing overflows or underflows at absurd magnitudes like 1e300 or 1e-300."""
    factor = 2.0**exponent
    for rig in random_rigs(300, 12, tolerances=(1e-9, 1e-6)):
        size = max(abs(c) for c in rig.root + rig.target + rig.pole_hint + rig[3:5])
        if rig.upper_length + rig.lower_length < 1e-2 or size * factor > 1e308:
            continue  # keep the scaled rig above the subnormal range and below overflow
        unit = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance)
        scaled = solve_two_bone_ik(
            *(tuple(c * factor for c in point) for point in rig[:3]),
            rig.upper_length * factor,
            rig.lower_length * factor,
            tolerance=rig.tolerance,
        )
        assert scaled.reachable is unit.reachable
        assert scaled.joint == tuple(c * factor for c in unit.joint), rig
        assert scaled.end == tuple(c * factor for c in unit.end), rig


@pytest.mark.parametrize("magnitude", [1e-300, 1e-150, 1e150, 1e300, 1e307])
def test_absurd_magnitudes_stay_finite_and_keep_lengths(magnitude):
    """Whole rigs scaled to 1e+-300, and small rigs placed 1e300 away from the origin."""
    solved = 0
    for rig in random_rigs(200, 13):
        for root, target, pole_hint, a, b in (
            (
                [c * magnitude for c in rig.root],
                [c * magnitude for c in rig.target],
                [c * magnitude for c in rig.pole_hint],
                rig.upper_length * magnitude,
                rig.lower_length * magnitude,
            ),
            (
                [c + magnitude for c in rig.root],
                [c + magnitude for c in rig.target],
                [c + magnitude for c in rig.pole_hint],
                rig.upper_length,
                rig.lower_length,
            ),
        ):
            if a + b == 0.0 or not all(math.isfinite(c) for c in root + target + pole_hint):
                continue  # underflowed to no chain, or overflowed: rightly rejected inputs
            result = solve_two_bone_ik(root, target, pole_hint, a, b, tolerance=rig.tolerance)
            assert all(math.isfinite(c) for c in result.joint + result.end)
            scale = max(a + b, math.hypot(*root))
            assert abs(math.dist(result.joint, root) - a) <= 1e-12 * scale
            assert abs(math.dist(result.end, result.joint) - b) <= 1e-12 * scale
            solved += 1
    assert solved >= 250


def test_tolerance_zero_and_a_target_a_hair_from_the_root():
    """tolerance = 0 with the target 1e-300 from the root: forward is still the real direction,
    and the thin triangle (d ~ 1e-300 x (a + b)) keeps the bone lengths."""
    root = (1.0, 2.0, 3.0)
    target = (1.0, 2.0 + 1e-300, 3.0)  # 2.0 + 1e-300 == 2.0: exactly at the root
    assert solve_two_bone_ik(root, target, (5, 5, 5), 1.0, 1.0, tolerance=0.0).end == root
    result = solve_two_bone_ik((0.0, 0.0, 0.0), (0.0, 1e-300, 0.0), (0.0, 0.0, 1.0), 1.0, 1.0, tolerance=0.0)
    assert result.end == pytest.approx((0.0, 1e-300, 0.0), rel=1e-15, abs=0.0)
    assert result.reachable
    assert abs(math.dist(result.joint, (0.0, 0.0, 0.0)) - 1.0) <= 1e-15
    assert abs(math.dist(result.joint, result.end) - 1.0) <= 1e-15
    assert result.joint[2] > 0.99  # bent towards the pole, +Z

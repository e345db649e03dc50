# SPDX-License-Identifier: GPL-3.0-or-later
"""The native network's driver expressions (solver/expressions.py) are the solver's rules: each,
evaluated as Blender would, gives the Python solver's value on the same inputs."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver import expressions, solve_two_bone_ik
from solver.scalar import fallback_axis, soften, triangle

lengths = st.floats(0.01, 10.0)
fractions = st.floats(0.0, 1.0)


@given(lengths, lengths, st.floats(0.0, 2.5), fractions)
@settings(max_examples=300, derandomize=True, database=None)  # reproducible: solver_rigs
def test_soft_distance_is_the_solvers_softening(a, b, ratio, softness):
    reach, fold = a + b, abs(a - b)
    distance = ratio * reach
    got = expressions.evaluate(expressions.soft_distance(a, b), D=distance, k=softness)
    assert math.isclose(got, soften(distance, reach, fold, softness), rel_tol=1e-7, abs_tol=1e-7 * reach)


@given(lengths, lengths, st.floats(0.0, 2.5))
@settings(max_examples=300, derandomize=True, database=None)  # reproducible: solver_rigs
def test_the_upper_angle_and_the_end_probe_put_joint_and_end_where_the_triangle_does(a, b, ratio):
    """The upper angle from forward gives the solver's joint, and the lower bone aimed from it at
    the end probe (the eased distance along forward, docs/design.md "The native network") gives
    its end (within float noise, near full extension and fold the square root of it)."""
    reach = a + b
    d = ratio * reach
    at_root = d <= 1e-6 * reach
    theta = expressions.evaluate(expressions.upper_angle(a, b, 1e-6), d=d)
    clamped, along, height = triangle(a, b, 0.0 if at_root else d, at_root)
    joint = (a * math.cos(theta), a * math.sin(theta))
    towards = (d - joint[0], -joint[1])
    length = math.hypot(*towards)
    end = (joint[0] + b * towards[0] / length, joint[1] + b * towards[1] / length)
    scale = 1e-6 * reach
    assert math.dist(joint, (along, height)) <= scale
    assert math.dist(end, (clamped, 0.0)) <= scale


def test_equal_bones_fold_flat_at_the_root():
    assert expressions.evaluate(expressions.upper_angle(0.5, 0.5, 1e-6), d=0.0) == pytest.approx(math.pi / 2)


@pytest.mark.parametrize("softness", [5e-324, 1e-320, 0.0])
@pytest.mark.parametrize("ratio", [0.5, 0.99, 1.0, 1.5])
def test_a_subnormal_softness_is_the_solvers(softness, ratio):
    """A softness so small that softness x reach underflows to 0 (Hypothesis once drew 5e-324 for a
    0.5 m chain) is the solver's width 0, the distance itself, with no division by 0 (Blender stops
    a driver that divides by 0, and the chain with it); a subnormal width that does not underflow
    eases as the solver does."""
    a, b = 0.3, 0.2
    distance = ratio * (a + b)
    got = expressions.evaluate(expressions.soft_distance(a, b), D=distance, k=softness)
    assert got == soften(distance, a + b, abs(a - b), softness)
    if softness * (a + b) == 0.0:
        assert got == distance


@pytest.mark.parametrize("softness", [0.0, 0.3, 1.0])
def test_a_zero_length_bone_has_no_soft_zone(softness):
    """One bone of length 0 (contract: allowed) leaves the soft zone no width: the distance itself."""
    for distance in (0.1, 0.3, 0.45):
        got = expressions.evaluate(expressions.soft_distance(0.3, 0.0), D=distance, k=softness)
        assert got == soften(distance, 0.3, 0.3, softness) == distance


def test_every_expression_fits_blenders_255_characters():
    """The longest texts come from lengths whose 9 digits all print, at the smallest and largest
    scales; each must fit (soft_distance is the longest)."""
    digits = (1.11111111, 1.23456789, 9.87654321, 1.02222222)
    for upper_exponent in range(-6, 5):
        for lower_exponent in range(upper_exponent - 1, upper_exponent + 2):
            for upper_digits in digits:
                for lower_digits in digits:
                    a, b = upper_digits * 10.0**upper_exponent, lower_digits * 10.0**lower_exponent
                    for text in (
                        expressions.soft_distance(a, b),
                        expressions.upper_angle(a, b, 1e-6),
                        expressions.roll(a + b, 1e-6),
                        expressions.aim_influence(a + b, 1e-6),
                    ):
                        assert len(text) <= expressions.MAX_LENGTH


def test_the_eased_distance_stops_far_out():
    """Past FAR x reach only its direction counts: an infinite distance gives a finite probe."""
    far = expressions.FAR * 2.0
    assert expressions.evaluate(expressions.soft_distance(1.0, 1.0), D=math.inf, k=0.0) == pytest.approx(far)
    assert expressions.evaluate(expressions.soft_distance(1.0, 1.0), D=3.0, k=0.0) == 3.0


def test_aim_influence_is_the_at_root_test():
    text = expressions.aim_influence(2.0, 1e-6)
    assert expressions.evaluate(text, D=2e-6) == 0.0
    assert expressions.evaluate(text, D=2.1e-6) == 1.0


def frame(forward):
    """An orthonormal frame (rows are armature axes, columns the frame's X, Y = forward, Z)."""
    fx, fy, fz = forward
    helper = (0.0, 0.0, 1.0) if abs(fz) < 0.9 else (1.0, 0.0, 0.0)
    x = (fy * helper[2] - fz * helper[1], fz * helper[0] - fx * helper[2], fx * helper[1] - fy * helper[0])
    norm = math.sqrt(sum(c * c for c in x))
    x = tuple(c / norm for c in x)
    z = (x[1] * fz - x[2] * fy, x[2] * fx - x[0] * fz, x[0] * fy - x[1] * fx)
    return [[x[row], forward[row], z[row]] for row in range(3)]


@pytest.mark.parametrize("forward", [(1.0, 0.0, 0.0), (0.0, 0.6, 0.8), (0.48, 0.6, 0.64), (0.0, 0.0, -1.0)])
@pytest.mark.parametrize("twist", [0.0, 0.9])
def test_roll_on_the_line_turns_onto_the_fallback_axis(forward, twist):
    """A pole hint on the line: the frame's +Z turned by the roll about +Y is the solver's fallback
    axis (D3) turned by the twist (D9)."""
    m = frame(forward)
    variables = {f"m{row}{column}": m[row][column] for row in range(3) for column in range(3)}
    angle = expressions.evaluate(expressions.roll(1.0, 1e-6), x=0.0, y=0.7, z=0.0, t=twist, **variables)
    bend = [m[row][0] * math.sin(angle) + m[row][2] * math.cos(angle) for row in range(3)]
    # The solver's bend direction for this case: its joint minus the root, forward part removed.
    result = solve_two_bone_ik(
        (0, 0, 0), forward, [0.7 * c for c in forward], 1.0, 1.0, tolerance=1e-6, twist=twist
    )
    along = sum(j * f for j, f in zip(result.joint, forward, strict=True))
    side = [j - along * f for j, f in zip(result.joint, forward, strict=True)]
    norm = math.sqrt(sum(c * c for c in side))
    assert math.dist(bend, [c / norm for c in side]) <= 1e-9
    if twist == 0.0:
        assert math.dist(bend, fallback_axis(*forward)) <= 1e-9


def test_roll_follows_the_pole_off_the_line():
    angle = expressions.evaluate(
        expressions.roll(1.0, 1e-6),
        x=0.3,
        y=5.0,
        z=-0.4,
        t=0.2,
        **dict.fromkeys([f"m{r}{c}" for r in range(3) for c in range(3)], 0.0),
    )
    assert angle == pytest.approx(math.atan2(0.3, -0.4) + 0.2)


def test_every_expression_fits_blenders_field():
    for a, b in ((1e-3, 123.456789), (0.5, 0.5), (7.0, 0.25)):
        for text in (
            expressions.soft_distance(a, b),
            expressions.upper_angle(a, b, 1e-6),
        ):
            assert len(text) <= expressions.MAX_LENGTH
    assert len(expressions.roll(123.456789, 1e-6)) <= expressions.MAX_LENGTH
    with pytest.raises(ValueError, match="characters"):
        expressions._checked("x" * 256)

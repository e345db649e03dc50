# SPDX-License-Identifier: GPL-3.0-or-later
"""Every finite input, at every mix of magnitudes: SPEC D4, D5, D8 and both forms agreeing.

Rigs mix a chain of any size from subnormal (1e-320) to 1e308 with roots, targets and pole hints
of any other size. Beyond the clamp only the directions of target - root and pole_hint - root
matter, so a tiny chain must keep its bone lengths next to a huge target or pole hint. Where
float64 cannot hold SPEC D5's bound (coordinates are spaced 2**-1074 apart, more than
1e-12 x (a + b) for chains under ~1e-311), the solver's documented bound adds 4 x 2**-1074.
"""

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
import solver_reference
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from solver_reference import distance_to, solve_reference

from solver import solve_two_bone_ik

np = pytest.importorskip("numpy")
from solver import solve_two_bone_ik_batch  # noqa: E402  (after the numpy check)

TINY = 2.0**-1074  # the spacing of floats near 0
SUBNORMAL_SLACK = 4 * TINY  # the solver's documented addition to SPEC D5's bound
SMALLEST_NORMAL = 2.0**-1022

SETTINGS = settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _distance(p, q) -> float:
    """|p - q| for float points, from the exact coordinates (120 digits)."""
    with localcontext() as context:
        context.prec = 120
        return float(
            sum(((Decimal(x) - Decimal(y)) ** 2 for x, y in zip(p, q, strict=True)), Decimal(0)).sqrt()
        )


def _finite(*points) -> bool:
    return all(math.isfinite(c) for point in points for c in point)


@st.composite
def mixed_rigs(draw):
    """(root, target, pole_hint, a, b, tolerance) with independent magnitudes, 2**-1080 .. 2**1023."""
    # Either end of the float range (subnormal, near overflow), everyday sizes, or anywhere.
    exponents = st.one_of(
        st.integers(-1080, -1000), st.integers(990, 1023), st.integers(-10, 10), st.integers(-1080, 1023)
    )
    unit = st.floats(-1.0, 1.0)

    def vector(exponent):
        return tuple(math.ldexp(draw(unit), exponent) for _ in range(3))

    def offset(base, step, scale=1.0):
        return tuple(x + s * scale for x, s in zip(base, step, strict=True))

    root = vector(draw(exponents)) if draw(st.booleans()) else (0.0, 0.0, 0.0)
    chain = draw(exponents)
    kind = draw(st.sampled_from(("unequal", "equal", "zero_upper", "zero_lower")))
    a = math.ldexp(draw(st.floats(0.0, 1.0)), chain)
    b = a if kind == "equal" else math.ldexp(draw(st.floats(0.0, 1.0)), chain)
    a, b = (0.0, b) if kind == "zero_upper" else (a, 0.0) if kind == "zero_lower" else (a, b)
    assume(a > 0.0 or b > 0.0)

    target_kind = draw(st.sampled_from(("near", "far", "at_root")))
    if target_kind == "near":  # within 1.2 x the reach: reachable, clamped, folded
        direction = vector(0)
        norm = math.hypot(*direction) or 1.0
        ratio = draw(st.floats(0.0, 1.2))
        target = offset(root, direction, ratio * (a + b) / norm if a + b < 1e307 else ratio / norm * 1e307)
    elif target_kind == "far":
        target = offset(root, vector(draw(exponents)))
    else:
        target = root
    pole_kind = draw(st.sampled_from(("any", "on_line", "at_root")))
    if pole_kind == "any":
        pole_hint = offset(root, vector(draw(exponents)))
    elif pole_kind == "on_line":
        pole_hint = offset(root, tuple(t * 0.5 - r * 0.5 for t, r in zip(target, root, strict=True)))
    else:
        pole_hint = root
    assume(_finite(root, target, pole_hint))
    tolerance = draw(st.sampled_from((0.0, 1e-12, 1e-9, 1e-6, 0.5)))
    return root, target, pole_hint, a, b, tolerance


def _solve_both(root, target, pole_hint, a, b, tolerance):
    """The scalar result and the batch form's row, which must be the same bits or the same error."""
    try:
        result = solve_two_bone_ik(root, target, pole_hint, a, b, tolerance=tolerance)
    except ValueError as error:
        assert "outside the float range" in str(error)
        with pytest.raises(ValueError, match="outside the float range"):
            solve_two_bone_ik_batch([root], [target], [pole_hint], a, b, tolerance=tolerance)
        return None
    batch = solve_two_bone_ik_batch([root], [target], [pole_hint], a, b, tolerance=tolerance)
    assert tuple(batch.joints[0].tolist()) == result.joint
    assert tuple(batch.ends[0].tolist()) == result.end
    assert bool(batch.reachable[0]) is result.reachable
    return result


@SETTINGS
@given(mixed_rigs())
def test_any_mix_of_magnitudes_keeps_the_bones_and_both_forms_agree(rig):
    """SPEC D4, D5 at any magnitudes: finite output with the bone lengths kept (plus 4 x 2**-1074
    where float64 cannot do better), and the batch form giving the same bits or the same error."""
    root, target, _, a, b, tolerance = rig
    result = _solve_both(*rig)
    if result is None:  # only a chain beyond the float range: a root near 1e308 and a long chain
        assert max(map(abs, root)) + a + b > 1e307
        return
    assert _finite(result.joint, result.end)
    scale = max(a + b, math.hypot(*root))
    limit = 1e-12 * scale + SUBNORMAL_SLACK
    if a + b >= SMALLEST_NORMAL:
        limit = 1e-12 * scale  # SPEC D5 exactly
    assert abs(_distance(result.joint, root) - a) <= limit
    assert abs(_distance(result.end, result.joint) - b) <= limit
    if result.reachable:
        eps = tolerance * (a + b)
        # 3 eps: see test_edge_cases.test_reachable_end_within_3_eps_at_the_root.
        assert _distance(result.end, target) <= 3 * eps + limit


@SETTINGS
@given(mixed_rigs())
def test_any_mix_of_magnitudes_is_accurate(rig):
    """SPEC D8 against the 80-digit reference for chains of normal size (2**-1022 and up) next to
    roots, targets and pole hints of any size; rigs whose decisions are within 1e-9 of a
    threshold are left out, as in test_accuracy."""
    root, _, _, a, b, _ = rig
    assume(a + b >= SMALLEST_NORMAL)
    reference = _reference(rig)
    tie = reference.on_line and reference.tie_margin <= 1e-9
    assume(min(reference.root_margin, reference.line_margin) > 1e-9 and not tie)
    result = _solve_both(*rig)
    assume(result is not None)
    scale = max(a + b, math.hypot(*root))
    bound = 5e-8 if reference.edge <= 1e-6 else 1e-10
    assert distance_to(result.joint, reference.joint) <= bound * scale
    assert distance_to(result.end, reference.end) <= bound * scale


def _reference(rig):
    """solve_reference, with enough digits where tolerance 0 makes an exact zero decide.

    80 digits round the differences of tiny or mixed-magnitude floats (which have up to ~770
    significant digits), so a pole hint exactly on the line can come out a hair off it; with
    tolerance 0 that hair is the bend direction. Such rigs are solved again at 3200 digits."""
    reference = solve_reference(*rig)
    root, target, pole_hint, _, _, tolerance = rig
    if tolerance == 0.0 and not reference.on_line:
        r, t, p = ([Fraction(c) for c in point] for point in (root, target, pole_hint))
        line = [x - y for x, y in zip(t, r, strict=True)]
        if not any(line):
            line = [Fraction(1), Fraction(0), Fraction(0)]
        q = [x - y for x, y in zip(p, r, strict=True)]
        if not any(q[i] * line[j] - q[j] * line[i] for i, j in ((1, 2), (2, 0), (0, 1))):
            digits = solver_reference.DIGITS
            solver_reference.DIGITS = 3200
            try:
                reference = solve_reference(*rig)
            finally:
                solver_reference.DIGITS = digits
            assert reference.on_line
    return reference


# The attacks that found the faults, and the cases next to them.
TINY_CHAIN_FAR_POINTS = [
    ("1e-300-chain-target-1e308", (0, 0, 0), (1e308, 0, 0), (0, 1, 0), 3e-301, 7e-301),
    ("1e-300-chain-target-1e308-3-axes", (0, 0, 0), (1e308, 1e308, 1e308), (0, 1, 0), 3e-301, 7e-301),
    ("1e-300-chain-pole-1e308", (0, 0, 0), (1.5e-300, 0, 0), (0, 1e308, 1e308), 1e-300, 1e-300),
    ("1e-305-chain-pole-1e308", (0, 0, 0), (1.5e-305, 0, 0), (0, 1e308, 1e308), 1e-305, 1e-305),
    ("subnormal-chain-pole-1e308", (0, 0, 0), (1e-320, 0, 0), (0, 1e308, 1e308), 1e-320, 1e-320),
    (
        "subnormal-root-a-0-far-target",
        (2.21e-321, 8.02e-321, -1.457e-321),
        (-8.8e307, 1.6e307, -1.6e308),
        (0, 0, 1e-20),
        0.0,
        9.24e-321,
    ),
    ("long-chain-pole-5e-324-off-root", (0, 0, 0), (2.0**999, 0, 0), (0, 5e-324, 0), 2.0**999, 2.0**999),
    ("points-1.7e308-apart", (-1.7e308, 0, 0), (1.7e308, 0, 0), (0, -1.7e308, 0), 1.0, 1.0),
    ("pole-1.7e308-across", (-1.7e308, 0, 0), (-1.7e308, 1.5, 0), (1.7e308, 1, 0), 1.0, 1.0),
]


@pytest.mark.parametrize("tolerance", [1e-9, 0.0])
@pytest.mark.parametrize("case", TINY_CHAIN_FAR_POINTS, ids=[case[0] for case in TINY_CHAIN_FAR_POINTS])
def test_tiny_chains_next_to_huge_points(case, tolerance):
    """Once, a chain of 1e-300 next to a target or pole hint at 1e308 lost 4e-5 of its bone
    lengths (the whole rig was scaled by 2**-64), a subnormal one collapsed onto the root, a
    subnormal root made the batch form raise, and a tiny pole hint beside a 2**999 chain gave
    NaN. Now the lengths hold (SPEC D5), reachable => the end is at the target, the two forms
    agree, and nothing is NaN."""
    _, root, target, pole_hint, a, b = case
    result = _solve_both(root, target, pole_hint, a, b, tolerance)
    assert _finite(result.joint, result.end)
    scale = max(a + b, math.hypot(*root))
    limit = 1e-12 * scale + (SUBNORMAL_SLACK if a + b < SMALLEST_NORMAL else 0.0)
    assert abs(_distance(result.joint, root) - a) <= limit
    assert abs(_distance(result.end, result.joint) - b) <= limit
    if result.reachable:
        assert _distance(result.end, target) <= 3 * tolerance * (a + b) + limit


def test_the_subnormal_chain_bends_towards_a_far_pole():
    result = solve_two_bone_ik((0, 0, 0), (1e-320, 0, 0), (0, 1e308, 1e308), 1e-320, 1e-320)
    assert result.reachable and result.end == (1e-320, 0.0, 0.0)
    x, y, z = result.joint
    assert x == pytest.approx(0.5e-320, abs=2 * TINY) and y == z > 0.0
    assert y == pytest.approx(math.sqrt(0.375) * 1e-320, abs=2 * TINY)


# fmt: off
BEYOND_THE_RANGE = [
    # (id, root, target, pole_hint, a, b): the joint bends past 1.8e308 in y ...
    ("joint-bends-out", (0, 1.7e308, 0), (1e307, 1.7e308, 0), (0, 1.79e308, 0), 5e307, 5e307),
    # ... the chain folds past it in x (a > 2**1000: the prescaled path) ...
    ("end-folds-out", (1.7e308, 0, 0), (1.7000001e308, 0, 0), (0, 1, 0), 1e308, 1e307),
    # ... a chain of 1e300 on a root at the float's limit, folded along +X (target at the root).
    ("root-at-the-limit", (1.7976931348623157e308, 0, 0), (1.7976931348623157e308, 0, 0), (0, 1, 0),
     4e300, 2e300),
]
WITHIN_THE_RANGE = [
    ("joint-bends-in", (0, 1.7e308, 0), (1e307, 1.7e308, 0), (0, -1e308, 0), 5e307, 5e307),
    ("root-at-the-limit-pointing-in", (1.7976931348623157e308, 0, 0), (0, 0, 0), (0, 1, 0), 2e300, 2e300),
    ("root-at-minus-the-limit", (-1.7976931348623157e308, 0, 0), (1e308, 0, 0), (0, 1e308, 0), 1e300, 1e300),
]
# fmt: on


@pytest.mark.parametrize("case", BEYOND_THE_RANGE, ids=[case[0] for case in BEYOND_THE_RANGE])
def test_a_chain_beyond_the_float_range_raises_in_both_forms(case):
    """The one extra ValueError: the solved chain itself past 1.8e308, from both forms alike."""
    _, root, target, pole_hint, a, b = case
    with pytest.raises(ValueError, match="outside the float range"):
        solve_two_bone_ik(root, target, pole_hint, a, b)
    with pytest.raises(ValueError, match=r"roots\[0\].*outside the float range"):
        solve_two_bone_ik_batch([root], [target], [pole_hint], a, b)


@pytest.mark.parametrize("case", WITHIN_THE_RANGE, ids=[case[0] for case in WITHIN_THE_RANGE])
def test_chains_near_the_float_range_that_fit_solve(case):
    _, root, target, pole_hint, a, b = case
    result = _solve_both(root, target, pole_hint, a, b, 1e-9)
    assert _finite(result.joint, result.end)
    scale = max(a + b, math.hypot(*root))
    assert abs(_distance(result.joint, root) - a) <= 1e-12 * scale
    assert abs(_distance(result.end, result.joint) - b) <= 1e-12 * scale


def test_a_long_chain_keeps_the_direction_of_a_target_close_to_the_root():
    """With tolerance 0 a target 4.5e-305 from the root still sets forward, next to bones of 2e301
    (past 2**1000, which once scaled the whole rig by 2**-64 and the target's offset to 0)."""
    for target, forward in (((0, 0, 4.5e-305), (0, 0, 1)), ((0, -3e-305, 4e-305), (0, -0.6, 0.8))):
        for a, b in ((2.1e301, 0.0), (0.0, 2.1e301), (1.5e301, 1e301)):
            result = _solve_both((0.0, 0.0, 0.0), target, (1.0, 0.0, 0.0), a, b, 0.0)
            assert result.end == pytest.approx(tuple(abs(a - b) * f for f in forward), rel=1e-15)
            assert not result.reachable
        # Equal bones: the distance (below 2**-1064 of them) is as good as 0, but not at the root:
        # the chain folds flat across forward, t = 90 degrees (SPEC D5).
        result = _solve_both((0.0, 0.0, 0.0), target, (1.0, 0.0, 0.0), 2.1e301, 2.1e301, 0.0)
        assert result.reachable and _distance(result.end, target) < 1e-300
        assert abs(_distance(result.joint, (0, 0, 0)) - 2.1e301) <= 1e-12 * 4.2e301
        assert abs(sum(j * f for j, f in zip(result.joint, forward, strict=True))) <= 1e-12 * 2.1e301


def test_subnormal_eps_underflows_to_zero():
    """eps = tolerance x (a + b) underflows for a subnormal chain: the decisions use eps = 0, so
    only an exactly reachable target is reachable, and then the end is on it."""
    a = b = 1e-320
    exact = solve_two_bone_ik((0, 0, 0), (2e-320, 0, 0), (0, 1, 0), a, b)
    assert exact.reachable and exact.end == (2e-320, 0.0, 0.0)
    past = solve_two_bone_ik((0, 0, 0), (2e-320 + TINY, 0, 0), (0, 1, 0), a, b)
    assert not past.reachable and past.end == (2e-320, 0.0, 0.0)

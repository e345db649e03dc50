# SPDX-License-Identifier: GPL-3.0-or-later
"""Contract D8: joint and end within 1e-10 x max(a + b, |root|) of the rules in exact arithmetic on
the same binary inputs, 5e-8 within 1e-6 of full extension or full fold.

The reference (tests/solver/solver_reference.py) evaluates the contract's formulas in 80-digit
decimal from the exact inputs. Rigs whose threshold decisions lie within 1e-9 of a threshold are
left out (floating point may decide either side; the sweeps assert they are rare).
"""

import math
from decimal import Decimal

import pytest
from solver_reference import distance_to, solve_reference
from solver_rigs import random_rigs

from solver import solve_two_bone_ik

BOUND = 1e-10
EDGE_BOUND = 5e-8
EDGE = 1e-6  # relative distance of d from a + b or |a - b| below which EDGE_BOUND applies
DECISION_BAND = 1e-9


def _errors(rigs):
    """(worst joint and end errors / scale away from the edges, same next to them, rigs left out)."""
    worst = {"joint": 0.0, "end": 0.0, "edge joint": 0.0, "edge end": 0.0}
    offenders = []
    left_out = 0
    count = 0
    for rig in rigs:
        count += 1
        reference = solve_reference(*rig)
        tie = reference.on_line and reference.tie_margin <= DECISION_BAND
        if min(reference.root_margin, reference.line_margin) <= DECISION_BAND or tie:
            left_out += 1
            continue
        result = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance)
        scale = max(rig.upper_length + rig.lower_length, math.hypot(*rig.root))
        edge = reference.edge <= EDGE
        bound = EDGE_BOUND if edge else BOUND
        for name, point, exact in (
            ("joint", result.joint, reference.joint),
            ("end", result.end, reference.end),
        ):
            error = distance_to(point, exact) / scale
            key = f"edge {name}" if edge else name
            worst[key] = max(worst[key], error)
            if error > bound:
                offenders.append((name, error, rig))
    return worst, offenders, left_out, count


@pytest.mark.parametrize("seed", [1, 2])
def test_random_rigs_of_every_kind(seed):
    """2 x 1500 rigs, 0.001 to 1000 units, every distance and pole kind, four tolerances."""
    worst, offenders, left_out, count = _errors(random_rigs(1500, seed))
    assert not offenders, offenders[:3]
    assert left_out <= count // 100
    # Typical errors are a few ulps; the bounds are not being approached.
    assert worst["joint"] < 1e-14 and worst["end"] < 1e-14, worst


def test_ordinary_poses_near_extension():
    """Reachable targets at 1 - 1e-3 .. 1 - 1e-6 of full reach, where sqrt(1 - cos^2) loses
    ~1e-8 (the textbook evaluation contract D8 rules out); the stable height stays at 1e-10."""
    rigs = list(random_rigs(1000, 3, distance_kinds=("inside",), pole_kinds=("random",)))
    near = []
    for i, rig in enumerate(rigs):
        reach = rig.upper_length + rig.lower_length
        shortfall = 10.0 ** (-3.0 - 3.0 * (i / len(rigs)))
        direction = [t - r for t, r in zip(rig.target, rig.root, strict=True)]
        norm = math.hypot(*direction) or 1.0
        target = tuple(
            r + c / norm * reach * (1.0 - shortfall) for r, c in zip(rig.root, direction, strict=True)
        )
        if rig.upper_length and rig.lower_length:
            near.append(rig._replace(target=target))
    _, offenders, _, _ = _errors(near)
    assert not offenders, offenders[:3]


def test_pole_hints_close_to_the_line():
    """Pole hints 1e-7 x scale off the line (past tolerance 1e-9, so they do steer): the plain
    projection would lose ~1e-9 of the direction to cancellation; the exact cross product keeps it."""
    _, offenders, left_out, count = _errors(random_rigs(1000, 4, pole_kinds=("just_off_line", "near_line")))
    assert not offenders, offenders[:3]
    assert left_out <= count // 100


def test_the_sweep_catches_a_plain_pole_projection():
    """The same comparison fails a joint whose pole direction is the plain projection
    q - (q.f) f in floats (cancellation: ~ulp x |q| / |q_perp| of the direction): the tests can
    tell that fault from the solver's exact cross product. (The textbook sqrt(1 - cos^2), which
    contract D8 rules out, errs by ~ulp / sin t only: past 1e-10 only within ~1e-12 of full
    extension, inside D8's 5e-8 band, so it is no test of the sweep.)"""
    worst = 0.0
    for rig in random_rigs(
        300, 5, pole_kinds=("just_off_line",), distance_kinds=("inside",), tolerances=(1e-9,)
    ):
        reference = solve_reference(*rig)
        if reference.root_margin <= DECISION_BAND or reference.line_margin <= DECISION_BAND:
            continue
        forward = [float(f) for f in reference.forward]
        q = [p - r for p, r in zip(rig.pole_hint, rig.root, strict=True)]
        along = sum(x * f for x, f in zip(q, forward, strict=True))
        plain = [x - along * f for x, f in zip(q, forward, strict=True)]
        norm = math.hypot(*plain)
        pole = [x / norm for x in plain]
        exact_offset = [float(j - Decimal(r)) for j, r in zip(reference.joint, rig.root, strict=True)]
        cosine_part = sum(o * f for o, f in zip(exact_offset, forward, strict=True))
        sine_part = math.hypot(*[o - cosine_part * f for o, f in zip(exact_offset, forward, strict=True)])
        joint = tuple(
            r + cosine_part * f + sine_part * u for r, f, u in zip(rig.root, forward, pole, strict=True)
        )
        scale = max(rig.upper_length + rig.lower_length, math.hypot(*rig.root))
        worst = max(worst, distance_to(joint, reference.joint) / scale)
    assert worst > 10 * BOUND

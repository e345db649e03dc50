# SPDX-License-Identifier: GPL-3.0-or-later
"""Twist (contract D9) and softness (contract D10), and that leaving them at 0 changes no bit."""

import hashlib
import itertools
import json
import math
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from solver_rigs import PROPERTY_SETTINGS, random_rigs, rigs

from solver import solve_two_bone_ik

DIGESTS = pathlib.Path(__file__).parent / "data" / "solve_digests.json"


def _sub(p, q):
    return [x - y for x, y in zip(p, q, strict=True)]


def _dot(p, q):
    return math.fsum(x * y for x, y in zip(p, q, strict=True))


def _cross(u, v):
    return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]


def _digest(result):
    text = " ".join(c.hex() for c in result.joint + result.end) + (" 1" if result.reachable else " 0")
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def test_twist_and_softness_at_0_change_no_bit():
    """2000 rigs of every kind: the same bits with twist=0 and softness=0 given or left out, and the
    bits recorded when the two settings were added (tests/solver/data/solve_digests.json; they
    equal the earlier solver's except for pole hints within 1e-4 rad of the line, now rounded once
    from exact arithmetic, and targets within 1e-30 of the chain from the root at tolerance 0)."""
    recorded = json.loads(DIGESTS.read_text())
    rigs_ = list(random_rigs(recorded["count"], recorded["seed"]))
    for rig, digest in zip(rigs_, recorded["digests"], strict=True):
        plain = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance)
        off = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance, twist=0.0, softness=0.0)
        assert _digest(plain) == _digest(off) == digest, rig


@PROPERTY_SETTINGS
@given(rigs(distance_kinds=("inside", "beyond", "inside_fold")), st.floats(-10.0, 10.0))
def test_twist_turns_the_joint_about_the_root_target_axis_by_the_angle(rig, twist):
    """The joint keeps its distance along and from the root-target axis and turns about it by
    exactly ``twist``, right-handed about root -> target; the end does not move."""
    plain = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance)
    turned = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance, twist=twist)
    scale = max(rig.upper_length + rig.lower_length, math.hypot(*rig.root))
    assert turned.end == plain.end and turned.reachable is plain.reachable
    axis = _sub(plain.end, rig.root)
    length = math.hypot(*axis)
    if length < 1e-6 * scale:
        return  # the end at the root: the axis is +X by D2, not this direction
    forward = [c / length for c in axis]
    before, after = _sub(plain.joint, rig.root), _sub(turned.joint, rig.root)
    assert abs(_dot(before, forward) - _dot(after, forward)) <= 1e-12 * scale
    u = [c - _dot(before, forward) * f for c, f in zip(before, forward, strict=True)]
    v = [c - _dot(after, forward) * f for c, f in zip(after, forward, strict=True)]
    radius = math.hypot(*u)
    assert abs(radius - math.hypot(*v)) <= 1e-12 * scale
    if radius > 1e-3 * scale:
        angle = math.atan2(_dot(_cross(u, v), forward), _dot(u, v))
        assert abs(math.remainder(angle - twist, math.tau)) <= 1e-9 * scale / radius


def test_twist_of_a_quarter_turn_is_right_handed():
    """Target along +X, pole hint +Y: a quarter turn puts the knee on +Z."""
    result = solve_two_bone_ik((0, 0, 0), (6, 0, 0), (0, 1, 0), 5, 5, twist=math.pi / 2)
    assert math.dist(result.joint, (3, 0, 4)) <= 1e-14


@PROPERTY_SETTINGS
@given(rigs(), st.floats(0.0, 1.0))
def test_softness_keeps_bone_lengths_and_never_overshoots(rig, softness):
    """Bones keep their lengths, the end stays on the root-target ray and never passes the
    target, and it stops no further from the target than softness allows (contract D10)."""
    plain = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance)
    soft = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance, softness=softness)
    a, b = rig.upper_length, rig.lower_length
    scale = max(a + b, math.hypot(*rig.root))
    assert abs(math.dist(soft.joint, rig.root) - a) <= 1e-12 * scale
    assert abs(math.dist(soft.end, soft.joint) - b) <= 1e-12 * scale
    assert soft.reachable is plain.reachable  # reachable is the plain solve's reach (D2)
    reach_plain = math.dist(plain.end, rig.root)
    reach_soft = math.dist(soft.end, rig.root)
    assert reach_soft <= reach_plain + 1e-12 * scale  # never past the plain solve, so never past the target
    width = min(softness * (a + b), 2 * min(a, b))
    assert reach_plain - reach_soft <= width * math.exp(-1) + 1e-12 * scale


def _knee_angle(a, b, distance, softness):
    result = solve_two_bone_ik((0, 0, 0), (distance, 0, 0), (0, 1, 0), a, b, softness=softness)
    upper = result.joint
    lower = _sub(result.end, result.joint)
    return math.atan2(math.hypot(*_cross(upper, lower)), _dot(upper, lower))


@pytest.mark.parametrize("softness", [0.02, 0.1, 0.5])
@pytest.mark.parametrize("a, b", [(1.0, 1.0), (0.45, 0.55), (0.3, 0.7)])
def test_softness_bounds_the_knee_angle_slope(a, b, softness):
    """A target sliding out of reach 1 mm per step: the knee angle changes by a bounded amount per
    step (about 1 / (softness (a + b)) radians per metre), where the plain solve jumps."""
    reach = a + b
    steps = [reach * (0.5 + 1e-3 * i) for i in range(1000)]
    soft = [_knee_angle(a, b, d, softness) for d in steps]
    plain = [_knee_angle(a, b, d, 0.0) for d in steps]
    soft_jump = max(abs(x - y) for x, y in itertools.pairwise(soft))
    plain_jump = max(abs(x - y) for x, y in itertools.pairwise(plain))
    bound = 2.5 * 1e-3 * reach / (softness * reach)
    assert soft_jump <= max(bound, 0.02), (soft_jump, bound)
    assert plain_jump > soft_jump


def test_softness_formula():
    """The end's distance is reach - w + w (1 - exp(-(d - (reach - w)) / w)) in the soft zone."""
    a = b = 1.0
    softness = 0.1
    width = softness * (a + b)
    for d in (1.7, 1.8, 1.85, 1.9, 2.0, 2.5, 10.0):
        expected = d if d <= 2 - width else 2 - width + width * (1 - math.exp(-(d - (2 - width)) / width))
        result = solve_two_bone_ik((0, 0, 0), (d, 0, 0), (0, 1, 0), a, b, softness=softness)
        assert result.end[0] == pytest.approx(expected, rel=1e-15, abs=1e-15)

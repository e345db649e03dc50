# SPDX-License-Identifier: GPL-3.0-or-later
"""Random rigs for the solver tests: hypothesis strategies and seeded generators.

Rigs span 0.001 to 1000 units, roots at the origin or far from it, and every degenerate kind the
contract names: targets at, near, or exactly at the reach and fold distances (one ulp either side),
at or within 1e-12 of the root; pole hints on, within 1e-12 of, or just off the line, at the root
or at the target; equal bones and zero-length bones.
"""

from __future__ import annotations

import math
import random
from typing import NamedTuple

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# The property tests' settings: many examples, reproducible, no example database.
PROPERTY_SETTINGS = settings(
    max_examples=150,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


class Rig(NamedTuple):
    root: tuple
    target: tuple
    pole_hint: tuple
    upper_length: float
    lower_length: float
    tolerance: float


LENGTH_KINDS = ("unequal", "equal", "zero_upper", "zero_lower", "very_unequal")
DISTANCE_KINDS = (
    "inside",
    "beyond",
    "inside_fold",
    "at_reach",
    "ulp_below_reach",
    "ulp_above_reach",
    "at_fold",
    "ulp_below_fold",
    "ulp_above_fold",
    "at_root",
    "near_root",
)
POLE_KINDS = ("random", "on_line", "near_line", "just_off_line", "at_root", "at_target", "far")
TOLERANCES = (1e-9, 1e-9, 1e-6, 0.0, 1e-12)
# Distances that must be exact: the target sits on an axis through the root (exact subtraction).
_EXACT_KINDS = {
    "at_reach",
    "ulp_below_reach",
    "ulp_above_reach",
    "at_fold",
    "ulp_below_fold",
    "ulp_above_fold",
}


def make_rig(
    unit: float,
    scale: float,
    upper: float,
    lower: float,
    length_kind: str,
    root_reach: float,
    root_uniform: tuple,
    direction: tuple,
    axis: int,
    fraction: float,
    distance_kind: str,
    pole_kind: str,
    pole_uniform: tuple,
    line_position: float,
    tolerance: float,
) -> Rig:
    """A rig from plain random numbers (shared by the hypothesis strategy and the generators)."""
    a, b = scale * upper, scale * lower
    if length_kind == "equal":
        b = a
    elif length_kind == "zero_upper":
        a = 0.0
    elif length_kind == "zero_lower":
        b = 0.0
    elif length_kind == "very_unequal":
        b = a * 1e-3
    reach, fold = a + b, abs(a - b)
    root = [c * root_reach for c in root_uniform]

    if distance_kind in _EXACT_KINDS:
        distance = {
            "at_reach": reach,
            "ulp_below_reach": math.nextafter(reach, 0.0),
            "ulp_above_reach": math.nextafter(reach, math.inf),
            "at_fold": fold,
            "ulp_below_fold": math.nextafter(fold, 0.0),
            "ulp_above_fold": math.nextafter(fold, math.inf),
        }[distance_kind]
        root[axis] = 0.0
        target = list(root)
        target[axis] = distance if unit >= 0.5 else -distance
        direction = tuple(float(i == axis) * (1.0 if unit >= 0.5 else -1.0) for i in range(3))
    else:
        distance = {
            "inside": fold + fraction * (reach - fold),
            "beyond": reach * (1.0 + 3.0 * fraction),
            "inside_fold": fold * fraction,
            "at_root": 0.0,
            "near_root": 1e-12 * reach * fraction,
        }[distance_kind]
        norm = math.hypot(*direction)  # not sum(): Python 3.12 made it compensated, and rigs must not vary
        direction = tuple(c / norm for c in direction) if norm > 1e-3 else (1.0, 0.0, 0.0)
        target = [r + distance * c for r, c in zip(root, direction, strict=True)]

    # A unit vector perpendicular to the line, for near-line poles.
    helper = (0.0, 0.0, 1.0) if abs(direction[2]) < 0.9 else (1.0, 0.0, 0.0)
    normal = np.cross(direction, helper)
    perpendicular = tuple(float(c) for c in normal / np.linalg.norm(normal))
    on_line = [r + line_position * scale * c for r, c in zip(root, direction, strict=True)]
    if pole_kind == "random":
        pole = [r + 2.0 * scale * c for r, c in zip(root, pole_uniform, strict=True)]
    elif pole_kind == "on_line":
        pole = on_line
    elif pole_kind == "near_line":
        pole = [p + 1e-12 * scale * c for p, c in zip(on_line, perpendicular, strict=True)]
    elif pole_kind == "just_off_line":
        pole = [p + 1e-7 * scale * c for p, c in zip(on_line, perpendicular, strict=True)]
    elif pole_kind == "at_root":
        pole = list(root)
    elif pole_kind == "at_target":
        pole = list(target)
    else:  # far
        pole = [r + 1e3 * scale * c for r, c in zip(root, pole_uniform, strict=True)]
    return Rig(tuple(root), tuple(target), tuple(pole), a, b, tolerance)


_unit = st.floats(0.0, 1.0)
_signed = st.floats(-1.0, 1.0)
_signed3 = st.tuples(_signed, _signed, _signed)


@st.composite
def rigs(draw, distance_kinds=DISTANCE_KINDS, pole_kinds=POLE_KINDS, tolerances=TOLERANCES) -> Rig:
    """Hypothesis strategy for one rig of any kind."""
    scale = 10.0 ** draw(st.floats(-3.0, 3.0))
    return make_rig(
        unit=draw(_unit),
        scale=scale,
        upper=draw(st.floats(0.05, 1.0)),
        lower=draw(st.floats(0.05, 1.0)),
        length_kind=draw(st.sampled_from(LENGTH_KINDS)),
        root_reach=draw(st.sampled_from((0.0, scale, 100.0 * scale, 1000.0))),
        root_uniform=draw(_signed3),
        direction=draw(_signed3),
        axis=draw(st.integers(0, 2)),
        fraction=draw(_unit),
        distance_kind=draw(st.sampled_from(distance_kinds)),
        pole_kind=draw(st.sampled_from(pole_kinds)),
        pole_uniform=draw(_signed3),
        line_position=draw(st.floats(-2.0, 3.0)),
        tolerance=draw(st.sampled_from(tolerances)),
    )


def random_rigs(
    count: int, seed: int, distance_kinds=DISTANCE_KINDS, pole_kinds=POLE_KINDS, tolerances=TOLERANCES
):
    """``count`` rigs from a seeded generator (for the accuracy sweep: many rigs, no shrinking)."""
    rng = random.Random(seed)

    def signed3():
        return tuple(rng.uniform(-1.0, 1.0) for _ in range(3))

    for _ in range(count):
        scale = 10.0 ** rng.uniform(-3.0, 3.0)
        yield make_rig(
            unit=rng.random(),
            scale=scale,
            upper=rng.uniform(0.05, 1.0),
            lower=rng.uniform(0.05, 1.0),
            length_kind=rng.choice(LENGTH_KINDS),
            root_reach=rng.choice((0.0, scale, 100.0 * scale, 1000.0)),
            root_uniform=signed3(),
            direction=signed3(),
            axis=rng.randrange(3),
            fraction=rng.random(),
            distance_kind=rng.choice(distance_kinds),
            pole_kind=rng.choice(pole_kinds),
            pole_uniform=signed3(),
            line_position=rng.uniform(-2.0, 3.0),
            tolerance=rng.choice(tolerances),
        )


def random_rig_arrays(count: int, seed: int):
    """Arrays (roots, targets, pole_hints, upper_lengths, lower_lengths) of ``count`` rows for the
    batch tests: ordinary rows with every kind of degenerate row mixed in (about 1 in 4)."""
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-3.0, 3.0, count)
    a = scale * rng.uniform(0.05, 1.0, count)
    b = scale * rng.uniform(0.05, 1.0, count)
    roots = rng.uniform(-1.0, 1.0, (count, 3)) * (scale * rng.choice([0.0, 1.0, 100.0], count))[:, None]
    direction = rng.normal(size=(count, 3))
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    distance = (a + b) * rng.uniform(0.0, 1.3, count)
    targets = roots + direction * distance[:, None]
    poles = roots + rng.uniform(-2.0, 2.0, (count, 3)) * scale[:, None]

    kind = rng.integers(0, 16, count)
    b[kind == 0] = a[kind == 0]  # equal bones
    a[kind == 1] = 0.0  # zero upper bone
    b[kind == 2] = 0.0  # zero lower bone
    targets[kind == 3] = roots[kind == 3]  # target at the root
    equal_at_root = kind == 4
    b[equal_at_root] = a[equal_at_root]
    targets[equal_at_root] = roots[equal_at_root]
    poles[kind == 5] = roots[kind == 5]  # pole at the root
    on_line = kind == 6
    poles[on_line] = roots[on_line] + (targets[on_line] - roots[on_line]) * 0.7
    near = kind == 7
    poles[near] = roots[near] + (targets[near] - roots[near]) * 1.5 + 1e-12 * scale[near, None]
    just_off = kind == 8
    poles[just_off] = (
        roots[just_off] + (targets[just_off] - roots[just_off]) * 0.5 + 1e-7 * scale[just_off, None]
    )
    axis_aligned = kind == 9  # fallback axis ties: forward along an axis or a diagonal
    axes = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [1.0, 1.0, 0], [1.0, 1.0, 1.0], [0, -1.0, 1.0]])
    pick = axes[rng.integers(0, len(axes), axis_aligned.sum())]
    targets[axis_aligned] = roots[axis_aligned] + pick * scale[axis_aligned, None]
    poles[axis_aligned] = roots[axis_aligned] + pick * 2.0 * scale[axis_aligned, None]
    at_reach = kind == 10
    targets[at_reach] = roots[at_reach] + direction[at_reach] * (a + b)[at_reach, None]
    return roots, targets, poles, a, b

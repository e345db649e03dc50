# SPDX-License-Identifier: GPL-3.0-or-later
"""What the solver accepts (docs/contract.md D1, D4): 3 real numbers per point, in the supported
range; anything else is a ValueError naming the argument (and, in the batch form, the row)."""

import itertools
import math
from collections import OrderedDict
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from solver import solve_two_bone_ik, solve_two_bone_ik_batch

GOOD = ((0.0, 0.0, 0.0), (1.5, 0.0, 0.0), (0.0, 1.0, 0.0))
NAMES = ("root", "target", "pole_hint")


def _message(position, point, *lengths, **settings):
    points = list(GOOD)
    points[position] = point
    with pytest.raises(ValueError) as error:
        solve_two_bone_ik(*points, *(lengths or (1.0, 1.0)), **settings)
    return str(error.value)


NOT_POINTS = {
    "bytes": b"abc",
    "bytearray": bytearray(b"\x00\x00\x00"),
    "memoryview": memoryview(b"abc"),
    "str": "123",
    "dict": {0: 1.0, 1: 2.0, 2: 3.0},
    "ordered-dict": OrderedDict.fromkeys((1.0, 2.0, 3.0)),
    "set": {1.0, 2.0, 3.0},
    "frozenset": frozenset((1.0, 2.0, 3.0)),
    "masked-array": np.ma.array([0.0, 1.0, 0.0], mask=[False, True, False]),
}


@pytest.mark.parametrize("position", range(3), ids=NAMES)
@pytest.mark.parametrize("point", NOT_POINTS.values(), ids=NOT_POINTS.keys())
def test_iterables_that_are_not_points_are_rejected(point, position):
    """Text, bytes, mappings and sets iterate to 3 items but are not points; a mask cannot be honoured."""
    assert _message(position, point).startswith(f"{NAMES[position]} must be 3 real numbers")


@pytest.mark.parametrize(
    "point",
    [(0.0, 0.0), [0.0] * 4, (), iter((0.0, 1.0, 0.0, 0.0)), itertools.count()],
    ids=["2", "4", "empty", "iterator-4", "endless"],
)
def test_wrong_counts_are_rejected(point):
    assert _message(2, point).startswith("pole_hint must be 3 real numbers")


@pytest.mark.parametrize("coordinate", [None, "1", b"1", 1j, [1.0], np.ma.masked], ids=str)
def test_coordinates_must_be_real_numbers(coordinate):
    assert _message(1, (1.5, coordinate, 0.0)).startswith("target must be a real number")


@pytest.mark.parametrize(
    "convert",
    [tuple, list, np.array, lambda c: (Decimal(x) for x in c), lambda c: [Fraction(x) for x in c]],
    ids=["tuple", "list", "numpy", "decimal-generator", "fraction"],
)
def test_any_real_3_sequence_gives_the_same_bits(convert):
    points = ((1, 2, 3), (7.5, 2, 3), (1, 9, 3.25))
    expected = solve_two_bone_ik(*points, 5.0, 4.0)
    assert solve_two_bone_ik(*(convert(p) for p in points), 5, Fraction(4)) == expected


@pytest.mark.parametrize(
    "arguments, settings, name",
    [
        ((GOOD[0], (1e41, 0, 0), GOOD[2], 1, 1), {}, "target must be finite and from -1e\\+40 to 1e\\+40"),
        ((GOOD[0], GOOD[1], (0, -math.inf, 0), 1, 1), {}, "pole_hint must be finite"),
        ((*GOOD, 2e40, 1), {}, "upper_length must be finite and from 0 to 1e\\+40"),
        ((*GOOD, 4e-31, 5e-31), {}, "upper_length \\+ lower_length must be at least 1e-30"),
        ((*GOOD, 0, 0), {}, "at least 1e-30"),
        ((*GOOD, 1, 1), {"twist": math.nan}, "twist must be finite"),
        ((*GOOD, 1, 1), {"twist": 0j}, "twist must be a real number"),
        ((*GOOD, 1, 1), {"softness": 0j}, "softness must be a real number"),
        ((*GOOD, 1, 1), {"twist": np.zeros(2)}, "twist must be a real number"),
        ((*GOOD, 1, 1), {"softness": math.nan}, "softness must be finite and from 0 to 1"),
        ((*GOOD, 1, 1), {"softness": 1.5}, "softness must be finite and from 0 to 1"),
        ((*GOOD, 1, 1), {"softness": -0.1}, "softness must be finite and from 0"),
        ((*GOOD, 1, 1), {"tolerance": None}, "tolerance must be a real number"),
    ],
)
def test_outside_the_supported_range_raises_naming_the_argument(arguments, settings, name):
    with pytest.raises(ValueError, match=name):
        solve_two_bone_ik(*arguments, **settings)


@pytest.mark.parametrize("unit", [1e-29, 1.0, 1e38])
@pytest.mark.parametrize("origin", [0.0, 1e38])
@pytest.mark.parametrize("pole_offset", [1.0, 1e-7], ids=["pole-off-line", "pole-near-line"])
def test_the_edges_of_the_supported_range_solve_exactly(unit, origin, pole_offset):
    """Chains of 1e-29 to 5e38 units (float32 holds up to 3.4e38), at and far from the origin, with
    a pole hint off or within 1e-4 rad of the line (exact path): the 5-5-6 triangle."""
    root = (origin, origin, 0.0)
    target = (origin + 6 * unit, origin, 0.0)
    pole_hint = (origin + 3 * unit, origin + pole_offset * unit, 0.0)
    result = solve_two_bone_ik(root, target, pole_hint, 5 * unit, 5 * unit, tolerance=1e-12)
    scale = max(10 * unit, math.hypot(*root))
    assert math.dist(result.joint, (origin + 3 * unit, origin + 4 * unit, 0)) <= 1e-15 * scale
    assert math.dist(result.end, target) <= 1e-15 * scale
    assert result.reachable


def test_a_tolerance_below_1e_30_counts_as_1e_30():
    """A target 1e-31 of the chain from the root is at the root, even with tolerance 0 (D2)."""
    at_root = solve_two_bone_ik((0, 0, 0), (0, 2e-31, 0), (0, 0, 1), 1.0, 1.0, tolerance=0.0)
    assert at_root.joint == (0.0, 0.0, 1.0)
    beyond = solve_two_bone_ik((0, 0, 0), (0, 1e-29, 0), (0, 0, 1), 1.0, 1.0, tolerance=0.0)
    assert beyond.end == (0.0, 1e-29, 0.0)


# The batch form: the same rules, naming the row.


def _rows(count=10):
    roots = np.zeros((count, 3))
    targets = np.tile([1.5, 0.0, 0.0], (count, 1))
    poles = np.tile([0.0, 1.0, 0.0], (count, 1))
    return [roots, targets, poles, np.ones(count), np.ones(count)]


@pytest.mark.parametrize(
    "index, row, value, message",
    [
        (0, 7, (math.nan, 0, 0), r"roots\[7\] must be finite"),
        (1, 3, (0, 1e41, 0), r"targets\[3\] must be finite"),
        (2, 0, (0, 0, -math.inf), r"pole_hints\[0\] must be finite"),
        (3, 9, -1.0, r"upper_lengths\[9\] must be finite and from 0"),
        (4, 4, math.nan, r"lower_lengths\[4\] must be finite and from 0"),
    ],
)
def test_batch_bad_row_names_argument_and_row(index, row, value, message):
    arrays = _rows()
    arrays[index][row] = value
    with pytest.raises(ValueError, match=message):
        solve_two_bone_ik_batch(*arrays)


def test_batch_first_bad_row_wins_then_the_scalar_order():
    arrays = _rows()
    arrays[0][5] = math.nan
    arrays[4][2] = -1.0
    with pytest.raises(ValueError, match=r"lower_lengths\[2\]"):
        solve_two_bone_ik_batch(*arrays)
    arrays[1][2] = math.nan
    with pytest.raises(ValueError, match=r"targets\[2\]"):
        solve_two_bone_ik_batch(*arrays)


@pytest.mark.parametrize(
    "keywords, message",
    [
        ({"twist": [0.0] * 9 + [math.inf]}, r"twist\[9\] must be finite"),
        ({"twist": [0.0] * 3 + [math.nan] + [0.0] * 6}, r"twist\[3\] must be finite"),
        ({"softness": [math.nan] + [0.0] * 9}, r"softness\[0\] must be finite"),
        ({"softness": [0.0] * 4 + [2.0] + [0.0] * 5}, r"softness\[4\] must be finite and from 0 to 1"),
        ({"tolerance": -1e-9}, "tolerance must be finite and from 0"),
        ({"tolerance": "1e-9"}, "tolerance must be a real number"),
    ],
)
def test_batch_bad_settings(keywords, message):
    with pytest.raises(ValueError, match=message):
        solve_two_bone_ik_batch(*_rows(), **keywords)


@pytest.mark.parametrize(
    "index, value, message",
    [
        (0, np.zeros((10, 2)), r"roots must have shape \(N, 3\)"),
        (0, 0.0, r"roots must have shape \(N, 3\)"),
        (1, np.zeros((9, 3)), r"targets must have shape \(N, 3\)"),
        (3, np.ones(9), r"upper_lengths must be a number or have shape \(10,\)"),
        (4, [["a"]] * 10, "lower_lengths must be an array of real numbers"),
        (0, np.full((10, 3), "1"), "roots must be an array of real numbers"),
        (1, np.ones((10, 3)) * 1j, "targets must be an array of real numbers"),
        (2, np.array([[None, 0, 0]] * 10), "pole_hints must be an array of real numbers"),
        (0, np.ma.masked_array(np.zeros((10, 3))), "roots is a masked array"),
        (0, [[0.0, 0.0, 0.0]] * 9 + [b"\x00\x00\x00"], "roots must hold rows of real numbers"),
        (3, 0.0, r"upper_lengths\[0\] \+ lower_lengths must be at least 1e-30"),
    ],
)
def test_batch_bad_arguments(index, value, message):
    arrays = _rows()
    arrays[index] = value
    if index == 3 and np.ndim(value) == 0:
        arrays[4] = 0.0
    with pytest.raises(ValueError, match=message):
        solve_two_bone_ik_batch(*arrays)

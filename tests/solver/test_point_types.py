# SPDX-License-Identifier: GPL-3.0-or-later
"""What a point is (SPEC D1, D4): exactly 3 real numbers in order, whichever path solves it.

The scalar form solves tuples, lists and mathutils.Vector inline and validates everything else
first (solver/_validate.py). Iterables that are not points (text, bytes, mappings, sets, masked
arrays) must be rejected on both paths with the same message, naming the argument, and the
batch form must apply the same rules to its rows and elements.
"""

import array
import itertools
import sys
import types
from collections import OrderedDict, namedtuple
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from solver_rigs import rigs

import solver.scalar
from solver import solve_two_bone_ik

PROPERTY_SETTINGS = settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
GOOD = ((0.0, 0.0, 0.0), (1.5, 0.0, 0.0), (0.0, 1.0, 0.0))
ARGUMENT_NAMES = ("root", "target", "pole_hint")


def _solve_with(position, point, **lengths):
    points = list(GOOD)
    points[position] = point
    return solve_two_bone_ik(*points, lengths.get("a", 1.0), lengths.get("b", 1.0))


def _message(position, point, **lengths):
    with pytest.raises(ValueError) as error:
        _solve_with(position, point, **lengths)
    return str(error.value)


# fmt: off
NOT_POINTS = [
    ("bytes", lambda: b"abc"),
    ("bytes-of-zeros", lambda: b"\x00\x00\x00"),
    ("bytearray", lambda: bytearray(b"\x00\x00\x00")),
    ("memoryview", lambda: memoryview(b"abc")),
    ("str-3", lambda: "abc"),
    ("str-2", lambda: "ab"),
    ("str-digits", lambda: "123"),
    ("dict", lambda: {0.0: "x", 1.0: "y", 2.0: "z"}),
    ("dict-of-coordinates", lambda: {0: 1.0, 1: 2.0, 2: 3.0}),
    ("ordered-dict", lambda: OrderedDict.fromkeys((1.0, 2.0, 3.0))),
    ("dict-keys", lambda: {1.0: 0, 2.0: 0, 3.0: 0}.keys()),
    ("set", lambda: {1.0, 2.0, 3.0}),
    ("frozenset", lambda: frozenset((1.0, 2.0, 3.0))),
]
# fmt: on


@pytest.mark.parametrize("position", range(3), ids=ARGUMENT_NAMES)
@pytest.mark.parametrize("make", [m for _, m in NOT_POINTS], ids=[i for i, _ in NOT_POINTS])
def test_iterables_that_are_not_points_are_rejected_naming_the_argument(make, position):
    """Text, bytes-like objects, mappings and sets iterate to 3 items but are not points."""
    point = make()
    message = _message(position, point)
    name = ARGUMENT_NAMES[position]
    assert message.startswith(f"{name} must be a 3-sequence of real numbers"), message
    assert message.endswith(f", got {point!r}")  # the value given, not a part of it


@pytest.mark.parametrize("make", [m for _, m in NOT_POINTS], ids=[i for i, _ in NOT_POINTS])
def test_fast_and_checked_paths_reject_alike(make):
    """The same message whether the other inputs would take the fast path or the checked one
    (a Fraction length, a tolerance below 2**-100)."""
    point = make()
    fast = _message(0, point)
    assert _message(0, point, a=Fraction(1)) == fast
    with pytest.raises(ValueError) as error:
        solve_two_bone_ik(point, *GOOD[1:], 1.0, 1.0, tolerance=0.0)
    assert str(error.value) == fast


def test_masked_arrays_are_rejected():
    numpy = pytest.importorskip("numpy")
    masked = numpy.ma.array([0.0, 1.0, 0.0], mask=[False, True, False])
    assert "masked" in _message(2, masked) and _message(2, masked).startswith("pole_hint ")
    unmasked = numpy.ma.array([0.0, 1.0, 0.0])  # even with nothing masked: the type is refused
    assert _message(2, unmasked).startswith("pole_hint must be a 3-sequence")
    assert _message(1, [1.5, numpy.ma.masked, 0.0]).startswith("target must be a real number")


@pytest.mark.parametrize(
    "point, count",
    [
        ((0.0, 0.0), "2"),
        ([0.0, 0.0, 0.0, 0.0], "4"),
        ((), "0"),
        (iter((0.0, 1.0, 0.0, 0.0)), "more than 3"),
        (iter((0.0, 1.0)), "2"),
        (itertools.count(), "more than 3"),  # endless: read no further than a 4th item
    ],
    ids=["tuple-2", "list-4", "empty", "iterator-4", "iterator-2", "endless-iterator"],
)
def test_wrong_counts_are_reported_as_given(point, count):
    message = _message(2, point)
    assert message.startswith(f"pole_hint must have 3 coordinates, got {count}: "), message


@pytest.mark.parametrize(
    "coordinate",
    [None, "1", b"1", bytearray(b"1"), 1j, [1.0], (1.0,)],
    ids=["None", "str", "bytes", "bytearray", "complex", "list", "tuple"],
)
def test_coordinates_must_be_real_numbers(coordinate):
    message = _message(1, (1.5, coordinate, 0.0))
    assert message == f"target must be a real number, got {coordinate!r}"


class _Vector:
    """A stand-in for mathutils.Vector (a C sequence type of float coordinates)."""

    def __init__(self, *coordinates):
        self._coordinates = [float(c) for c in coordinates]

    def __len__(self):
        return len(self._coordinates)

    def __getitem__(self, index):
        return self._coordinates[index]


Point = namedtuple("Point", "x y z")

CONTAINERS = {
    "tuple": tuple,
    "list": list,
    "vector": lambda c: _Vector(*c),
    "namedtuple": lambda c: Point(*c),
    "array": lambda c: array.array("d", c),
    "generator": lambda c: (x for x in c),
    "decimals": lambda c: tuple(Decimal(x) for x in c),
}


def _bits(result):
    return tuple(c.hex() for c in result.joint + result.end), result.reachable


@PROPERTY_SETTINGS
@given(rigs(), st.sampled_from(sorted(CONTAINERS)), st.sampled_from(sorted(CONTAINERS)))
def test_same_bits_whatever_the_containers(rig, first, second):
    """Float points in any container (fast path or checked) give the tuple's bits (SPEC D1, D7).

    (Not so for every number type: the fast path subtracts and squares ints and Fractions in a
    tuple or list exactly before rounding, so beyond 2**26 or for non-binary fractions their last
    bits can differ from the same values converted to float first, both within SPEC D8.)"""
    expected = solve_two_bone_ik(*rig[:5], tolerance=rig.tolerance)
    wrap = CONTAINERS[first], CONTAINERS[second], CONTAINERS[first]
    points = [make(point) for make, point in zip(wrap, rig[:3], strict=True)]
    result = solve_two_bone_ik(*points, rig.upper_length, rig.lower_length, tolerance=rig.tolerance)
    assert _bits(result) == _bits(expected)


def test_mathutils_vector_joins_the_fast_path_with_the_same_bits(monkeypatch):
    """The solver imports no mathutils; the first Vector it meets (checked path) lets later ones
    take the fast path. Either way the bits are the same (SPEC D7)."""
    monkeypatch.setattr(solver.scalar, "_FAST_POINTS", {tuple, list})
    monkeypatch.setitem(sys.modules, "mathutils", types.SimpleNamespace(Vector=_Vector))
    arguments = ((1.0, 2.0, 3.0), (7.0, 2.5, 3.0), (1.0, 9.0, 3.25), 5.0, 4.0)
    expected = solve_two_bone_ik(*arguments)
    vectors = [_Vector(*point) for point in arguments[:3]]
    assert _Vector not in solver.scalar._FAST_POINTS
    first = solve_two_bone_ik(*vectors, *arguments[3:])
    assert _Vector in solver.scalar._FAST_POINTS
    second = solve_two_bone_ik(*vectors, *arguments[3:])
    assert _bits(first) == _bits(second) == _bits(expected)
    # A Vector of the wrong size still gets the checked path's message.
    with pytest.raises(ValueError, match="root must have 3 coordinates, got 2"):
        solve_two_bone_ik(_Vector(1.0, 2.0), *arguments[1:])


def test_other_types_do_not_join_the_fast_path():
    before = set(solver.scalar._FAST_POINTS)
    solve_two_bone_ik(Point(0.0, 0.0, 0.0), array.array("d", (1.5, 0, 0)), _Vector(0, 1, 0), 1.0, 1.0)
    assert solver.scalar._FAST_POINTS == before


@pytest.mark.parametrize("tolerance", [b"1e-9", bytearray(b"1e-9"), None, "1e-9"])
def test_tolerance_must_be_a_real_number(tolerance):
    with pytest.raises(ValueError, match=r"^tolerance must be a real number"):
        solve_two_bone_ik(*GOOD, 1.0, 1.0, tolerance=tolerance)


# The batch form: the same rules for its rows and elements.


def _batch_arrays():
    numpy = pytest.importorskip("numpy")
    roots = numpy.zeros((3, 3))
    targets = numpy.array([[1.5, 0, 0], [0, 1.5, 0], [0, 0, 1.5]])
    poles = numpy.array([[0, 1.0, 0], [1.0, 0, 0], [0, 1.0, 0]])
    return [roots, targets, poles, 1.0, 1.0]


def _batch_message(arguments, **keywords):
    from solver import solve_two_bone_ik_batch

    with pytest.raises(ValueError) as error:
        solve_two_bone_ik_batch(*arguments, **keywords)
    return str(error.value)


def test_batch_none_coordinates_are_not_numbers():
    arguments = _batch_arrays()
    arguments[1] = arguments[1].tolist()
    arguments[1][2][1] = None
    assert _batch_message(arguments) == "targets[2] must be a real number, got None"


@pytest.mark.parametrize("item", ["1", b"1", None], ids=["str", "bytes", "None"])
def test_batch_object_arrays_hold_numbers_only(item):
    numpy = pytest.importorskip("numpy")
    arguments = _batch_arrays()
    arguments[2] = arguments[2].astype(object)
    arguments[2][1, 0] = item
    assert _batch_message(arguments) == f"pole_hints[1] must be a real number, got {item!r}"
    arguments = _batch_arrays()
    arguments[3] = numpy.array([1.0, Decimal(1), item], dtype=object)
    assert _batch_message(arguments) == f"upper_lengths[2] must be a real number, got {item!r}"
    arguments = _batch_arrays()
    arguments[4] = item
    assert _batch_message(arguments).startswith("lower_lengths must be a")


def test_batch_masked_arrays_are_rejected():
    numpy = pytest.importorskip("numpy")
    names = ("roots", "targets", "pole_hints", "upper_lengths", "lower_lengths")
    for index, name in enumerate(names):
        arguments = _batch_arrays()
        arguments[index] = numpy.ma.masked_array(numpy.ones((3, 3) if index < 3 else 3))
        arguments[index][0] = numpy.ma.masked
        assert _batch_message(arguments) == f"{name} is a masked array: the solver cannot honour its mask"
    arguments = _batch_arrays()
    arguments[0] = [numpy.ma.array([0.0, 0.0, 0.0], mask=[0, 1, 0])] * 3
    assert _batch_message(arguments).startswith("roots[0] must be a 3-sequence of real numbers")


@pytest.mark.parametrize(
    "row",
    [b"\x00\x00\x00", bytearray(b"\x00\x00\x00"), memoryview(b"\x00\x00\x00")],
    ids=["bytes", "bytearray", "memoryview"],
)
def test_batch_rows_that_are_not_points(row):
    arguments = _batch_arrays()
    arguments[0] = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], row]
    message = _batch_message(arguments)
    assert message.startswith("roots[2] must be a 3-sequence of real numbers"), message


def test_batch_tolerance_bytes_rejected():
    assert _batch_message(_batch_arrays(), tolerance=bytearray(b"1e-9")).startswith(
        "tolerance must be a real number"
    )

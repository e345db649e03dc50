# SPDX-License-Identifier: GPL-3.0-or-later
"""solve_two_bone_ik_batch: every row is the scalar solve of that row, errors name the first bad row."""

import math

import numpy as np
import pytest
from solver_rigs import random_rig_arrays, random_rigs

from solver import TwoBoneIKBatchResult, solve_two_bone_ik, solve_two_bone_ik_batch
from solver.batch import CHUNK_ROWS


def _scalar_rows(roots, targets, poles, upper, lower, tolerance=1e-9):
    upper = np.broadcast_to(upper, (len(roots),))
    lower = np.broadcast_to(lower, (len(roots),))
    joints, ends, reachable = [], [], []
    for row in zip(
        roots.tolist(), targets.tolist(), poles.tolist(), upper.tolist(), lower.tolist(), strict=True
    ):
        result = solve_two_bone_ik(*row, tolerance=tolerance)
        joints.append(result.joint)
        ends.append(result.end)
        reachable.append(result.reachable)
    return np.array(joints), np.array(ends), np.array(reachable)


def _assert_rows_equal(batch, roots, targets, poles, upper, lower, tolerance=1e-9):
    joints, ends, reachable = _scalar_rows(roots, targets, poles, upper, lower, tolerance)
    # Equal numbers, not merely close: same operations in the same order, same branches.
    np.testing.assert_array_equal(batch.joints, joints)
    np.testing.assert_array_equal(batch.ends, ends)
    np.testing.assert_array_equal(batch.reachable, reachable)


def test_batch_matches_scalar_on_100k_rows_with_degenerate_ones():
    """1e5 rows, 0.001 to 1000 units, about a quarter degenerate (equal or zero bones, targets
    and poles at the root, poles on and near the line, fallback-axis ties, targets at full reach)."""
    arrays = random_rig_arrays(100_000, 21)
    batch = solve_two_bone_ik_batch(*arrays)
    _assert_rows_equal(batch, *arrays)


@pytest.mark.parametrize("tolerance", [0.0, 1e-6, 0.5])
def test_batch_matches_scalar_at_other_tolerances(tolerance):
    """tolerance 0 sends every chunk down the scaled path; 0.5 puts many targets 'at the root'."""
    arrays = random_rig_arrays(5_000, 22)
    _assert_rows_equal(solve_two_bone_ik_batch(*arrays, tolerance=tolerance), *arrays, tolerance=tolerance)


def test_batch_matches_scalar_on_hypothesis_style_rigs():
    """The rigs of the property tests (exact-distance kinds, near-line poles) as one batch."""
    rigs = list(random_rigs(3_000, 23, tolerances=(1e-9,)))
    arrays = [np.array([rig[i] for rig in rigs], dtype=float) for i in range(5)]
    _assert_rows_equal(solve_two_bone_ik_batch(*arrays), *arrays)


def test_absurd_rows_mixed_with_everyday_ones():
    """Rows at 1e300, 1e-300 and 2**1010 in the same chunk as everyday rows: per row, the scalar
    form's answer (its scaled path for the absurd rows, its fast path for the others)."""
    roots, targets, poles, upper, lower = (np.array(x) for x in random_rig_arrays(3_000, 24))
    for start, factor in ((0, 1e300), (1, 1e-300), (2, 2.0**1010)):
        rows = slice(start, None, 7)
        size = np.abs(np.concatenate([roots, targets, poles], axis=1)[rows]).max(axis=1)
        pick = np.arange(len(roots))[rows][size < 1e307 / factor]
        assert len(pick) > 100
        for array in (roots, targets, poles):
            array[pick] *= factor
        upper[pick] *= factor
        lower[pick] *= factor
    lower[(upper == 0) & (lower == 0)] = 1.0
    batch = solve_two_bone_ik_batch(roots, targets, poles, upper, lower)
    assert np.isfinite(batch.joints).all() and np.isfinite(batch.ends).all()
    _assert_rows_equal(batch, roots, targets, poles, upper, lower)


def test_scalar_lengths_and_shapes():
    roots, targets, poles, _, _ = random_rig_arrays(1_000, 25)
    batch = solve_two_bone_ik_batch(roots, targets, poles, 0.5, 0.25)
    assert isinstance(batch, TwoBoneIKBatchResult)
    assert batch.joints.shape == batch.ends.shape == (1_000, 3)
    assert batch.reachable.shape == (1_000,)
    assert batch.joints.dtype == batch.ends.dtype == np.float64 and batch.reachable.dtype == bool
    _assert_rows_equal(batch, roots, targets, poles, 0.5, 0.25)


def test_inputs_of_other_dtypes_and_lists():
    """float32 and int arrays and nested lists are converted to float64; inputs are not modified."""
    roots = np.zeros((3, 3), dtype=np.float32)
    targets = np.array([[6, 0, 0], [0, 20, 0], [0, 0, 0]])
    poles = [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    before = targets.copy()
    batch = solve_two_bone_ik_batch(roots, targets, poles, [5, 5, 2], np.array([5, 5, 2], dtype=np.int32))
    np.testing.assert_array_equal(batch.joints, [[3, 4, 0], [0, 5, 0], [0, 0, 2]])
    np.testing.assert_array_equal(batch.ends, [[6, 0, 0], [0, 10, 0], [0, 0, 0]])
    np.testing.assert_array_equal(batch.reachable, [True, False, True])
    np.testing.assert_array_equal(targets, before)


def test_empty_batch():
    empty = np.empty((0, 3))
    batch = solve_two_bone_ik_batch(empty, empty, empty, np.empty(0), 1.0)
    assert batch.joints.shape == (0, 3) and batch.reachable.shape == (0,)


def test_rows_across_chunks():
    """A batch longer than one chunk, with the second chunk on the scaled path only."""
    count = CHUNK_ROWS + 100
    roots, targets, poles, upper, lower = (np.array(x) for x in random_rig_arrays(count, 26))
    targets[CHUNK_ROWS + 5] = roots[CHUNK_ROWS + 5] + 1e250  # out of the fast range
    arrays = roots, targets, poles, upper, lower
    _assert_rows_equal(solve_two_bone_ik_batch(*arrays), *arrays)


def _rows(count=10):
    roots, targets, poles, upper, lower = random_rig_arrays(count, 27)
    upper[:] = 1.0
    lower[:] = 1.0
    return [roots.copy(), targets.copy(), poles.copy(), upper.copy(), lower.copy()]


@pytest.mark.parametrize(
    "index, row, value, message",
    [
        (0, 7, (math.nan, 0, 0), r"roots\[7\] must be finite"),
        (1, 3, (0, math.inf, 0), r"targets\[3\] must be finite"),
        (2, 0, (0, 0, -math.inf), r"pole_hints\[0\] must be finite"),
        (3, 9, -1.0, r"upper_lengths\[9\] must be a finite length >= 0"),
        (4, 4, math.nan, r"lower_lengths\[4\] must be a finite length >= 0"),
    ],
)
def test_bad_row_names_argument_and_row(index, row, value, message):
    arrays = _rows()
    arrays[index][row] = value
    with pytest.raises(ValueError, match=message):
        solve_two_bone_ik_batch(*arrays)


def test_first_bad_row_wins_then_the_scalar_order():
    """Row 2 has a bad length and row 5 a bad root: row 2 is named. In one row, the root is named
    before the length, as the scalar form would."""
    arrays = _rows()
    arrays[0][5] = math.nan
    arrays[4][2] = -1.0
    with pytest.raises(ValueError, match=r"lower_lengths\[2\]"):
        solve_two_bone_ik_batch(*arrays)
    arrays[1][2] = math.nan
    with pytest.raises(ValueError, match=r"targets\[2\]"):
        solve_two_bone_ik_batch(*arrays)


def test_both_lengths_zero_and_bad_rows_past_the_first_chunk():
    arrays = _rows(CHUNK_ROWS + 10)
    arrays[3][CHUNK_ROWS + 4] = 0.0
    arrays[4][CHUNK_ROWS + 4] = 0.0
    row = CHUNK_ROWS + 4
    with pytest.raises(ValueError, match=rf"upper_lengths\[{row}\] and lower_lengths\[{row}\] are both 0"):
        solve_two_bone_ik_batch(*arrays)


def test_scalar_length_bad():
    roots, targets, poles, _, _ = _rows()
    with pytest.raises(ValueError, match=r"upper_lengths\[0\]"):
        solve_two_bone_ik_batch(roots, targets, poles, -1.0, 1.0)
    with pytest.raises(ValueError, match=r"both 0"):
        solve_two_bone_ik_batch(roots, targets, poles, 0.0, 0.0)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda a: a.__setitem__(0, np.zeros((10, 2))), r"roots must have shape \(N, 3\)"),
        (lambda a: a.__setitem__(1, np.zeros((9, 3))), r"targets has 9 rows but roots has 10"),
        (lambda a: a.__setitem__(2, np.zeros(30)), r"pole_hints must have shape \(N, 3\)"),
        (lambda a: a.__setitem__(3, np.ones(9)), r"upper_lengths must be a scalar or have shape \(10,\)"),
        (lambda a: a.__setitem__(4, [["a"]] * 10), r"lower_lengths must be an array of real numbers"),
        (lambda a: a.__setitem__(0, np.full((10, 3), "1")), r"roots must be an array of real numbers"),
        (lambda a: a.__setitem__(1, np.ones((10, 3)) * 1j), r"targets must be an array of real numbers"),
    ],
)
def test_bad_arguments(change, message):
    arrays = _rows()
    change(arrays)
    with pytest.raises(ValueError, match=message):
        solve_two_bone_ik_batch(*arrays)


@pytest.mark.parametrize("tolerance", [-1e-9, math.nan, math.inf, "1e-9", None])
def test_bad_tolerance(tolerance):
    with pytest.raises(ValueError, match="tolerance"):
        solve_two_bone_ik_batch(*_rows(), tolerance=tolerance)


def test_a_chain_beyond_the_float_range_names_its_row():
    roots = np.array([[0.0, 0, 0], [1.7e308, 0, 0]])
    targets = np.array([[1.0, 0, 0], [1.7e308, 1.5e308, 0]])
    poles = np.array([[0.0, 1, 0], [1.79e308, 0.75e308, 0]])
    with pytest.raises(ValueError, match=r"row 1|\[1\]"):
        solve_two_bone_ik_batch(roots, targets, poles, [1.0, 1e308], [1.0, 1e308])

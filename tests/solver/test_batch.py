# SPDX-License-Identifier: GPL-3.0-or-later
"""solve_two_bone_ik_batch: every row is the scalar solve of that row, errors name the first bad row."""

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
    """tolerance 0 counts as 1e-30 (contract D2); 0.5 puts many targets 'at the root'."""
    arrays = random_rig_arrays(5_000, 22)
    _assert_rows_equal(solve_two_bone_ik_batch(*arrays, tolerance=tolerance), *arrays, tolerance=tolerance)


def test_batch_matches_scalar_on_hypothesis_style_rigs():
    """The rigs of the property tests (exact-distance kinds, near-line poles) as one batch."""
    rigs = list(random_rigs(3_000, 23, tolerances=(1e-9,)))
    arrays = [np.array([rig[i] for rig in rigs], dtype=float) for i in range(5)]
    _assert_rows_equal(solve_two_bone_ik_batch(*arrays), *arrays)


@pytest.mark.parametrize("seed", [28, 29])
def test_batch_matches_scalar_with_twist_and_softness_per_row(seed):
    """Per-row twist and softness: the scalar form's numbers to a few ulps (numpy's cos, sin and
    expm1 may round differently from Python's), and exactly on rows where both are 0."""
    arrays = random_rig_arrays(5_000, seed)
    rng = np.random.default_rng(seed)
    twist = np.where(rng.random(5_000) < 0.5, rng.uniform(-7.0, 7.0, 5_000), 0.0)
    softness = np.where(rng.random(5_000) < 0.5, rng.uniform(0.0, 1.0, 5_000), 0.0)
    batch = solve_two_bone_ik_batch(*arrays, twist=twist, softness=softness)
    roots, targets, poles, upper, lower = arrays
    plain = (twist == 0.0) & (softness == 0.0)
    for i in range(5_000):
        row = roots[i].tolist(), targets[i].tolist(), poles[i].tolist(), float(upper[i]), float(lower[i])
        result = solve_two_bone_ik(*row, twist=float(twist[i]), softness=float(softness[i]))
        scale = max(upper[i] + lower[i], np.abs(roots[i]).max())
        if plain[i]:
            assert batch.joints[i].tolist() == list(result.joint) and batch.ends[i].tolist() == list(
                result.end
            )
        else:
            assert np.abs(batch.joints[i] - result.joint).max() <= 1e-14 * scale
            assert np.abs(batch.ends[i] - result.end).max() <= 1e-14 * scale
        assert batch.reachable[i] == result.reachable


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
    """A batch longer than one chunk."""
    arrays = random_rig_arrays(CHUNK_ROWS + 100, 26)
    _assert_rows_equal(solve_two_bone_ik_batch(*arrays), *arrays)

# SPDX-License-Identifier: GPL-3.0-or-later
"""Many two-bone chains at once with numpy: the scalar rules, row by row, without a Python loop.

The only module of the solver that imports numpy; ``solver`` loads it on first use.
"""

from __future__ import annotations

import math
import threading
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._batch_core import Workspace, finish, prepare
from ._limits import HUGE_INPUT, PRESCALE, UNPRESCALE
from ._validate import is_masked, not_a_point, not_a_real

# Rows per pass: each pass makes ~100 numpy calls (~0.3 us each, whatever their size), and its
# ~5 MB of buffers should stay in cache; 16384 was fastest on the benchmark machine.
CHUNK_ROWS = 16384

_FLOAT_MAX = np.finfo(np.float64).max
_POINT_NAMES = ("roots", "targets", "pole_hints")
_PLAIN_ROWS = {list, tuple}
_LENGTH_NAMES = ("upper_lengths", "lower_lengths")


class TwoBoneIKBatchResult(NamedTuple):
    """The solved chains, row i being ``solve_two_bone_ik`` of row i of the inputs.

    Attributes
    ----------
    joints : numpy.ndarray, shape (N, 3), float64
        Joint positions, in the inputs' frame and units.
    ends : numpy.ndarray, shape (N, 3), float64
        End positions.
    reachable : numpy.ndarray, shape (N,), bool
        Per row, True when ``|a - b| - eps <= |target - root| <= a + b + eps`` (contract D2).
    """

    joints: np.ndarray
    ends: np.ndarray
    reachable: np.ndarray


def solve_two_bone_ik_batch(
    roots: ArrayLike,
    targets: ArrayLike,
    pole_hints: ArrayLike,
    upper_lengths: ArrayLike,
    lower_lengths: ArrayLike,
    *,
    tolerance: float = 1e-9,
) -> TwoBoneIKBatchResult:
    """Solve N two-bone chains; row i follows exactly the rules of ``solve_two_bone_ik``.

    Implements the same contract sections as the scalar form ("Function solveTwoBoneIK",
    "Unreachable targets clamp", "Degenerate inputs", D1-D5, D7, D8), with the same branches,
    thresholds and fallback-axis ties; each row's numbers equal the scalar form's. Space-agnostic
    (contract D6): all rows' points in one frame (the Blender side passes armature space). Units are
    the inputs' own (Blender units = metres).

    Parameters
    ----------
    roots, targets, pole_hints : array_like, shape (N, 3)
        Chain roots, targets, and pole hints (points, not directions). Converted to float64;
        as in the scalar form, numbers only: no None, text or bytes-like rows or elements.
    upper_lengths, lower_lengths : array_like, shape (N,), or real scalar
        Bone lengths a and b, >= 0 and not both 0 in any row; a scalar applies to every row.
    tolerance : float, keyword-only, default 1e-9
        Relative tolerance, >= 0, shared by all rows: eps = tolerance * (a + b) (contract D2).

    Returns
    -------
    TwoBoneIKBatchResult
        ``(joints, ends, reachable)``: new arrays of shapes (N, 3), (N, 3) float64 and (N,) bool.

    Raises
    ------
    ValueError
        An argument of the wrong shape or not convertible to float64 (a None, text or bytes
        element or row included: the row is named), a numpy masked array (its mask cannot be
        honoured), arguments with different N, a tolerance that is negative or not finite; or
        the first bad row, naming the argument and the row index: a non-finite coordinate or
        length, a negative length, both lengths 0 (contract D4; in a row, checked in the scalar
        order), or a chain that lies outside the float range (a root or lengths near 1e308).

    Notes
    -----
    Rows are solved in chunks of ``CHUNK_ROWS`` (16384) with numpy array operations into
    preallocated buffers: about 300 bytes a row, so at most ~5 MB whatever N. Each thread keeps
    its buffers between calls (fresh ones would cost page faults on every call).

    Examples
    --------
    >>> import numpy as np
    >>> result = solve_two_bone_ik_batch(
    ...     np.zeros((2, 3)), [[6.0, 0, 0], [20.0, 0, 0]], [[0, 1.0, 0], [0, 1.0, 0]], 5.0, 5.0
    ... )
    >>> result.joints.tolist(), result.ends.tolist(), result.reachable.tolist()
    ([[3.0, 4.0, 0.0], [5.0, 0.0, 0.0]], [[6.0, 0.0, 0.0], [10.0, 0.0, 0.0]], [True, False])
    """
    tolerance = _tolerance(tolerance)
    points = [
        _points(value, name) for value, name in zip((roots, targets, pole_hints), _POINT_NAMES, strict=True)
    ]
    count = points[0].shape[0]
    for array, name in zip(points[1:], _POINT_NAMES[1:], strict=True):
        if array.shape[0] != count:
            raise ValueError(f"{name} has {array.shape[0]} rows but roots has {count}")
    lengths = [
        _lengths(value, name, count)
        for value, name in zip((upper_lengths, lower_lengths), _LENGTH_NAMES, strict=True)
    ]

    joints = np.empty((count, 3))
    ends = np.empty((count, 3))
    reachable = np.empty(count, dtype=bool)
    workspace = _workspace(min(count, CHUNK_ROWS))
    with np.errstate(all="ignore"):  # masked-out rows may divide by zero; they are overwritten
        for start in range(0, count, CHUNK_ROWS):
            rows = slice(start, min(start + CHUNK_ROWS, count))
            size = rows.stop - start
            _solve_chunk(
                workspace if size == workspace.size else workspace.head(size),
                [p[rows] for p in points],
                [v[rows] for v in lengths],
                tolerance,
                start,
                joints[rows].T,
                ends[rows].T,
                reachable[rows],
            )
    return TwoBoneIKBatchResult(joints, ends, reachable)


def _solve_chunk(workspace, points, lengths, tolerance, start, joint, end, reachable) -> None:
    """Rows start.. of the batch; joint and end are (3, n) views of the outputs."""
    root, target, pole_hint = (p.T for p in points)  # (3, n) views: rows become columns
    a, b = lengths
    fast = prepare(workspace, root, target, pole_hint, a, b, tolerance)
    scales = checked = None
    if not fast:
        # Something is invalid or outside the fast path's ranges: name the first bad row, else
        # solve on scaled values as solver/_scaled.py does. It takes bones longer than
        # HUGE_INPUT times 2**-64 (never in a fast row: those are shorter than 2**200) ...
        _check_rows(points, lengths, start)
        big = np.maximum(a, b) > HUGE_INPUT
        unscale = None
        if big.any():
            factor = np.where(big, PRESCALE, 1.0)
            a, b = a * factor, b * factor
            np.add(a, b, out=workspace.reach)
            unscale = np.where(big, UNPRESCALE, 1.0)
        # ... takes a difference that overflowed from the halved points (never a fast row) ...
        d_half = _halved(workspace.dvec, target, workspace.root)
        q_half = _halved(workspace.qvec, pole_hint, workspace.root)
        scales = d_half, q_half, unscale
        # ... and checks the result where it may leave the float range.
        checked = big | (np.max(np.abs(workspace.root), axis=0) > HUGE_INPUT)
    finish(workspace, target, pole_hint, a, b, tolerance, scales, joint, end, reachable)
    if checked is not None and checked.any():
        rows = np.flatnonzero(checked)
        finite = np.isfinite(joint[:, rows]).all(axis=0) & np.isfinite(end[:, rows]).all(axis=0)
        if not finite.all():
            row = start + int(rows[np.flatnonzero(~finite)[0]])
            raise ValueError(
                f"roots[{row}], upper_lengths[{row}], lower_lengths[{row}]: the solved chain lies "
                "outside the float range"
            )


def _halved(difference: np.ndarray, point: np.ndarray, root: np.ndarray) -> np.ndarray | None:
    """Per row 0.5 where ``difference`` (point - root, (3, n)) overflowed, now recomputed from
    the halved points, and 1.0 elsewhere; None when no row overflowed (solver/_scaled.py)."""
    over = np.max(np.abs(difference), axis=0) > _FLOAT_MAX
    if not over.any():
        return None
    difference[:, over] = point[:, over] * 0.5 - root[:, over] * 0.5
    return np.where(over, 0.5, 1.0)


_cache = threading.local()


def _workspace(size: int) -> Workspace:
    """``size`` rows of this thread's workspace, kept between calls and grown on demand: fresh
    buffers of a few megabytes cost page faults on every call, more than a small batch's solve."""
    workspace = getattr(_cache, "workspace", None)
    if workspace is None or workspace.size < size:
        workspace = _cache.workspace = Workspace(size)
    return workspace if workspace.size == size else workspace.head(size)


def _tolerance(tolerance) -> float:
    if not_a_real(tolerance):
        raise ValueError(f"tolerance must be a real number, got {tolerance!r}")
    try:
        value = float(tolerance)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"tolerance must be a real number, got {tolerance!r}") from None
    if not math.isfinite(value) or value < 0.0:
        raise ValueError(f"tolerance must be finite and >= 0, got {value!r}")
    return value


def _float_array(value, name: str, expected: str) -> np.ndarray:
    """value as a float64 array, with the scalar form's rules for what is a real number."""
    if is_masked(value):
        raise ValueError(f"{name} is a masked array: the solver cannot honour its mask")
    try:
        array = np.asarray(value)
        if array.dtype.kind not in "biufO":  # no strings, complex numbers, dates, ...
            raise TypeError(f"dtype {array.dtype}")
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{name} must be an array of real numbers ({error})") from None
    if array.dtype.kind == "O":
        # float() would take None (as NaN), text and masked elements: name them instead.
        for index, item in enumerate(array.flat):
            if not_a_real(item):
                if not array.ndim:
                    raise ValueError(f"{name} must be {expected}, got {item!r}")
                row = np.unravel_index(index, array.shape)[0]
                raise ValueError(f"{name}[{row}] must be a real number, got {item!r}")
    try:
        return array.astype(np.float64, copy=False)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{name} must be an array of real numbers ({error})") from None


def _points(value, name: str) -> np.ndarray:
    if isinstance(value, (list, tuple)) and not set(map(type, value)) <= _PLAIN_ROWS:
        # Rows numpy would read as numbers though they are not points (contract D1; the scalar form
        # rejects them too): bytes-like rows (their byte values) and masked arrays (their mask).
        for index, row in enumerate(value):
            reason = not_a_point(row)
            if reason is not None:
                raise ValueError(
                    f"{name}[{index}] must be a 3-sequence of real numbers ({reason}), got {row!r}"
                )
    array = _float_array(value, name, "an array of shape (N, 3)")
    if array.ndim != 2 or array.shape[1] != 3:
        raise ValueError(f"{name} must have shape (N, 3), got {array.shape}")
    return array


def _lengths(value, name: str, count: int) -> np.ndarray:
    array = _float_array(value, name, "a real number or an array of them")
    if array.ndim == 0:
        return np.broadcast_to(array, (count,))
    if array.shape != (count,):
        raise ValueError(f"{name} must be a scalar or have shape ({count},), got {array.shape}")
    return array


def _check_rows(points, lengths, start: int) -> None:
    """ValueError for the chunk's first bad row, naming what the scalar form would (contract D4)."""
    upper, lower = lengths
    bad = [~np.isfinite(p).all(axis=1) for p in points]
    bad += [~(np.isfinite(v) & (v >= 0.0)) for v in lengths]
    bad.append((upper == 0.0) & (lower == 0.0))
    first = [int(np.argmax(mask)) if mask.any() else None for mask in bad]
    row = min((index for index in first if index is not None), default=None)
    if row is None:
        return
    reason = next(i for i, index in enumerate(first) if index == row)
    at = start + row
    if reason < 3:
        name = _POINT_NAMES[reason]
        raise ValueError(f"{name}[{at}] must be finite, got {points[reason][row].tolist()!r}")
    if reason < 5:
        name = _LENGTH_NAMES[reason - 3]
        raise ValueError(
            f"{name}[{at}] must be a finite length >= 0, got {float(lengths[reason - 3][row])!r}"
        )
    raise ValueError(f"upper_lengths[{at}] and lower_lengths[{at}] are both 0: there is no chain to solve")

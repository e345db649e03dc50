# SPDX-License-Identifier: GPL-3.0-or-later
"""Many chains at once with numpy: solver/scalar.py's steps on arrays, in the same order, branches
as masks, so each row gets the scalar form's numbers (with a twist or softness, to the last bit:
numpy's cos, sin and expm1 are not Python's). The solver's only module that imports numpy."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._inputs import LIMIT, TINY, is_masked, not_a_point, settings
from .scalar import NEAR_LINE, near_line_pole

# Rows per pass: keeps each pass's temporaries (some 40 arrays of a row's float) in cache.
CHUNK_ROWS = 16384

_POINTS = ("roots", "targets", "pole_hints")
_LENGTHS = ("upper_lengths", "lower_lengths")


class TwoBoneIKBatchResult(NamedTuple):
    """The solved chains; row i is ``solve_two_bone_ik`` of row i of the inputs.

    ``joints``, ``ends``: (N, 3) float64 arrays in the inputs' frame and units; ``reachable``: (N,)
    bool, per row ``|a - b| - eps <= |target - root| <= a + b + eps`` (contract D2).
    """

    joints: np.ndarray
    ends: np.ndarray
    reachable: np.ndarray


def solve_two_bone_ik_batch(
    roots: ArrayLike, targets: ArrayLike, pole_hints: ArrayLike,
    upper_lengths: ArrayLike, lower_lengths: ArrayLike,
    *, tolerance: float = 1e-9, twist: ArrayLike = 0.0, softness: ArrayLike = 0.0,
) -> TwoBoneIKBatchResult:  # fmt: skip
    """Solve N two-bone chains; row i follows exactly the rules of ``solve_two_bone_ik``.

    Parameters
    ----------
    roots, targets, pole_hints : array_like, shape (N, 3)
        Points in one frame (contract D6; the driver passes armature space), any units.
    upper_lengths, lower_lengths : array_like, shape (N,), or a real number for every row
        Bone lengths, >= 0 and not both 0 in a row.
    tolerance : float, default 1e-9
        Relative, >= 0, shared by all rows: ``eps = tolerance * (a + b)`` (D2).
    twist, softness : array_like, shape (N,), or a real number for every row
        Radians about root -> target (D9), and 0 to 1 (D10), as in the scalar form.

    Returns
    -------
    TwoBoneIKBatchResult
        ``(joints, ends, reachable)``: new arrays, (N, 3) and (N, 3) float64, (N,) bool.

    Raises
    ------
    ValueError
        An argument of the wrong shape, not made of real numbers, or masked; arguments with
        different N; or the first bad row, naming the argument and the row (D4:
        ``targets[17] ...``), with the scalar form's rules and supported range.

    Examples
    --------
    >>> result = solve_two_bone_ik_batch(
    ...     np.zeros((2, 3)), [[6.0, 0, 0], [20.0, 0, 0]], [[0, 1.0, 0], [0, 1.0, 0]], 5.0, 5.0
    ... )
    >>> result.joints.tolist(), result.ends.tolist(), result.reachable.tolist()
    ([[3.0, 4.0, 0.0], [5.0, 0.0, 0.0]], [[6.0, 0.0, 0.0], [10.0, 0.0, 0.0]], [True, False])
    """
    tolerance, _, _ = settings(tolerance, 0.0, 0.0)
    points = [
        _array(value, name, 2) for value, name in zip((roots, targets, pole_hints), _POINTS, strict=True)
    ]
    count = points[0].shape[0] if points[0].ndim == 2 else -1
    for array, name in zip(points, _POINTS, strict=True):
        if array.shape != (count, 3):
            raise ValueError(f"{name} must have shape (N, 3), N as in roots, got {array.shape}")
    rows = [
        _per_row(value, name, count)
        for value, name in zip(
            (upper_lengths, lower_lengths, twist, softness), (*_LENGTHS, "twist", "softness"), strict=True
        )
    ]
    _check_rows(points, rows)

    joints, ends = np.empty((count, 3)), np.empty((count, 3))
    reachable = np.empty(count, dtype=bool)
    with np.errstate(all="ignore"):  # rows a mask replaces may divide by zero on the way
        for start in range(0, count, CHUNK_ROWS):
            chunk = slice(start, start + CHUNK_ROWS)
            root, target, pole = (p[chunk].T for p in points)
            a, b, twist, softness = (v[chunk] for v in rows)
            joints[chunk], ends[chunk], reachable[chunk] = _solve(
                root, target, pole, a, b, twist, softness, tolerance
            )
    return TwoBoneIKBatchResult(joints, ends, reachable)


def _solve(root, target, pole, a, b, twist, softness, tolerance):
    """Solve the rows of (3, n) points and (n,) numbers; returns ((n, 3), (n, 3), (n,))."""
    # Forward (D2).
    reach = a + b
    diff = a - b
    fold = np.abs(diff)
    eps = tolerance * reach
    dvec = target - root
    distance = np.sqrt(_dot(dvec, dvec))
    reachable = (fold - eps <= distance) & (distance <= reach + eps)
    at_root = distance <= eps
    forward = dvec * (1.0 / distance)
    d = distance
    if at_root.any():
        forward[:, at_root] = ((1.0,), (0.0,), (0.0,))
        d = np.where(at_root, 0.0, distance)

    # Bend direction (D2, D3).
    qvec = pole - root
    qq = _dot(qvec, qvec)
    bend = qvec - _dot(qvec, forward) * forward
    pp = _dot(bend, bend)
    threshold2 = tolerance * tolerance * np.maximum(reach * reach, qq)
    near = pp < NEAR_LINE * qq
    on_line = ~near & (pp <= threshold2)
    unit = np.where(near | on_line, 1.0, 1.0 / np.sqrt(pp))
    if on_line.any():
        bend[:, on_line] = _fallback_axis(forward[:, on_line])
    for i in np.flatnonzero(near):
        line = None if at_root[i] else tuple(target[:, i].tolist())
        bend[:, i] = near_line_pole(
            tuple(root[:, i].tolist()),
            line,
            tuple(pole[:, i].tolist()),
            tuple(forward[:, i].tolist()),
            threshold2[i],
        )
    turned = twist != 0.0
    if turned.any():
        c, s, f, u = np.cos(twist[turned]), np.sin(twist[turned]), forward[:, turned], bend[:, turned]
        bend[:, turned] = c * u + s * np.cross(f, u, axis=0)

    # Softness (D10), then the triangle and its clamp, as solver.scalar.soften and triangle.
    if softness.any():
        width = np.minimum(softness * reach, reach - fold)
        start = reach - width
        soft = (width > 0.0) & (d > start)
        d = np.where(soft, np.minimum(d, start - width * np.expm1((start - d) / width)), d)
    too_far = d > reach
    too_close = d < fold  # never with too_far: fold <= reach
    d = np.minimum(np.maximum(d, fold), reach)
    high, low = np.maximum(a, b), np.minimum(a, b)
    half_inverse = 0.5 / d
    along = np.minimum(np.maximum((diff * reach + d * d) * half_inverse, -a), a)
    extension_gap = low - (d - high)
    fold_gap = np.where(d < low, d - (high - low), low - (high - d))
    area16 = ((reach + d) * (d + fold)) * (extension_gap * fold_gap)
    height = np.sqrt(np.where(area16 > 0.0, area16, 0.0)) * half_inverse
    clamped = too_far | too_close
    flat = at_root & ~clamped
    if clamped.any() or flat.any():
        along[too_far], along[too_close] = a[too_far], np.copysign(a, diff)[too_close]
        along[flat], height[clamped], height[flat] = 0.0, 0.0, a[flat]

    joint = root + (along * forward + (height * unit) * bend)
    end = root + d * forward
    return joint.T, end.T, reachable


def _dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per column, in the scalar form's order."""
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def _fallback_axis(forward: np.ndarray) -> np.ndarray:
    """solver.scalar.fallback_axis per column of a (3, k) array."""
    size = np.abs(forward)
    choice = np.where((size[0] <= size[1]) & (size[0] <= size[2]), 0, np.where(size[1] <= size[2], 1, 2))
    columns = np.arange(forward.shape[1])
    component = forward[choice, columns]
    axis = 0.0 - component * forward
    axis[choice, columns] = 1.0 - component * component
    return axis / np.sqrt(_dot(axis, axis))


def _array(value: Any, name: str, ndim: int) -> np.ndarray:
    """``value`` as float64 with ``ndim`` dimensions or fewer, with the scalar form's rules."""
    if is_masked(value):
        raise ValueError(f"{name} is a masked array: the solver cannot honour its mask")
    plain = isinstance(value, (list, tuple)) and set(map(type, value)) <= {list, tuple}
    if isinstance(value, (list, tuple)) and not plain and any(not_a_point(row) for row in value):
        raise ValueError(f"{name} must hold rows of real numbers (not text, bytes, mappings, sets)")
    try:
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":  # no strings, None, objects, complex numbers, dates
            raise TypeError(f"dtype {array.dtype}")
        array = array.astype(np.float64, copy=False)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{name} must be an array of real numbers ({error})") from None
    if array.ndim > ndim:
        raise ValueError(f"{name} has {array.ndim} dimensions, expected {ndim}")
    return array


def _per_row(value: Any, name: str, count: int) -> np.ndarray:
    array = _array(value, name, 1)
    if array.ndim == 0:
        return np.broadcast_to(array, (count,))
    if array.shape != (count,):
        raise ValueError(f"{name} must be a number or have shape ({count},), got {array.shape}")
    return array


def _check_rows(points: list[np.ndarray], rows: list[np.ndarray]) -> None:
    """ValueError for the first bad row, naming what the scalar form would (D4)."""
    a, b, twist, softness = rows
    if (
        all(bool((np.abs(p) <= LIMIT).all()) for p in (*points, a, b, twist))
        and bool(((a >= 0.0) & (b >= 0.0) & (a + b >= TINY)).all())
        and bool(((softness >= 0.0) & (softness <= 1.0)).all())
    ):
        return  # every row is good (a NaN fails every comparison)
    checks = [
        (_outside(p).any(axis=1), f"{name}[{{}}] must be finite and from -1e+40 to 1e+40")
        for p, name in zip(points, _POINTS, strict=True)
    ]
    checks += [
        (_outside(v) | (v < 0.0), f"{name}[{{}}] must be finite and from 0 to 1e+40")
        for v, name in zip((a, b), _LENGTHS, strict=True)
    ]
    checks.append((~(a + b >= TINY), "upper_lengths[{}] + lower_lengths must be at least 1e-30"))
    checks.append((_outside(twist), "twist[{}] must be finite and from -1e+40 to 1e+40"))
    checks.append((~((softness >= 0.0) & (softness <= 1.0)), "softness[{}] must be finite and from 0 to 1"))
    row, order = min((int(np.argmax(mask)), order) for order, (mask, _) in enumerate(checks) if mask.any())
    raise ValueError(checks[order][1].format(row))


def _outside(array: np.ndarray) -> np.ndarray:
    """Where values are NaN, inf or past the supported range (solver/_inputs.py)."""
    return ~(np.abs(array) <= LIMIT)

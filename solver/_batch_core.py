# SPDX-License-Identifier: GPL-3.0-or-later
"""The two-bone solve on numpy arrays of rows: the scalar steps, operation for operation.

Every arithmetic step here is the one in solver/scalar.py (``scaled=False``) or
solver/_scaled.py (``scaled=True``), in the same order and with the same rounding (numpy's
float64 + - * / and sqrt are IEEE-exact like Python's), and every branch is a mask. So each row
gets the numbers the scalar form gives, bit for bit; tests/solver/test_batch.py checks this.

Arrays are in "component-major" layout: points are (3, n), lengths and flags (n,).
"""

from __future__ import annotations

import numpy as np

from ._limits import (
    NEAR_LINE,
    NORM2_HIGH,
    REACH_HIGH,
    REACH_LOW,
    SCALE_EXPONENT_MAX,
    SCALE_EXPONENT_MIN,
    SPLIT,
    THIN_SIDE,
    TOLERANCE_LOW,
)

_EXPONENT_BIAS = 1023
_EXPONENT_MASK = np.int64(0x7FF)


def scale_pair(magnitude: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(2**-k, 2**k) per row, as solver._scaled.scale_pair: k from the exponent bits, clamped."""
    exponent = (magnitude.view(np.int64) >> 52) & _EXPONENT_MASK
    np.clip(exponent, SCALE_EXPONENT_MIN + _EXPONENT_BIAS, SCALE_EXPONENT_MAX + _EXPONENT_BIAS, out=exponent)
    up = (exponent << 52).view(np.float64)
    down = ((2 * _EXPONENT_BIAS - exponent) << 52).view(np.float64)
    return down, up


def _norm2(v: np.ndarray) -> np.ndarray:
    return v[0] * v[0] + v[1] * v[1] + v[2] * v[2]


def fallback_axis(forward: np.ndarray) -> np.ndarray:
    """solver._pole.fallback_axis per column of a (3, k) array."""
    size = np.abs(forward)
    choice = np.where((size[0] <= size[1]) & (size[0] <= size[2]), 0, np.where(size[1] <= size[2], 1, 2))
    columns = np.arange(forward.shape[1])
    component = forward[choice, columns]
    axis = 0.0 - component * forward
    axis[choice, columns] = 1.0 - component * component
    return axis / np.sqrt(_norm2(axis))


def _two_diff(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = x - y
    bb = s - x
    return s, (x - (s - bb)) - (y + bb)


def _two_prod(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = x * y
    c = SPLIT * x
    xh = c - (c - x)
    xl = x - xh
    c = SPLIT * y
    yh = c - (c - y)
    yl = y - yh
    return p, (((xh * yh - p) + xh * yl) + xl * yh) + xl * yl


def _cross_term(ah, al, bh, bl, ch, cl, eh, el):
    p, pe = _two_prod(ah, bh)
    m, me = _two_prod(ch, eh)
    s = p - m
    bb = s - p
    se = (p - (s - bb)) - (m + bb)
    return s + (se + ((pe - me) + ((ah * bl + al * bh) - (ch * el + cl * eh))))


def near_line_pole(dh, dl, qh, ql, forward, threshold2, dd):
    """solver._pole.near_line_pole per column; all arguments (3, k) or (k,)."""
    cx = _cross_term(qh[1], ql[1], dh[2], dl[2], qh[2], ql[2], dh[1], dl[1])
    cy = _cross_term(qh[2], ql[2], dh[0], dl[0], qh[0], ql[0], dh[2], dl[2])
    cz = _cross_term(qh[0], ql[0], dh[1], dl[1], qh[1], ql[1], dh[0], dl[0])
    cc = cx * cx + cy * cy + cz * cz
    on_line = (cc <= threshold2 * dd) | (cc == 0.0)
    pole = np.empty_like(dh)
    pole[0] = dh[1] * cz - dh[2] * cy
    pole[1] = dh[2] * cx - dh[0] * cz
    pole[2] = dh[0] * cy - dh[1] * cx
    pole /= np.sqrt(_norm2(pole))
    if on_line.any():
        pole[:, on_line] = fallback_axis(forward[:, on_line])
    return pole


class Workspace:
    """Preallocated arrays for ``prepare`` and ``finish``, reused chunk after chunk.

    Fresh temporaries of this size cost page faults on every pass that take longer than the
    arithmetic, so the hot steps write into these with ``out=``.
    """

    VECTORS = ("root", "dvec", "qvec", "forward", "pole", "scratch")
    SCALARS = (
        "reach", "diff", "fold", "high", "low", "eps", "dd", "qq", "norm", "d", "along_q", "pp",
        "threshold2", "pole_scale", "along", "height", "half_inverse", "t1", "t2", "t3",
    )  # fmt: skip
    FLAGS = ("away", "near", "on_line", "too_far", "too_close", "flag", "flag2")

    # (3, n) float64
    root: np.ndarray
    dvec: np.ndarray
    qvec: np.ndarray
    forward: np.ndarray
    pole: np.ndarray
    scratch: np.ndarray
    # (n,) float64
    reach: np.ndarray
    diff: np.ndarray
    fold: np.ndarray
    high: np.ndarray
    low: np.ndarray
    eps: np.ndarray
    dd: np.ndarray
    qq: np.ndarray
    norm: np.ndarray
    d: np.ndarray
    along_q: np.ndarray
    pp: np.ndarray
    threshold2: np.ndarray
    pole_scale: np.ndarray
    along: np.ndarray
    height: np.ndarray
    half_inverse: np.ndarray
    t1: np.ndarray
    t2: np.ndarray
    t3: np.ndarray
    # (n,) bool
    away: np.ndarray
    near: np.ndarray
    on_line: np.ndarray
    too_far: np.ndarray
    too_close: np.ndarray
    flag: np.ndarray
    flag2: np.ndarray

    def __init__(self, size: int, arrays: dict[str, np.ndarray] | None = None):
        self.size = size
        if arrays is None:
            arrays = {name: np.empty((3, size)) for name in self.VECTORS}
            arrays.update((name, np.empty(size)) for name in self.SCALARS)
            arrays.update((name, np.empty(size, dtype=bool)) for name in self.FLAGS)
        self.__dict__.update(arrays)
        self._arrays = arrays

    def head(self, size: int) -> Workspace:
        """The first ``size`` rows of every array (for the last, shorter chunk)."""
        return Workspace(size, {name: array[..., :size] for name, array in self._arrays.items()})


def _norm2_into(v: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """(x*x + y*y) + z*z per column, in the scalar form's order."""
    np.multiply(v[0], v[0], out=out)
    np.multiply(v[1], v[1], out=scratch)
    out += scratch
    np.multiply(v[2], v[2], out=scratch)
    out += scratch
    return out


def _thin_triangle(a, b, d, reach, diff, fold, down, up):
    """solver._scaled.thin_triangle per row."""
    along = 0.5 * (reach * (diff / d) + d)
    np.minimum(along, a, out=along)
    np.maximum(along, -a, out=along)
    high = np.maximum(a, b)
    low = np.minimum(a, b)
    fold_gap = np.minimum(d, low) - (high - np.maximum(d, low))
    ratios = (fold_gap / d) * ((d + fold) / d)
    d_s = d * down
    outer = (reach * down + d_s) * (low * down - (d_s - high * down))
    height = 0.5 * np.sqrt(np.maximum(outer, 0.0)) * up * np.sqrt(np.maximum(ratios, 0.0))
    return along, height


def prepare(w: Workspace, root, target, pole_hint, a, b, tolerance: float) -> bool:
    """First steps of a chunk: target - root, pole_hint - root, their squared norms, a + b.

    Returns True when every row is valid and within the scalar fast path's ranges
    (solver/_limits.py); a NaN or inf anywhere, or a negative length, makes it False.
    """
    np.copyto(w.root, root)
    np.subtract(target, w.root, out=w.dvec)
    np.subtract(pole_hint, w.root, out=w.qvec)
    reach = np.add(a, b, out=w.reach)
    dd = _norm2_into(w.dvec, w.dd, w.t1)
    qq = _norm2_into(w.qvec, w.qq, w.t1)
    return bool(
        tolerance >= TOLERANCE_LOW
        and dd.max() < NORM2_HIGH
        and qq.max() < NORM2_HIGH
        and reach.min() > REACH_LOW
        and reach.max() < REACH_HIGH
        and a.min() >= 0.0
        and b.min() >= 0.0
    )


def finish(w: Workspace, target, pole_hint, a, b, tolerance: float, scales, joint, end, reachable) -> None:
    """Solve the chunk ``prepare`` started into joint, end (3, n) and reachable (n,).

    ``scales=None`` (every row within range) are the scalar fast path's steps. Otherwise they
    are solver/_scaled.py's, which give the same numbers for the rows that were within range;
    the caller has done its first steps, and ``scales`` is ``(d_half, q_half, unscale)``, each
    None or per row: 0.5 where w.dvec or w.qvec holds the difference of the halved points (else
    1.0), and 2**64 where a, b and w.reach were taken times 2**-64 (else 1.0).
    """
    scaled = scales is not None
    d_half, q_half, unscale = scales if scaled else (None, None, None)
    root, dvec, qvec, forward, pole, scratch = w.root, w.dvec, w.qvec, w.forward, w.pole, w.scratch
    t1, t2, t3 = w.t1, w.t2, w.t3
    reach, dd, qq = w.reach, w.dd, w.qq
    diff = np.subtract(a, b, out=w.diff)
    fold = np.abs(diff, out=w.fold)
    high = np.maximum(a, b, out=w.high)
    low = np.minimum(a, b, out=w.low)
    eps = np.multiply(reach, tolerance, out=w.eps)

    # Forward (contract, D2).
    if scaled:
        down, up = scale_pair(np.max(np.abs(dvec), axis=0))
        dvec *= down
        _norm2_into(dvec, dd, t1)
        norm = np.sqrt(dd, out=w.norm)
        if d_half is not None:
            up = up / d_half
        if unscale is not None:
            up = up / unscale  # exact: powers of two down to 2**-1064
        distance = norm * up
    else:
        distance = norm = np.sqrt(dd, out=w.norm)
    np.subtract(fold, eps, out=t1)
    np.less_equal(t1, distance, out=reachable)
    np.add(reach, eps, out=t1)
    np.less_equal(distance, t1, out=w.flag)
    reachable &= w.flag
    away = np.greater(distance, eps, out=w.away)
    if scaled:  # eps = 0: a distance underflowed in the bones' units still counts
        away |= (eps == 0.0) & (norm > 0.0)
    np.divide(1.0, norm, out=t1)
    np.multiply(dvec, t1, out=forward)
    any_at_root = not away.all()
    if any_at_root:
        at_root = ~away
        forward[:, at_root] = ((1.0,), (0.0,), (0.0,))
        d = w.d
        np.copyto(d, distance)
        d[at_root] = 0.0
    else:
        d = distance

    # Pole (contract D2, D3).
    if scaled:
        down_q = scale_pair(np.max(np.abs(qvec), axis=0))[0]
        qvec *= down_q
        _norm2_into(qvec, qq, t1)
        reach_q = reach * (down_q if q_half is None else down_q * q_half)
        if unscale is not None:
            reach_q *= unscale
    else:
        reach_q = reach
    along_q = np.multiply(qvec[0], forward[0], out=w.along_q)
    np.multiply(qvec[1], forward[1], out=t1)
    along_q += t1
    np.multiply(qvec[2], forward[2], out=t1)
    along_q += t1
    np.multiply(forward, along_q, out=pole)
    np.subtract(qvec, pole, out=pole)
    pp = _norm2_into(pole, w.pp, t1)
    threshold2 = np.multiply(reach_q, reach_q, out=w.threshold2)
    np.maximum(threshold2, qq, out=threshold2)
    threshold2 *= tolerance * tolerance
    near = np.less(pp, np.multiply(qq, NEAR_LINE, out=t1), out=w.near)
    on_line = np.less_equal(pp, threshold2, out=w.on_line)
    if scaled:
        on_line |= pp == 0.0  # threshold2 may be 0 * inf = nan there
    any_near = near.any()
    if any_near:
        on_line &= ~near
    # 1 / |q_perp| normalises the pole direction through the height (scalar form: pole_scale),
    # on the scaled path after bringing it near unit length.
    if scaled:
        pole *= scale_pair(np.max(np.abs(pole), axis=0))[0]
        pole_scale = np.sqrt(_norm2_into(pole, w.pole_scale, t1), out=w.pole_scale)
    else:
        pole_scale = np.sqrt(pp, out=w.pole_scale)
    np.divide(1.0, pole_scale, out=pole_scale)
    if on_line.any():
        pole[:, on_line] = fallback_axis(forward[:, on_line])
        pole_scale[on_line] = 1.0
    if any_near:
        rows = np.flatnonzero(near)
        r = root[:, rows]
        if q_half is None:
            qh, ql = _two_diff(pole_hint[:, rows], r)
        else:
            qh, ql = _two_diff(pole_hint[:, rows] * q_half[rows], r * q_half[rows])
        if d_half is None:
            dh, dl = _two_diff(target[:, rows], r)
        else:
            dh, dl = _two_diff(target[:, rows] * d_half[rows], r * d_half[rows])
        dd_exact = dd[rows]
        if scaled:
            qh *= down_q[rows]
            ql *= down_q[rows]
            dh *= down[rows]
            dl *= down[rows]
        rows_at_root = ~away[rows]
        if rows_at_root.any():
            dh[:, rows_at_root] = ((1.0,), (0.0,), (0.0,))
            dl[:, rows_at_root] = 0.0
            dd_exact[rows_at_root] = 1.0
        pole[:, rows] = near_line_pole(dh, dl, qh, ql, forward[:, rows], threshold2[rows], dd_exact)
        pole_scale[rows] = 1.0

    # Triangle (contract "Unreachable targets clamp", D5). fold <= reach, so too_far and too_close
    # never overlap and min-then-max is the scalar form's clamp.
    too_far = np.greater(d, reach, out=w.too_far)
    too_close = np.less(d, fold, out=w.too_close)
    d = np.minimum(d, reach, out=w.d)
    np.maximum(d, fold, out=d)
    if scaled:
        down_r, up_r = scale_pair(reach)
        a_s, high_s, low_s, d_s = a * down_r, high * down_r, low * down_r, d * down_r
        reach_s, diff_s, fold_s = reach * down_r, diff * down_r, fold * down_r
    else:
        a_s, high_s, low_s, d_s, reach_s, diff_s, fold_s = a, high, low, d, reach, diff, fold
    half_inverse = np.divide(0.5, d_s, out=w.half_inverse)
    along = np.multiply(diff_s, reach_s, out=w.along)
    along += np.multiply(d_s, d_s, out=t1)
    along *= half_inverse
    np.minimum(along, a_s, out=along)
    np.maximum(along, np.negative(a_s, out=t1), out=along)
    extension_gap = np.subtract(low_s, np.subtract(d_s, high_s, out=t1), out=t1)
    np.subtract(high_s, np.maximum(d_s, low_s, out=t2), out=t2)
    fold_gap = np.subtract(np.minimum(d_s, low_s, out=t3), t2, out=t2)
    extension_gap *= fold_gap
    area16 = np.add(reach_s, d_s, out=t2)
    area16 *= np.add(d_s, fold_s, out=t3)
    area16 *= extension_gap
    np.maximum(area16, 0.0, out=area16)
    height = np.sqrt(area16, out=w.height)
    height *= half_inverse
    if scaled:
        along *= up_r
        height *= up_r
        thin = np.flatnonzero(d_s < THIN_SIDE)
        if thin.size:
            along[thin], height[thin] = _thin_triangle(
                a[thin], b[thin], d[thin], reach[thin], diff[thin], fold[thin], down_r[thin], up_r[thin]
            )
    # Clamped chains are exactly straight: a along forward, or -a folded back when a < b; with
    # equal bones and the target at the root the chain folds flat, t = 90 degrees (contract D5).
    # (d = 0 unclamped is the target at the root, or on the scaled path a distance that
    # underflowed in the units of bones past 2**1000: the scalar form's `elif d == 0.0`.)
    clamped = np.logical_or(too_far, too_close, out=w.flag)
    if any_at_root or (scaled and not d.all()):
        rows = np.flatnonzero(clamped)
        along[rows] = np.where(too_far[rows], a[rows], np.copysign(a[rows], diff[rows]))
        height[rows] = 0.0
        flat = np.flatnonzero((d == 0.0) & ~clamped)
        along[flat] = 0.0
        height[flat] = a[flat]
    else:
        # Blend by 0/1 factors (along and height are finite here): x * 1 + y * 0 == x exactly,
        # and a pass of multiplies is cheaper than a masked write over scattered rows.
        sign = np.multiply(diff, too_close, out=t2)
        sign += too_far
        straight = np.copysign(a, sign, out=t3)
        straight *= clamped
        np.logical_not(clamped, out=w.flag2)
        along *= w.flag2
        along += straight
        height *= w.flag2

    height *= pole_scale
    np.multiply(forward, along, out=dvec)
    np.multiply(pole, height, out=scratch)
    dvec += scratch
    if unscale is not None:
        dvec *= unscale
    np.add(root, dvec, out=joint)
    np.multiply(forward, d, out=dvec)
    if unscale is not None:
        dvec *= unscale
    np.add(root, dvec, out=end)

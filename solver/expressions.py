# SPDX-License-Identifier: GPL-3.0-or-later
"""The solve as Blender simple expressions: the text of the native network's drivers (contract
"The native network").

Blender evaluates a driver whose expression uses only numbers, its variables, ``+ - * /``,
comparisons, ``and or not``, ``x if c else y``, ``pi`` and a fixed set of functions (``min max
clamp abs sqrt acos atan2 exp`` among them) in C, with no Python and no Auto Run
(``driver.is_simple_expression``). Each function below returns such an expression, at most
:data:`MAX_LENGTH` characters (Blender's limit), for one rule of the contract; its variables are
named in the docstring. Lengths are baked in as numbers, in the units the network measures
distances in (the chain's root frame).

Each expression is the same rule as the Python solver, written for Blender: the tests evaluate
the text with :func:`evaluate` and compare it with :func:`solver.scalar.soften`, the law of
cosines of :func:`solver.scalar.triangle` and the fallback axis of D3.
"""

from __future__ import annotations

import math

# Blender's ChannelDriver.expression holds 256 bytes, the terminating NUL included.
MAX_LENGTH = 255


def number(value: float, exact: bool = False) -> str:
    """``value`` as expression text: 9 significant digits (float32 bone data round-trips), or with
    ``exact`` every digit of the float64, where a rounding would be amplified (the clamps)."""
    return repr(float(value)) if exact else f"{float(value):.9g}"


def _guarded(body: str, finite: str, fallback: str = "0.0") -> str:
    """``body`` when ``finite`` holds, else ``fallback``. Blender stops a driver whose evaluation
    raises a floating-point invalid operation (an ordered comparison with NaN, ``0 * inf``): it
    gives 0 from then on, even once its inputs are numbers again, so a NaN target or setting for one
    update would stop the chain for good. ``finite`` tests with ``==`` (quiet on NaN) before
    anything compares the values, so the driver gives ``fallback`` and stays live."""
    return f"({body}) if {finite} else {fallback}"


# The eased distance is a number, and small enough that ``d*d`` is finite in float64; past that
# (an infinite target) both angles are 0, the straight chain the clamp gives.
_FINITE_D = "d==d and d<1e150"


def _checked(text: str) -> str:
    if len(text) > MAX_LENGTH:
        raise ValueError(f"expression is {len(text)} characters, Blender keeps {MAX_LENGTH}: {text}")
    return text


# The eased distance stops at FAR x reach (soft_distance).
FAR = 1000.0


def soft_distance(upper_length: float, lower_length: float) -> str:
    """The end's distance from the root eased by softness (D10); not yet clamped to
    [|a - b|, a + b]: the angles clamp (:func:`upper_angle`), so that a value stored in float32
    between the two drivers cannot leave a straight chain a rounding short of straight.

    Variables: ``D`` the root-target distance, ``k`` the chain's softness (0 to 1).
    """
    reach = upper_length + lower_length
    fold = abs(upper_length - lower_length)
    r = number(reach)
    # Past FAR x reach only the direction counts (the angles are 0): the cap keeps an infinite
    # distance out of float32, which would store it as 0, and the end probe placed at it within
    # the range where Blender can square its distance (the lower bone aims at it).
    hard = f"min(D,{FAR * reach:.2g})"  # any cap far past reach will do: two digits
    if not reach - fold > 0.0:
        return _checked(_guarded(hard, "D==D"))  # a zero-length bone: no soft zone (its width is 0)
    width = f"min(k*{r},{number(reach - fold)})"
    # reach - w*exp((reach - D)/w - 1) is the contract's s + w(1 - exp(-(D - s)/w)), s = reach - w.
    eased = f"min(D,{r}-{width}*exp(({r}-D)/{width}-1))"
    # The width is 0 exactly where k*reach is (reach - fold is not): k <= 0, or a softness so small
    # that its product underflows, which the solver treats as 0 too (a driver stops on a division
    # by 0).
    body = f"{hard} if k*{r}<=0 or {r}-D>={width} else {eased}"
    return _checked(_guarded(body, "D==D and k==k"))


def _area(upper_length: float, lower_length: float) -> str:
    """4 x the triangle's area by Heron's formula, from factors that vanish exactly at full
    extension and full fold (D8; acos there would turn one ulp into the square root of one) and
    are 0 past them: the clamp ("Unreachable targets clamp")."""
    reach = number(upper_length + lower_length, exact=True)
    fold = number(abs(upper_length - lower_length), exact=True)
    return f"sqrt(max({reach}-d,0.0)*({reach}+d)*max(d-{fold},0.0)*(d+{fold}))"


def upper_angle(upper_length: float, lower_length: float, tolerance: float) -> str:
    """The upper bone's angle from the root-target line towards the pole (law of cosines, D5).

    Variable: ``d`` the eased distance (:func:`soft_distance`). Past full extension the area is 0
    and the angle 0; below the fold 0 or pi (the joint along forward, or behind the root when the
    lower bone is longer). Equal bones with the target at the root (within ``tolerance x (a + b)``,
    D2) fold flat at 90 degrees; a zero-length upper bone has no angle of its own.
    """
    a, b = upper_length, lower_length
    if a <= 0.0:
        return "0.0"
    angle = f"atan2({_area(a, b)},{number(a * a - b * b, exact=True)}+d*d)"
    # Unequal bones fold at the root (the area is 0 there); equal ones have no fold to clamp to.
    at_root = number(tolerance * (a + b))
    return _checked(_guarded(f"pi/2 if d<={at_root} else {angle}" if a == b else angle, _FINITE_D))


def aim_influence(reach: float, tolerance: float) -> str:
    """1 when the target is off the root, 0 when within ``tolerance * reach`` of it (D2), where
    forward falls back to +X. Variable: ``D`` the root-target distance."""
    return _checked(_guarded(f"1.0 if D>{number(tolerance * reach)} else 0.0", "D==D"))


# The farthest root-target distance the network can square in float32 (1.8e19): past it the
# Damped Tracks and distances overflow.
FLOAT32_FAR = 1e18


def influence() -> str:
    """The influence of the chain's constraints on its bones: the chain's Influence times Enabled,
    or 0 where the network cannot solve (contract D4): no target; a target or pole that is not a
    number (an overflowing transform gives NaN there too); a chain of zero length (a parent's pose
    scale of 0 along the chain); a target past :data:`FLOAT32_FAR` root units, where float32
    squares overflow (a location typed as infinity is float32's largest value, 3.4e38). The chain
    bones then show their own pose, as the status says ERROR.

    Variables: ``influence`` and ``enabled`` the chain's settings; ``v`` 1 while the target is
    found (its Copy Location is valid: not deleted, no missing bone); ``D`` the root-target distance
    and ``P`` the root-pole distance, each NaN where its source is; ``s`` the root's world scale
    along the chain (0 where the chain has no length; negative when mirrored).
    """
    finite = f"v and D==D and P==P and s!=0 and D<{FLOAT32_FAR:.0e}"
    return _checked(_guarded("influence*enabled", finite))


def same_influence() -> str:
    """The influence of the chain's other constraints (the lower bone's, the end bone's): that of
    the upper bone's, which :func:`influence` drives, so its checks are evaluated once a chain.
    Variable: ``w`` that influence."""
    return _checked("w")


def roll(reach: float, tolerance: float, side: float = 1.0) -> str:
    """The bend plane's turn about forward (the aim frame's Y axis), twist included (D2, D3, D9):
    the twist times the chain's ``side`` (-1 on the right of a mirrored rig).

    Variables: ``x y z`` the pole hint in the aim frame (forward is +Y); ``mRC`` row R, column C
    of the aim frame's axes in armature space (the fallback axis, D3: the armature axis with the
    smallest forward component, ties X, Y, Z); ``t`` the twist (radians). The bend direction is
    the frame's +Z turned by the result about +Y.
    """
    fallback = (
        "(atan2(m00,m02) if abs(m01)<=abs(m11) and abs(m01)<=abs(m21)"
        " else (atan2(m10,m12) if abs(m11)<=abs(m21) else atan2(m20,m22)))"
    )
    near = f"{number(tolerance)}*max(sqrt(x*x+y*y+z*z),{number(reach)})"
    body = f"(atan2(x,z) if sqrt(x*x+z*z)>{near} else {fallback}){'+' if side > 0.0 else '-'}t"
    return _checked(_guarded(body, "x==x and y==y and z==z"))


def offset_angle(offset: float, side: float = 1.0, own: str = "") -> str:
    """A roll read from the chain's setting (contract D11): the setting times the chain's ``side``
    (-1 on the right of a mirrored rig, so that equal stored values mirror) plus the channel's
    constant ``offset`` (radians), or the offset alone when the setting is not a number; plus
    ``own`` (:func:`own_turn`'s text) when given. Variable: ``r`` the roll setting (radians), and
    those of ``own``."""
    roll = "r" if side > 0.0 else "-r"
    offset_text = number(offset, exact=True)
    body = _guarded(f"{roll}+{offset_text}", "r==r", offset_text)
    return _checked(f"({body})+{own}" if own else body)


def _product(first: tuple, second: tuple) -> tuple:
    """Quaternion product ``first second`` of quaternions whose components are sums of signed
    products of symbols: each component a tuple of (sign, factors)."""

    def times(left, right):
        return tuple((a * b, fa + fb) for a, fa in left for b, fb in right)

    def negated(terms):
        return tuple((-sign, factors) for sign, factors in terms)

    (pw, px, py, pz), (qw, qx, qy, qz) = first, second
    return (
        times(pw, qw) + negated(times(px, qx) + times(py, qy) + times(pz, qz)),
        times(pw, qx) + times(px, qw) + times(py, qz) + negated(times(pz, qy)),
        times(pw, qy) + negated(times(px, qz)) + times(py, qw) + times(pz, qx),
        times(pw, qz) + times(px, qy) + negated(times(py, qx)) + times(pz, qw),
    )


def _sum(terms: tuple) -> str:
    text = ""
    for sign, factors in terms:
        text += ("-" if sign < 0 else "+") + "*".join(sorted(factors))
    return text.lstrip("+")


# Blender's rotation_mode enum read by a driver: QUATERNION 0, AXIS_ANGLE -1, the Euler orders 1-6.
QUATERNION_MODE, AXIS_ANGLE_MODE = 0, -1


def own_turn(rotation_mode: str) -> str:
    """The turn about its own Y axis of a bone's rotation, the twist of its swing-twist split:
    ``2 atan2(q.y, q.w)`` of the rotation's quaternion ``q`` (contract D11: the lower bone's own
    turn, which Blender's IK keeps too), from the channels of the bone's rotation mode ``m``:
    quaternion, and the Euler order ``rotation_mode`` (XYZ when it is ``QUATERNION``); or, for
    ``AXIS_ANGLE``, axis-angle and quaternion. Variables: ``m`` the rotation mode (Blender's enum
    value); ``qw qy`` the quaternion's W and Y; ``x y z`` the Euler angles; ``aa ax ay az`` the
    axis-angle's angle and axis (of any length).

    >>> own_turn("AXIS_ANGLE")
    '(2*atan2(sin(aa/2)*ay,cos(aa/2)*sqrt(ax*ax+ay*ay+az*az)) if m==-1 else 2*atan2(qy,qw))'
    """
    quaternion = "2*atan2(qy,qw)"
    if rotation_mode == "AXIS_ANGLE":
        axis_angle = "2*atan2(sin(aa/2)*ay,cos(aa/2)*sqrt(ax*ax+ay*ay+az*az))"
        return f"({axis_angle} if m=={AXIS_ANGLE_MODE} else {quaternion})"
    order = "XYZ" if rotation_mode == "QUATERNION" else rotation_mode
    # An Euler order applies its first axis first: q = q(third) q(second) q(first).
    axes = {}
    for index, axis in enumerate("xyz"):
        parts: list[tuple] = [(), (), (), ()]
        parts[0] = ((1, (f"cos({axis}/2)",)),)
        parts[index + 1] = ((1, (f"sin({axis}/2)",)),)
        axes[axis.upper()] = tuple(parts)
    rotation = axes[order[0]]
    for axis in order[1:]:
        rotation = _product(axes[axis], rotation)
    w, _, y, _ = rotation
    return f"({quaternion} if m=={QUATERNION_MODE} else 2*atan2({_sum(y)},{_sum(w)}))"


def own_turn_modes(rotation_mode: str) -> tuple[str, str]:
    """The two rotation modes :func:`own_turn` reads for a bone built in ``rotation_mode``."""
    if rotation_mode == "AXIS_ANGLE":
        return "AXIS_ANGLE", "QUATERNION"
    return "QUATERNION", "XYZ" if rotation_mode == "QUATERNION" else rotation_mode


_FUNCTIONS = {
    "min": min,
    "max": max,
    "abs": abs,
    "sqrt": math.sqrt,
    "acos": math.acos,
    "atan2": math.atan2,
    "sin": math.sin,
    "cos": math.cos,
    "exp": math.exp,
    "pi": math.pi,
    "clamp": lambda value, low, high: min(max(value, low), high),
}


def evaluate(text: str, **variables: float) -> float:
    """Evaluate an expression of this module in Python, as Blender's simple-expression evaluator
    would (the same functions); for tests and checks."""
    return float(eval(text, {"__builtins__": {}}, {**_FUNCTIONS, **variables}))

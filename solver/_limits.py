# SPDX-License-Identifier: GPL-3.0-or-later
"""Numeric limits shared by the scalar and the batch solver, so both take the same branches."""

# |p_perp|^2 < NEAR_LINE * |q|^2 (the pole within 1e-4 rad of the root-target line): the plain
# projection loses up to ulp * |q| / |p_perp| of the pole direction, so rebuild it exactly.
NEAR_LINE = 1e-8

# The scalar fast path (plain formulas) runs while squared norms stay below NORM2_HIGH, the reach
# within [REACH_LOW, REACH_HIGH] and the tolerance >= TOLERANCE_LOW; then eps >= 2**-300, so any
# target or pole hint whose squared distance underflows is within eps of the root anyway. Outside,
# the same formulas run on power-of-two scaled values (solver/_scaled.py).
NORM2_HIGH = 2.0**400
REACH_LOW = 2.0**-200
REACH_HIGH = 2.0**200
TOLERANCE_LOW = 2.0**-100

# Bone lengths above HUGE_INPUT are multiplied by PRESCALE, so that a + b stays finite; the
# distances and the triangle are then in those units, and the joint's and end's offsets from the
# root are multiplied back by UNPRESCALE. (A difference such as target - root that overflows is
# taken from the halved points instead: solver/_scaled.py.)
HUGE_INPUT = 2.0**1000
PRESCALE = 2.0**-64
UNPRESCALE = 2.0**64

# Power-of-two scale exponents are clamped to this range, so 2**k and 2**-k are normal floats.
SCALE_EXPONENT_MIN = -1000
SCALE_EXPONENT_MAX = 1000

# A triangle side d below THIN_SIDE * (a + b) (possible only with tolerance < TOLERANCE_LOW) is
# solved through ratios to d, since d * d and the area would underflow.
THIN_SIDE = 2.0**-500

# Veltkamp splitter for Dekker's exact product (2**27 + 1 for binary64).
SPLIT = 134217729.0

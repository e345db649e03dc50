# SPDX-License-Identifier: GPL-3.0-or-later
"""The solve a chain should show: the solver's answer for the chain's evaluated inputs (its
network's root bone, target and pole, settings), in armature space, with the pole's warnings
(docs/contract.md)."""

from __future__ import annotations

import math

from mathutils import Matrix, Vector

from ..network import layout, naming, rest
from ..network.layout import SOLVER_TOLERANCE
from ..solver import MIN_REACH, solve_two_bone_ik
from ..solver.expressions import FLOAT32_FAR
from . import pose, settings
from .bones import ChainError, chain_bones
from .sources import source_point
from .status import CLEAN, NO_POLE, POLE_NEAR, POLE_NEAR_LINE, POLE_ON_LINE, Status


def _pole_warning(root: Vector, target: Vector, pole_hint: Vector, length: float) -> Status:
    """POLE_ON_LINE when the solver falls back to its axis (contract D2's test), POLE_NEAR when the
    pole is within POLE_NEAR_LINE x length of the root-target line, else CLEAN."""
    # In float64: mathutils is float32, where a far pole's cross product overflows.
    forward = [target[axis] - root[axis] for axis in range(3)]
    offset = [pole_hint[axis] - root[axis] for axis in range(3)]
    forward_length = math.hypot(*forward)
    if forward_length <= SOLVER_TOLERANCE * length:
        return CLEAN  # target at the root: the fold direction comes from the pole alone
    cross = (
        offset[1] * forward[2] - offset[2] * forward[1],
        offset[2] * forward[0] - offset[0] * forward[2],
        offset[0] * forward[1] - offset[1] * forward[0],
    )
    distance = math.hypot(*cross) / forward_length
    if distance <= SOLVER_TOLERANCE * max(math.hypot(*offset), length):
        return POLE_ON_LINE
    return POLE_NEAR if distance < POLE_NEAR_LINE * length else CLEAN


def expected(chain) -> tuple[Vector, Vector, bool, bool, float, Status]:
    """The solver's (joint, end, reachable, too close, chain length, Status) for the chain's
    current inputs, armature space: the root and lengths of its network's root bone, the target
    and pole (or the rest bend side). Under an uneven scale of a parent the solve is made in the
    root's frame, where the chain's bones are rigid (contract D6), and mapped back. Raises
    ChainError."""
    obj = chain.id_data
    names = naming.chain_parts(chain)
    root_bone = obj.pose.bones[names.root]
    world = obj.matrix_world
    if not pose.invertible(world):
        raise ChainError(f"Armature '{obj.name}' has zero or invalid scale: nothing to solve")
    to_armature = world.inverted()
    target = source_point(chain, "target")
    if target is None:
        raise ChainError("Set a target object")
    pole = source_point(chain, "pole")
    values = settings.checked(chain)
    upper, lower = chain_bones(obj, chain)
    frame = root_bone.matrix
    a = (lower.head_local - upper.head_local).length
    b = lower.length
    scale = frame.to_3x3().col[1].length
    if not (a + b) * scale >= MIN_REACH or not math.isfinite(scale) or not pose.invertible(frame):
        raise ChainError(
            f"The chain's bones are {(a + b) * scale:.3g} armature units long here: a parent's pose "
            "scale is zero or not a number, nothing to solve"
        )
    target_point_ = to_armature @ target
    status = CLEAN
    if pole is None:
        # The builder's rule for the hint bone (network.rest.hint_offset), from the chain's rest:
        # an edited hint bone then shows as a miss, not as the bend it gives.
        pole_hint = frame @ rest.hint_offset(upper, lower)
        status = NO_POLE
    else:
        pole_hint = to_armature @ pole
    if not math.isfinite(sum((*frame.translation, *target_point_, *pole_hint))):
        raise ChainError("Target, pole or bones are at a non-finite position")
    # A rotation and an even scale: solved in armature space, whose axes the fallback (D3) takes.
    # Else in the root's frame, in rest lengths.
    even = pose.uniform(frame.to_3x3())
    to_space = Matrix.Identity(4) if even else frame.inverted()
    from_space = Matrix.Identity(4) if even else frame
    length_scale = scale if even else 1.0
    root, target_in, pole_in = (to_space @ point for point in (frame.translation, target_point_, pole_hint))
    if not math.dist(root, target_in) / length_scale < FLOAT32_FAR:
        raise ChainError(
            f"The target is {math.dist(root, target_in):.3g} armature units from the chain's root: past "
            f"what Blender's float32 math can solve ({FLOAT32_FAR:.0e} x its scale)"
        )
    result = solve_two_bone_ik(
        root,
        target_in,
        pole_in,
        a * length_scale,
        b * length_scale,
        tolerance=SOLVER_TOLERANCE,
        twist=values["twist"] * layout.built_side(obj, names),  # stored times the side (D9)
        softness=min(max(values["softness"], 0.0), 1.0),
    )
    if status == CLEAN:
        status = _pole_warning(root, target_in, pole_in, (a + b) * length_scale)
    too_close = not result.reachable and (target_in - root).length < abs(a - b) * length_scale
    joint_point, end_point = (from_space @ Vector(point) for point in (result.joint, result.end))
    length = (joint_point - frame.translation).length + (end_point - joint_point).length
    return joint_point, end_point, bool(result.reachable), too_close, length, status

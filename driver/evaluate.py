# SPDX-License-Identifier: GPL-3.0-or-later
"""Evaluate the chains of an armature: read bones, target and pole, solve, write the pose back.

Reads go through the depsgraph the handler was given (``evaluated_get``), writes go to the
original pose bones. Nothing here keeps a reference to Blender data between calls.
"""

from __future__ import annotations

import math

from mathutils import Matrix, Vector

from ..solver import solve_two_bone_ik
from . import pose

# Blender stores bones and matrices in float32 (SPEC D2).
SOLVER_TOLERANCE = 1e-6
# A write smaller than this (relative to the chain's length, or radians-ish for rotations) is
# float32 noise: skipping it is what keeps the handler from feeding itself.
CHANGE_EPSILON = 1e-5


class ChainError(Exception):
    """A chain that cannot be solved now; the message is the status shown to the user."""


def _flat(matrix: Matrix) -> list[float]:
    return [value for row in matrix for value in row]


def _matrix(values) -> Matrix:
    return Matrix((values[0:4], values[4:8], values[8:12], values[12:16]))


def _differs(first: Matrix, second: Matrix, epsilon: float) -> bool:
    return any(abs(p - q) > epsilon for row_p, row_q in zip(first, second) for p, q in zip(row_p, row_q))


def _finite(vector) -> bool:
    return all(math.isfinite(value) for value in vector)


def chain_bones(obj, chain):
    """The chain's (upper, lower) ``bpy.types.Bone`` on the original armature, or ChainError."""
    bones = obj.data.bones
    for name, label in ((chain.upper_bone, "upper"), (chain.lower_bone, "lower")):
        if not name:
            raise ChainError(f"Set the chain's {label} bone")
        if bones.get(name) is None:
            raise ChainError(f"Bone '{name}' not found in '{obj.data.name}'")
    upper, lower = bones[chain.upper_bone], bones[chain.lower_bone]
    if lower.parent is None or lower.parent.name != upper.name:
        raise ChainError(f"Bone '{lower.name}' is not a child of '{upper.name}'")
    return upper, lower


def _world_point(obj, depsgraph) -> Vector:
    return obj.evaluated_get(depsgraph).matrix_world.translation


def _depends_on(obj, armature, bone_names) -> bool:
    """True when ``obj`` is moved by the armature's chain bones (it would chase its own tail)."""
    while obj is not None:
        if obj.parent == armature and obj.parent_type == "BONE" and obj.parent_bone in bone_names:
            return True
        obj = obj.parent
    return False


def evaluate_chain(obj, chain, depsgraph) -> None:
    """Solve one chain of ``obj`` and write its pose and outputs; problems become ``chain.status``.

    Never raises ChainError; other exceptions are left to the caller (the handler turns them into
    a status too).
    """
    try:
        status = _solve_and_write(obj, chain, depsgraph)
    except ChainError as error:
        status = str(error)
        _set_if_changed(chain, "reachable", False)
        _set_if_changed(chain, "too_close", False)
        _set_if_changed(chain, "shortfall", 0.0)
    _set_if_changed(chain, "status", status)


def _set_if_changed(chain, name: str, value) -> None:
    # Writing an unchanged property would still tag the armature for another evaluation.
    current = getattr(chain, name)
    if isinstance(value, float):
        if abs(current - value) <= 1e-9 * max(1.0, abs(value)):
            return
    elif isinstance(value, tuple):
        if all(abs(p - q) <= 1e-9 * max(1.0, abs(q)) for p, q in zip(current, value)):
            return
    elif current == value:
        return
    setattr(chain, name, value)


def _solve_and_write(obj, chain, depsgraph) -> str:
    upper_bone, lower_bone = chain_bones(obj, chain)
    target = chain.target
    if target is None:
        raise ChainError("Set a target object")
    bone_names = {upper_bone.name, lower_bone.name} | {child.name for child in lower_bone.children_recursive}
    for other, label in ((target, "target"), (chain.pole, "pole")):
        if other is not None and (other == obj or _depends_on(other, obj, bone_names)):
            raise ChainError(f"The {label} '{other.name}' moves with the chain's own bones: a cycle")

    obj_eval = obj.evaluated_get(depsgraph)
    world = obj_eval.matrix_world
    if abs(world.determinant()) < 1e-12:
        raise ChainError(f"Armature '{obj.name}' has zero scale: nothing to solve")
    to_armature = world.inverted()
    target_point = to_armature @ _world_point(target, depsgraph)
    pose_eval = obj_eval.pose
    upper_eval = pose_eval.bones[upper_bone.name]
    root = upper_eval.head.copy()
    parent_matrix = upper_eval.parent.matrix.copy() if upper_eval.parent else None

    rest = pose.chain_rest(upper_bone, lower_bone)
    if rest.upper_length + rest.lower_length <= 0.0:
        raise ChainError("Both chain bones have zero length")
    status = ""
    if chain.pole is not None:
        pole_hint = to_armature @ _world_point(chain.pole, depsgraph)
    else:
        # No pole: bend as in the rest pose, carried by the upper bone's parent.
        side = rest.pole_side
        if parent_matrix is not None:
            side = (parent_matrix.to_3x3() @ upper_bone.parent.matrix_local.to_3x3().inverted()) @ side
        pole_hint = root + side * (rest.upper_length + rest.lower_length)
        status = "No pole: the joint bends as in the rest pose"
    if not (_finite(target_point) and _finite(pole_hint) and _finite(root)):
        raise ChainError("Target, pole or bones are at a non-finite position: keeping the last pose")

    result = solve_two_bone_ik(
        root, target_point, pole_hint, rest.upper_length, rest.lower_length, tolerance=SOLVER_TOLERANCE
    )
    joint, end = Vector(result.joint), Vector(result.end)
    normal = pose.solved_normal(root, joint, end, pole_hint)
    if normal is None:
        normal = rest.normal  # pole on the line and the chain straight: keep the rest roll
        if parent_matrix is not None:
            normal = (parent_matrix.to_3x3() @ upper_bone.parent.matrix_local.to_3x3().inverted()) @ normal
        status = status or "Pole is on the root-target line: the bend uses the fallback axis"

    _write_pose(obj, chain, upper_bone, lower_bone, rest, parent_matrix, root, joint, end, normal)

    world_end = world @ end
    _set_if_changed(chain, "reachable", bool(result.reachable))
    shortfall = 0.0 if result.reachable else (world_end - _world_point(target, depsgraph)).length
    _set_if_changed(chain, "shortfall", shortfall)
    too_close = not result.reachable and (target_point - root).length < abs(rest.upper_length - rest.lower_length)
    _set_if_changed(chain, "too_close", too_close)
    _set_if_changed(chain, "joint", tuple(world @ joint))
    _set_if_changed(chain, "end", tuple(world_end))
    return status


def _write_pose(obj, chain, upper_bone, lower_bone, rest, parent_matrix, root, joint, end, normal) -> None:
    pose_bones = obj.pose.bones
    upper_pose_bone = pose_bones[upper_bone.name]
    lower_pose_bone = pose_bones[lower_bone.name]
    current_upper = upper_pose_bone.matrix_basis.copy()
    current_lower = lower_pose_bone.matrix_basis.copy()

    # What the user or the animation set since our last write is the FK pose to blend from.
    if (
        not chain.has_written
        or _differs(current_upper, _matrix(chain.written_upper), CHANGE_EPSILON)
        or _differs(current_lower, _matrix(chain.written_lower), CHANGE_EPSILON)
    ):
        chain.fk_upper = _flat(current_upper)
        chain.fk_lower = _flat(current_lower)
    fk_upper, fk_lower = _matrix(chain.fk_upper), _matrix(chain.fk_lower)

    solved_upper, solved_lower = pose.solve_bases(
        upper_bone, lower_bone, rest, parent_matrix, root, joint, end, normal, fk_upper, fk_lower
    )
    new_upper = pose.blend(fk_upper, solved_upper, chain.influence)
    new_lower = pose.blend(fk_lower, solved_lower, chain.influence)
    if not (_differs(new_upper, current_upper, CHANGE_EPSILON) or _differs(new_lower, current_lower, CHANGE_EPSILON)):
        if not chain.has_written:
            chain.written_upper, chain.written_lower = _flat(current_upper), _flat(current_lower)
            chain.has_written = True
        return
    upper_pose_bone.matrix_basis = new_upper
    lower_pose_bone.matrix_basis = new_lower
    # Store what Blender kept (channels are float32, Euler or quaternion), for the FK check above.
    chain.written_upper = _flat(upper_pose_bone.matrix_basis)
    chain.written_lower = _flat(lower_pose_bone.matrix_basis)
    chain.has_written = True


def evaluate_armature(obj, depsgraph) -> None:
    """Evaluate every enabled chain of one armature object; one broken chain never stops the others."""
    for chain in obj.two_bone_ik.chains:
        if not chain.enabled:
            continue
        try:
            evaluate_chain(obj, chain, depsgraph)
        except Exception as error:  # noqa: BLE001  a handler must never raise
            try:
                chain.status = f"Internal error: {error}"
            except Exception:  # noqa: BLE001
                pass

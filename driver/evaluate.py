# SPDX-License-Identifier: GPL-3.0-or-later
"""Evaluate the chains of an armature: read bones, target and pole, solve, write the pose back.

Reads go through the depsgraph the handler was given (``evaluated_get``); writes go to the
original pose bones. Nothing here keeps a reference to Blender data between calls.
"""

from __future__ import annotations

import math

from mathutils import Matrix, Vector

from ..solver import solve_two_bone_ik
from . import pose

# Blender stores bones and matrices in float32 (SPEC D2).
SOLVER_TOLERANCE = 1e-6
# Changes below these are float32 noise: skipping them keeps the handler from feeding itself.
# Rotation entries of matrix_basis are unitless; location entries scale with the chain.
ROTATION_EPSILON = 2e-6
LOCATION_EPSILON = 2e-6  # x chain length
# Output properties are float32: compare at that precision so an unchanged output is not re-written.
OUTPUT_EPSILON = 1e-6


class ChainError(Exception):
    """A chain that cannot be solved now; the message is the status shown to the user."""


def _flat(matrix: Matrix) -> list[float]:
    return [value for row in matrix for value in row]


def _matrix(values) -> Matrix:
    return Matrix((values[0:4], values[4:8], values[8:12], values[12:16]))


def _differs(first: Matrix, second: Matrix, length: float) -> bool:
    """True when two matrix_basis values differ by more than float32 noise."""
    location_epsilon = LOCATION_EPSILON * length
    for row in range(3):
        for column in range(3):
            if abs(first[row][column] - second[row][column]) > ROTATION_EPSILON:
                return True
        if abs(first[row][3] - second[row][3]) > location_epsilon:
            return True
    return False


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


def end_bone(chain, lower_bone):
    """The bone End Rotation applies to: ``chain.end_bone`` or the lower bone's first child; or None."""
    if chain.end_bone:
        child = lower_bone.children.get(chain.end_bone)
        if child is None:
            raise ChainError(f"End bone '{chain.end_bone}' is not a child of '{lower_bone.name}'")
        return child
    return lower_bone.children[0] if len(lower_bone.children) else None


def _moves_with(obj, armature, bone_names, seen=None) -> bool:
    """True when ``obj`` is moved by the armature's chain bones: parenting or constraints, any depth."""
    seen = set() if seen is None else seen
    while obj is not None and obj.name_full not in seen:
        seen.add(obj.name_full)
        if obj == armature:
            return False  # a control bone of the same rig: checked by bone name instead
        if obj.parent == armature and obj.parent_type == "BONE" and obj.parent_bone in bone_names:
            return True
        for constraint in getattr(obj, "constraints", ()):
            other = getattr(constraint, "target", None)
            if other is None or not constraint.enabled:
                continue
            if other == armature and getattr(constraint, "subtarget", "") in bone_names:
                return True
            if other != armature and _moves_with(other, armature, bone_names, seen):
                return True
        obj = obj.parent
    return False


def _source(obj, chain, depsgraph, which: str, driven: set[str]) -> Matrix | None:
    """World matrix of the chain's target or pole (object, or bone head of an armature), or None."""
    source = getattr(chain, which)
    if source is None:
        return None
    bone_name = getattr(chain, f"{which}_bone") if source.type == "ARMATURE" else ""
    if source == obj and not bone_name:
        raise ChainError(f"The {which} is this armature: pick one of its control bones as {which} bone")
    if bone_name and source == obj and bone_name in driven:
        raise ChainError(f"The {which} bone '{bone_name}' moves with the chain's own bones: a cycle")
    if _moves_with(source, obj, driven):
        raise ChainError(f"The {which} '{source.name}' moves with the chain's own bones: a cycle")
    evaluated = source.evaluated_get(depsgraph)
    if not bone_name:
        return evaluated.matrix_world
    pose_bone = evaluated.pose.bones.get(bone_name) if evaluated.pose else None
    if pose_bone is None:
        raise ChainError(f"{which.capitalize()} bone '{bone_name}' not found in '{source.name}'")
    return evaluated.matrix_world @ pose_bone.matrix


def evaluate_chain(obj, chain, depsgraph) -> None:
    """Solve one chain of ``obj``, write its pose and outputs; a problem becomes ``chain.status``.

    ChainError never escapes; other exceptions are left to the caller.
    """
    try:
        status = _solve_and_write(obj, chain, depsgraph)
    except ChainError as error:
        status = str(error)
        _set_if_changed(chain, "reachable", False)
        _set_if_changed(chain, "too_close", False)
    _set_if_changed(chain, "status", status)


def _set_if_changed(chain, name: str, value) -> None:
    # Writing an unchanged property would still tag the armature for another evaluation.
    current = getattr(chain, name)
    if isinstance(value, float):
        if abs(current - value) <= OUTPUT_EPSILON * max(1.0, abs(value)):
            return
    elif isinstance(value, tuple):
        if all(abs(p - q) <= OUTPUT_EPSILON * max(1.0, abs(q)) for p, q in zip(current, value)):
            return
    elif current == value:
        return
    setattr(chain, name, value)


def _solve_and_write(obj, chain, depsgraph) -> str:
    upper_bone, lower_bone = chain_bones(obj, chain)
    driven = {upper_bone.name} | {child.name for child in upper_bone.children_recursive}
    target_matrix = _source(obj, chain, depsgraph, "target", driven)
    if target_matrix is None:
        raise ChainError("Set a target object")
    pole_matrix = _source(obj, chain, depsgraph, "pole", driven)
    end = end_bone(chain, lower_bone) if chain.end_rotation == "TARGET" else None
    if chain.end_rotation == "TARGET" and end is None:
        raise ChainError(f"End Rotation is Target, but '{lower_bone.name}' has no child bone to turn")

    obj_eval = obj.evaluated_get(depsgraph)
    world = obj_eval.matrix_world
    if not _finite(v for row in world for v in row) or abs(world.determinant()) < 1e-12:
        raise ChainError(f"Armature '{obj.name}' has zero or invalid scale: nothing to solve")
    to_armature = world.inverted()
    target_point = to_armature @ target_matrix.translation
    bones_eval = obj_eval.pose.bones
    upper_eval = bones_eval[upper_bone.name]
    parent_matrix = upper_eval.parent.matrix.copy() if upper_eval.parent else None
    rest_length = (lower_bone.head_local - upper_bone.head_local).length + lower_bone.length
    if rest_length <= 0.0:
        raise ChainError("Both chain bones have zero length")
    fk_upper = _fk_basis(chain, "upper", upper_eval.matrix_basis.copy(), rest_length)
    fk_lower = _fk_basis(chain, "lower", bones_eval[lower_bone.name].matrix_basis.copy(), rest_length)
    _set_if_changed(chain, "has_written", True)
    shape = pose.chain_shape(upper_bone, lower_bone, parent_matrix, fk_upper, fk_lower)
    length = shape.upper_length + shape.lower_length
    if not length > 0.0:
        raise ChainError("The chain's pose scale leaves it no length")
    root = shape.head

    status = ""
    if pole_matrix is not None:
        pole_hint = to_armature @ pole_matrix.translation
    else:
        pole_hint = root + shape.pole_side * length
        status = "No pole: the joint bends as in the rest pose"
    if not (_finite(target_point) and _finite(pole_hint) and _finite(root)):
        raise ChainError("Target, pole or bones are at a non-finite position: keeping the last pose")

    result = solve_two_bone_ik(
        root, target_point, pole_hint, shape.upper_length, shape.lower_length, tolerance=SOLVER_TOLERANCE
    )
    joint, end_point = Vector(result.joint), Vector(result.end)
    normal = pose.solved_normal(root, joint, end_point, pole_hint)
    if normal is None:
        normal = shape.normal  # straight chain, pole on the line: keep the unposed roll
        status = status or "Pole is on the root-target line: the bend uses the fallback axis"

    solved_upper, solved_lower, _ = pose.solve_bases(
        upper_bone, lower_bone, shape, parent_matrix, joint, end_point, normal, fk_upper, fk_lower
    )
    new_upper = pose.blend(fk_upper, solved_upper, chain.influence)
    new_lower = pose.blend(fk_lower, solved_lower, chain.influence)
    bases = [(chain, "upper", upper_bone.name, new_upper), (chain, "lower", lower_bone.name, new_lower)]
    if end is not None:
        upper_pose = pose.to_pose(upper_bone, new_upper, parent_matrix)
        lower_pose = pose.to_pose(lower_bone, new_lower, upper_pose)
        fk_end = _fk_basis(chain, "end", bones_eval[end.name].matrix_basis.copy(), rest_length)
        _set_if_changed(chain, "has_written_end", True)
        orientation = (to_armature.to_3x3() @ target_matrix.to_3x3()).normalized()
        if not abs(orientation.determinant()) > 1e-6:  # False for NaN too
            raise ChainError("Target has a zero or non-finite scale or rotation: keeping the last pose")
        solved_end = pose.turned_basis(end, fk_end, end_point, orientation, lower_pose)
        bases.append((chain, "end", end.name, pose.blend(fk_end, solved_end, chain.influence)))
    _write(obj, bases, length)

    reachable = bool(result.reachable)
    constrained = _constrained_bone(obj, (upper_bone.name, lower_bone.name))
    if constrained:
        # Other constraints move the bones after us: judge reach by the evaluated pose (it
        # reflects the previous write, so it settles one update later), never a false "reachable".
        miss = (world @ bones_eval[lower_bone.name].tail - target_matrix.translation).length
        if miss > 10 * SOLVER_TOLERANCE * length * max(abs(v) for v in world.to_scale()):
            reachable = False
            status = f"Constraints on '{constrained}' move the chain: its end misses the target"
    _set_if_changed(chain, "reachable", reachable)
    fold = abs(shape.upper_length - shape.lower_length)
    _set_if_changed(chain, "too_close", not result.reachable and (target_point - root).length < fold)
    return status


def _constrained_bone(obj, names) -> str:
    """Name of the first chain bone carrying an active constraint, or ''."""
    for name in names:
        for constraint in obj.pose.bones[name].constraints:
            if constraint.enabled and constraint.influence > 0.0:
                return name
    return ""


def _fk_basis(chain, slot: str, evaluated_basis: Matrix, length: float) -> Matrix:
    """The FK matrix_basis of one bone: what the user or the animation set since our last write.

    When the evaluated basis is not what the driver wrote, it came from the user or the animation
    and becomes the stored FK pose; otherwise the stored FK pose stands. Influence therefore never
    blends from the driver's own output (case C10).
    """
    written = getattr(chain, f"written_{slot}")
    has_written = chain.has_written_end if slot == "end" else chain.has_written
    if not has_written or _differs(evaluated_basis, _matrix(written), length):
        setattr(chain, f"fk_{slot}", _flat(evaluated_basis))
        setattr(chain, f"written_{slot}", _flat(evaluated_basis))
        return evaluated_basis
    return _matrix(getattr(chain, f"fk_{slot}"))


def _write(obj, bases, length: float) -> None:
    """Write each (chain, slot, bone, basis) whose basis changed beyond float32 noise."""
    pose_bones = obj.pose.bones
    changed = [
        (chain, slot, pose_bones[name], basis)
        for chain, slot, name, basis in bases
        if _differs(basis, pose_bones[name].matrix_basis, length)
    ]
    for chain, slot, pose_bone, basis in changed:
        pose_bone.matrix_basis = basis
        # Remember what Blender kept (float32 channels), to tell our writes from the user's.
        setattr(chain, f"written_{slot}", _flat(pose_bone.matrix_basis))


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

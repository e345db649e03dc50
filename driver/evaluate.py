# SPDX-License-Identifier: GPL-3.0-or-later
"""Evaluate the chains of an armature: read bones, target and pole, solve, write the pose back.

Reads go through the depsgraph the handler was given (``evaluated_get``); writes go to the
original pose bones. Nothing here keeps a reference to Blender data between calls.
"""

from __future__ import annotations

import math

from mathutils import Matrix, Vector

from ..solver import solve_two_bone_ik
from . import mechanism, pose
from .bones import ChainError, chain_bones, end_bone

# Blender stores bones and matrices in float32 (SPEC D2).
SOLVER_TOLERANCE = 1e-6
# A pole closer to the root-target line than this share of the chain's length makes the bend
# plane unstable (a small move swings the knee): the chain says so, though it still solves.
POLE_NEAR_LINE = 1e-3

# Statuses of chains that still solved; any other status means the chain did not solve.
NO_POLE = "No pole: the joint bends as in the rest pose"
POLE_ON_LINE = "Pole is on the root-target line: the bend uses the fallback axis"
POLE_NEAR = "Pole is nearly on the root-target line: the bend is unstable"
WARNING_PREFIXES = ("No pole", "Pole is on", "Pole is nearly", "Constraints on")


def solved(status: str) -> bool:
    """Whether a chain with this ``status`` solved: no status, or only a warning."""
    return not status or status.startswith(WARNING_PREFIXES)


def driven_bones(upper_bone) -> set[str]:
    """Names of the bones the chain moves: the upper bone and everything below it."""
    return {upper_bone.name} | {child.name for child in upper_bone.children_recursive}


def _deformed_by(obj, armature, upper_bone) -> bool:
    """Whether ``obj`` is a mesh (or curve, lattice) deformed by the chain's bones through an
    Armature modifier: its vertices move with them."""
    modifiers = getattr(obj, "modifiers", ())
    if not any(modifier.type == "ARMATURE" and modifier.object == armature for modifier in modifiers):
        return False
    driven = driven_bones(upper_bone)
    return any(group.name in driven for group in getattr(obj, "vertex_groups", ()))


def _constraint_targets(constraint):
    """(target object, subtarget name) pairs of a constraint: one, or several (Armature constraint)."""
    target = getattr(constraint, "target", None)
    if target is not None:
        yield target, getattr(constraint, "subtarget", "")
    for item in getattr(constraint, "targets", ()):
        if item.target is not None:
            yield item.target, getattr(item, "subtarget", "")


def _moves_with(obj, armature, upper_bone, seen=None) -> bool:
    """True when ``obj`` is moved by the chain's bones: bone or vertex parenting, constraints
    (including Armature constraints and vertex-group targets), at any depth."""
    seen = set() if seen is None else seen
    while obj is not None and obj.name_full not in seen:
        seen.add(obj.name_full)
        if obj == armature:
            return False  # a control bone of the same rig: checked by bone name instead
        parent = obj.parent
        if parent == armature and obj.parent_type == "BONE" and obj.parent_bone in driven_bones(upper_bone):
            return True
        if (
            parent is not None
            and obj.parent_type in {"VERTEX", "VERTEX_3"}
            and _deformed_by(parent, armature, upper_bone)
        ):
            return True
        for constraint in obj.constraints:
            if not constraint.enabled:
                continue
            for other, subtarget in _constraint_targets(constraint):
                if other == armature:
                    if subtarget in driven_bones(upper_bone):
                        return True
                elif subtarget and _deformed_by(other, armature, upper_bone):
                    return True  # a vertex group of a mesh the chain deforms
                elif _moves_with(other, armature, upper_bone, seen):
                    return True
        obj = parent
    return False


def source_matrix(obj, chain, depsgraph, which: str, upper_bone=None) -> Matrix | None:
    """World matrix of the chain's ``which`` ("target" or "pole"): the object's, or its bone's
    (head) when the object is an armature with a bone named; None when unset.

    With ``upper_bone`` given, a source that moves with the chain's own bones raises ChainError
    ("cycle"), as does a missing bone.
    """
    source = getattr(chain, which)
    if source is None:
        return None
    bone_name = getattr(chain, f"{which}_bone") if source.type == "ARMATURE" else ""
    if source == obj and not bone_name:
        raise ChainError(f"The {which} is this armature: pick one of its control bones as {which} bone")
    if upper_bone is not None:
        if bone_name and source == obj and bone_name in driven_bones(upper_bone):
            raise ChainError(f"The {which} bone '{bone_name}' moves with the chain's own bones: a cycle")
        if (source.parent is not None or len(source.constraints)) and _moves_with(source, obj, upper_bone):
            raise ChainError(f"The {which} '{source.name}' moves with the chain's own bones: a cycle")
    evaluated = source.evaluated_get(depsgraph)
    if not bone_name:
        return evaluated.matrix_world
    pose_bone = evaluated.pose.bones.get(bone_name) if evaluated.pose else None
    if pose_bone is None:
        raise ChainError(f"{which.capitalize()} bone '{bone_name}' not found in '{source.name}'")
    return evaluated.matrix_world @ pose_bone.matrix


def evaluate_chain(obj, chain, depsgraph) -> None:
    """Solve one chain of ``obj`` and write its pose and outputs; a problem becomes ``chain.status``.

    ChainError never escapes; other exceptions are left to the caller (:func:`evaluate_armature`).
    """
    try:
        status, reachable, too_close = _solve_and_write(obj, chain, depsgraph)
    except ChainError as error:
        status, reachable, too_close = str(error), False, False
    # Write only what changed: every write tags the armature for another evaluation.
    if chain.reachable != reachable:
        chain.reachable = reachable
    if chain.too_close != too_close:
        chain.too_close = too_close
    if chain.status != status:
        chain.status = status


def _invertible(matrix: Matrix) -> bool:
    """Whether a world matrix can be inverted reliably: finite, and its determinant not tiny next to
    the product of its axes' lengths (relative, so a 1e-4 scale is fine and a flat one is not)."""
    determinant = matrix.determinant()
    axes = matrix.col[0].xyz.length * matrix.col[1].xyz.length * matrix.col[2].xyz.length
    return math.isfinite(determinant) and axes > 0.0 and abs(determinant) > 1e-6 * axes


def _finite(*vectors) -> bool:
    # A sum of float32 values cannot overflow in float64, so only inf or NaN make it non-finite.
    return math.isfinite(sum(sum(vector) for vector in vectors))


def _solve_and_write(obj, chain, depsgraph) -> tuple[str, bool, bool]:
    """Solve one chain and write its pose into its mechanism bones; returns (status, reachable,
    too_close). Raises ChainError.

    The FK pose is the chain bones' own channels as Blender evaluated them (keys, drivers, typed
    values); the solve keeps their location and scale. Influence and Enabled are applied by Blender,
    through the mechanism's constraints, so they play no part here.
    """
    upper_bone, lower_bone = chain_bones(obj, chain)
    mechanism_upper, mechanism_lower = mechanism.mechanism_bones(obj, chain)
    target_matrix = source_matrix(obj, chain, depsgraph, "target", upper_bone)
    if target_matrix is None:
        raise ChainError("Set a target object")
    pole_matrix = source_matrix(obj, chain, depsgraph, "pole", upper_bone)
    if chain.end_rotation == "TARGET":
        if end_bone(chain, lower_bone) is None:
            raise ChainError(f"End Rotation is Target, but '{lower_bone.name}' has no child bone to turn")
        if not abs(target_matrix.to_3x3().determinant()) > 0.0:  # False for NaN too
            raise ChainError("Target has a zero or non-finite scale or rotation: keeping the last pose")
    if not math.isfinite(chain.influence):
        raise ChainError("Influence is not a number: set it between 0 and 1")

    obj_eval = obj.evaluated_get(depsgraph)
    world = obj_eval.matrix_world
    if not _invertible(world):
        raise ChainError(f"Armature '{obj.name}' has zero or invalid scale: nothing to solve")
    to_armature = world.inverted()
    target_point = to_armature @ target_matrix.translation
    bones_eval = obj_eval.pose.bones
    upper_eval = bones_eval[upper_bone.name]
    lower_eval = bones_eval[lower_bone.name]
    parent_matrix = upper_eval.parent.matrix.copy() if upper_eval.parent else None
    fk_upper, fk_lower = upper_eval.matrix_basis, lower_eval.matrix_basis
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
        status = NO_POLE
    if not _finite(target_point, pole_hint, root):
        raise ChainError("Target, pole or bones are at a non-finite position: keeping the last pose")

    result = solve_two_bone_ik(
        root, target_point, pole_hint, shape.upper_length, shape.lower_length, tolerance=SOLVER_TOLERANCE
    )
    joint, end_point = Vector(result.joint), Vector(result.end)
    normal = pose.solved_normal(root, joint, end_point, pole_hint)
    if normal is None:
        normal = shape.normal  # straight chain, pole on the line: keep the unposed roll
        status = status or POLE_ON_LINE
    elif not status:
        status = _pole_warning(root, target_point, pole_hint, length)

    solved_upper, solved_lower = pose.solve_bases(
        upper_bone, lower_bone, shape, parent_matrix, joint, end_point, normal, fk_upper, fk_lower
    )
    _write(obj, ((mechanism_upper, solved_upper), (mechanism_lower, solved_lower)), length)

    reachable = bool(result.reachable)
    constrained = _constrained_bone(upper_eval, lower_eval)
    if constrained and chain.enabled and chain.influence >= 1.0:
        # Other constraints move the bones after ours: judge reach by the evaluated pose (it
        # reflects the previous write, so it settles one update later), never a false "reachable".
        miss = (world @ lower_eval.tail - target_matrix.translation).length
        if miss > 10 * SOLVER_TOLERANCE * length * max(abs(v) for v in world.to_scale()):
            reachable = False
            status = f"Constraints on '{constrained}' move the chain: its end misses the target"
    fold = abs(shape.upper_length - shape.lower_length)
    too_close = not result.reachable and (target_point - root).length < fold
    return status, reachable, too_close


def _pole_warning(root: Vector, target: Vector, pole_hint: Vector, length: float) -> str:
    """POLE_ON_LINE when the solver fell back to its axis (SPEC D2's test), POLE_NEAR when the pole
    is within POLE_NEAR_LINE x length of the root-target line, else ''."""
    forward = target - root
    if forward.length <= SOLVER_TOLERANCE * length:
        return ""  # target at the root: the fold direction comes from the pole alone
    offset = pole_hint - root
    distance = offset.cross(forward).length / forward.length
    if distance <= SOLVER_TOLERANCE * max(offset.length, length):
        return POLE_ON_LINE
    return POLE_NEAR if distance < POLE_NEAR_LINE * length else ""


def _constrained_bone(*pose_bones) -> str:
    """Name of the first of ``pose_bones`` carrying an active constraint other than the chain's own
    (mechanism.py names them), or ''."""
    for pose_bone in pose_bones:
        constraints = pose_bone.constraints
        if len(constraints) > 1 and any(
            c.enabled and c.influence > 0.0 and c.name != mechanism.CONSTRAINT for c in constraints
        ):
            return pose_bone.name
    return ""


def _write(obj, bases, length: float) -> None:
    """Write each (mechanism bone, basis) whose basis changed beyond float32 noise: every write
    makes Blender evaluate the armature again."""
    pose_bones = obj.pose.bones
    for name, basis in bases:
        pose_bone = pose_bones[name]
        if pose.differs(basis, pose_bone.matrix_basis, length):
            pose_bone.matrix_basis = basis


def _unchanged(obj, chain, updated: set[int]) -> bool:
    """Whether none of the chain's objects (armature, target, pole) is among the ``updated`` IDs."""
    if obj.session_uid in updated:
        return False
    return all(source is None or source.session_uid not in updated for source in (chain.target, chain.pole))


def _shared_bones(chains) -> dict[int, tuple[str, str]]:
    """Chains on a bone an earlier chain uses: {index: (bone, earlier chain's name)}.

    The mechanism of a bone belongs to the first chain using it (mechanism.owns_bones): two chains
    on one bone would fight over it, so only the first one solves, enabled or not.
    """
    owners: dict[str, str] = {}
    shared = {}
    for index, chain in enumerate(chains):
        bones = (chain.upper_bone, chain.lower_bone)
        clash = next((bone for bone in bones if bone in owners), None)
        if clash is not None:
            shared[index] = (clash, owners[clash])
            continue
        for bone in bones:
            owners.setdefault(bone, chain.name)
    return shared


def evaluate_armature(obj, depsgraph, updated: set[int] | None = None) -> None:
    """Evaluate every enabled chain of one armature object; one broken chain never stops the others.

    With ``updated`` (session_uids of the IDs this evaluation changed), chains whose armature,
    target and pole are all unchanged are skipped.
    """
    chains = obj.two_bone_ik.chains
    shared = _shared_bones(chains) if len(chains) > 1 else {}
    for index, chain in enumerate(chains):
        if not chain.enabled or (updated is not None and _unchanged(obj, chain, updated)):
            continue
        if index in shared:
            bone, other = shared[index]
            status = f"Bone '{bone}' is also driven by chain '{other}': disable or remove one of them"
            if chain.status != status:
                chain.status = status
            if chain.reachable:
                chain.reachable = False
            continue
        try:
            evaluate_chain(obj, chain, depsgraph)
        except Exception as error:  # a handler must never raise
            try:
                chain.status = f"Internal error: {error}"
            except Exception:
                pass

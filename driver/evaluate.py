# SPDX-License-Identifier: GPL-3.0-or-later
"""Evaluate chains: read bones, target and pole, solve, write the solve into the mechanism bones.

Reads go through the depsgraph the handler was given (``evaluated_get``), corrected by the new poses
of chains solved before in the same update (moved.py); writes go to the original pose bones.
Nothing here keeps a reference to Blender data between calls.
"""

from __future__ import annotations

import math

from mathutils import Matrix, Vector

from ..solver import solve_two_bone_ik
from . import batch, dependency, mechanism, pose, scope
from .bones import ChainError, chain_bones, end_bone
from .moved import Moved, disabled
from .status import (
    CLEAN,
    NO_POLE,
    POLE_NEAR,
    POLE_NEAR_LINE,
    POLE_ON_LINE,
    SHEAR_TOLERANCE,
    SHEARED,
    SOLVER_TOLERANCE,
    Status,
    error,
    set_outputs,
    solved,
)


def source_matrix(obj, chain, depsgraph, which: str, check_cycle: bool = False) -> Matrix | None:
    """World matrix of the chain's ``which`` ("target" or "pole"): the object's, or its bone's
    moved to the point Head/Tail picks when the object is an armature with a bone named; None
    when unset.

    Raises ChainError for a missing bone, and with ``check_cycle`` for a source that moves with the
    chain's own bones (a cycle).
    """
    if check_cycle:
        status = dependency.cycle_status(obj, chain, which)
        if status:
            raise ChainError(status)
    return _source(Moved(depsgraph), obj, chain, which)


def _source(moved: Moved, obj, chain, which: str, in_layer: bool = False) -> Matrix | None:
    """World matrix of the chain's target or pole after this update's earlier solves (see
    :func:`source_matrix`); ChainError for the armature itself without a bone, a missing bone, or
    (``in_layer``: it is an object of the view layer) a source disabled in the viewport."""
    source = getattr(chain, which)
    if source is None:
        return None
    bone_name = getattr(chain, f"{which}_bone") if source.type == "ARMATURE" else ""
    if source == obj and not bone_name:
        raise ChainError(f"The {which} is this armature: pick one of its control bones as {which} bone")
    if source == obj and bone_name.startswith(mechanism.BONE_PREFIX):
        raise ChainError(f"The {which} bone '{bone_name}' is a chain's mechanism bone: pick a control bone")
    if in_layer and disabled(source, moved.depsgraph):
        raise ChainError(f"The {which} '{source.name}' is disabled in the viewport: keeping the last pose")
    if not bone_name:
        return moved.world(source)
    bone_matrix = moved.bone_matrix(source, bone_name) if source.pose is not None else None
    if bone_matrix is None:
        raise ChainError(f"{which.capitalize()} bone '{bone_name}' not found in '{source.name}'")
    # As a pose bone's tail: its matrix (scale included) times (0, length, 0).
    along = getattr(chain, f"{which}_head_tail") * source.data.bones[bone_name].length
    return moved.world(source) @ bone_matrix @ Matrix.Translation((0.0, along, 0.0))


def evaluate_chain(obj, chain, depsgraph, moved: Moved | None = None, step=None, solves=None) -> None:
    """Solve one chain of ``obj`` and write its pose and outputs; a problem becomes ``chain.status``.

    ``moved``: the poses of chains solved before it in this update (a fresh one when None).
    ``step``: the chain's dependency.Step when solved in plan order: a chain that waits on another
    through something the driver does not model says so and is never "reachable". ``solves``: the
    plan's memory of last solves (see :func:`_solve_and_write`).
    ChainError never escapes; other exceptions are left to the caller (:func:`evaluate_plan`).
    """
    try:
        if step is None:  # outside the plan (an operator): its cycle check is not done yet
            chain_bones(obj, chain)
            for which in ("target", "pole"):
                source_matrix(obj, chain, depsgraph, which, check_cycle=True)
        status, reachable, too_close = _solve_and_write(obj, chain, moved or Moved(depsgraph), step, solves)
    except ChainError as problem:
        status, reachable, too_close = error(str(problem)), False, False
    if step is not None and step.waits_on and solved(status.state):
        names = ", ".join(f"'{name}'" for name in step.waits_on)
        status = Status(
            "WAITING", f"Waits on chain {names}: a constraint or driver between them makes it one update late"
        )
        reachable = False
    late = [name for key, name in step.follows if key in moved.inexact] if step is not None and moved else []
    if late and solved(status.state):
        names = ", ".join(f"'{name}'" for name in late)
        status = Status(
            "WAITING",
            f"Waits on chain {names}: its influence blend under uneven scale makes this one update late",
        )
        reachable = False
    set_outputs(chain, status, reachable, too_close)


def _finite(*vectors) -> bool:
    # A sum of float32 values cannot overflow in float64, so only inf or NaN make it non-finite.
    return math.isfinite(sum(sum(vector) for vector in vectors))


def check_settings(chain) -> None:
    """ChainError for a setting that is not a number (a script or a driver can set NaN)."""
    if not math.isfinite(chain.influence):
        raise ChainError("Influence is not a number: set it between 0 and 1")
    if not math.isfinite(chain.twist):
        raise ChainError("Twist is not a number: set an angle")
    if not math.isfinite(chain.softness):
        raise ChainError("Softness is not a number: set it between 0 and 1")


def _solve_and_write(obj, chain, moved: Moved, step, solves: dict | None) -> tuple[Status, bool, bool]:
    """Solve one chain and write its pose into its mechanism bones; returns (status, reachable,
    too_close). Raises ChainError. ``step``: its dependency.Step or None; when the step feeds other
    chains, the chain bones' new poses go into ``moved``. ``solves``: the plan's memory of each
    chain's last inputs and solve; a chain whose inputs did not change is not solved again.

    The FK pose is the chain bones' own channels as Blender evaluated them (keys, drivers, typed
    values); the solve keeps their location and scale. Influence and Enabled are applied by Blender,
    through the mechanism's constraints, so they play no part here.
    """
    upper_bone, lower_bone = chain_bones(obj, chain)
    names = step.mechanism if step is not None else None
    mechanism_upper, mechanism_lower = names or mechanism.mechanism_bones(obj, chain)
    in_layer = step.in_layer if step is not None else ()
    target_matrix = _source(moved, obj, chain, "target", "target" in in_layer)
    if target_matrix is None:
        raise ChainError("Set a target object")
    pole_matrix = _source(moved, obj, chain, "pole", "pole" in in_layer)
    if chain.end_rotation == "TARGET":
        if end_bone(chain, lower_bone) is None:
            raise ChainError(f"End Rotation is Target, but '{lower_bone.name}' has no child bone to turn")
        if not abs(target_matrix.to_3x3().determinant()) > 0.0:  # False for NaN too
            raise ChainError("Target has a zero or non-finite scale or rotation: keeping the last pose")
    check_settings(chain)

    obj_eval = obj.evaluated_get(moved.depsgraph)
    world = moved.world(obj)
    if not pose.invertible(world):
        raise ChainError(f"Armature '{obj.name}' has zero or invalid scale: nothing to solve")
    to_armature = world.inverted()
    target_point = to_armature @ target_matrix.translation
    bones_eval = obj_eval.pose.bones
    upper_eval = bones_eval[upper_bone.name]
    lower_eval = bones_eval[lower_bone.name]
    parent = upper_eval.parent
    parent_matrix = moved.bone_matrix(obj, parent.name).copy() if parent is not None else None
    pole_point = to_armature @ pole_matrix.translation if pole_matrix is not None else None
    inputs = (
        target_point,
        pole_point,
        parent_matrix,
        upper_eval.matrix_basis.copy(),
        lower_eval.matrix_basis.copy(),
        *(_flags(bone) for bone in (upper_bone, lower_bone)),
        chain.twist,
        chain.softness,
    )
    key = (obj.session_uid, upper_bone.name)
    last = solves.get(key) if solves is not None else None
    if last is not None and last[0] == inputs:
        solve = last[1]  # nothing it reads changed since the last update: the same solve
    else:
        solve = _solve(upper_bone, lower_bone, *inputs[:5], *inputs[-2:])
        if solves is not None:
            solves[key] = (inputs, solve)
    solved_upper, solved_lower, status, solver_reachable, too_close, length = solve
    _write(obj, ((mechanism_upper, solved_upper), (mechanism_lower, solved_lower)), length)
    if step is not None and step.feeds:
        poses, exact = _new_poses(upper_eval, lower_eval, world, parent_matrix, solved_upper, solved_lower)
        moved.record(obj, poses, None if exact else (obj.session_uid, step.chain_index))

    reachable = solver_reachable
    constrained = _constrained_bone(upper_eval, lower_eval)
    if constrained and chain.enabled and chain.influence >= 1.0:
        # Other constraints move the bones after ours: compare the evaluated end with where the
        # evaluated mechanism alone puts it (armature space, the same evaluation), so a constraint
        # that changes nothing is no miss; never a false "reachable" when one does.
        if (
            lower_eval.tail
            - _mechanism_end(bones_eval, upper_eval, lower_eval, (mechanism_upper, mechanism_lower))
        ).length > SHEAR_TOLERANCE * length:
            reachable = False
            status = Status(
                "OFF_TARGET", f"Constraints on '{constrained}' move the chain: its end misses the target"
            )
    return status, reachable, too_close


def _mechanism_end(bones_eval, upper_eval, lower_eval, mechanism_names) -> Vector:
    """Armature-space end of the chain as its evaluated mechanism bones alone pose it (the Copy
    Transforms copy their local transforms onto the chain bones)."""
    mechanism_upper, mechanism_lower = (bones_eval[name].matrix_basis for name in mechanism_names)
    parent = upper_eval.parent.matrix if upper_eval.parent is not None else None
    upper = pose.to_pose(upper_eval.bone, mechanism_upper, parent)
    return pose.to_pose(lower_eval.bone, mechanism_lower, upper) @ Vector((0.0, lower_eval.bone.length, 0.0))


def _flags(bone) -> tuple:
    """The inherit settings of ``bone``: a change makes the same channels give another pose."""
    return bone.use_inherit_rotation, bone.inherit_scale, bone.use_local_location


def _solve(
    upper_bone, lower_bone, target_point, pole_point, parent_matrix, fk_upper, fk_lower, twist, softness
):
    """The chain's solve from its inputs (armature space; twist in radians, softness 0 to 1):
    (upper basis, lower basis, Status, reachable, too close, chain length) for the mechanism
    bones. Raises ChainError."""
    shape = pose.chain_shape(upper_bone, lower_bone, parent_matrix, fk_upper, fk_lower)
    length = shape.upper_length + shape.lower_length
    if not length > 0.0:
        raise ChainError("The chain's pose scale leaves it no length")
    root = shape.head

    status = CLEAN
    if pole_point is not None:
        pole_hint = pole_point
    else:
        pole_hint = root + shape.pole_side * length
        status = NO_POLE
    if not _finite(target_point, pole_hint, root):
        raise ChainError("Target, pole or bones are at a non-finite position: keeping the last pose")

    result = solve_two_bone_ik(
        root,
        target_point,
        pole_hint,
        shape.upper_length,
        shape.lower_length,
        tolerance=SOLVER_TOLERANCE,
        twist=twist,
        softness=softness,
    )
    joint, end_point = Vector(result.joint), Vector(result.end)
    # Offsets from the root taken in float64 before mathutils rounds them to float32: far from the
    # origin, rounding the positions first leaves a straight chain's cross product as noise above
    # pose.PARALLEL, and the roll of a straight leg would follow that noise instead of the pole.
    offsets = [
        Vector([a - b for a, b in zip(point, root, strict=True)]) for point in (result.joint, result.end)
    ]
    normal = pose.solved_normal(Vector(), offsets[0], offsets[1], pole_hint - root, twist)
    if normal is None:
        normal = shape.normal  # straight chain, pole on the line: keep the unposed roll
        status = NO_POLE if status == NO_POLE else POLE_ON_LINE
    elif status == CLEAN:
        status = _pole_warning(root, target_point, pole_hint, length)

    solved_upper, solved_lower = pose.solve_bases(
        upper_bone, lower_bone, shape, parent_matrix, joint, end_point, normal, fk_upper, fk_lower
    )
    fold = abs(shape.upper_length - shape.lower_length)
    too_close = not result.reachable and (target_point - root).length < fold
    reachable = bool(result.reachable)
    # Uneven pose scale on the upper bone or above shears the lower bone as the upper one turns;
    # rotation channels cannot undo a shear, so check where the end really lands.
    upper_pose = pose.to_pose(upper_bone, solved_upper, parent_matrix)
    tail = pose.to_pose(lower_bone, solved_lower, upper_pose) @ Vector((0.0, lower_bone.length, 0.0))
    if (tail - end_point).length > SHEAR_TOLERANCE * length:
        status, reachable = SHEARED, False
    return solved_upper, solved_lower, status, reachable, too_close, length


def _new_poses(upper_eval, lower_eval, world, parent_matrix, solved_upper, solved_lower):
    """((bone, pose matrix) of the chain bones as Blender will evaluate them from this solve, exact).

    Each bone's constraint blends its channels toward its mechanism bone by the constraint's
    evaluated influence. Blender interpolates world matrices; that equals the local blend computed
    here when the bone's parent frame in world space has uniform scale, or at influence 0 and 1
    (docs/design.md). ``exact`` is False otherwise: what follows the chain is one update late.
    """
    poses, exact = [], True
    for pose_bone, solved_basis in ((upper_eval, solved_upper), (lower_eval, solved_lower)):
        constraint = pose_bone.constraints.get(mechanism.CONSTRAINT)
        influence = constraint.influence if constraint is not None else 0.0
        if 0.0 < influence < 1.0:
            frame = world.to_3x3() @ parent_matrix.to_3x3() if parent_matrix is not None else world.to_3x3()
            exact = exact and pose.uniform(frame)
        basis = pose.blend(pose_bone.matrix_basis.copy(), solved_basis, influence)
        parent_matrix = pose.to_pose(pose_bone.bone, basis, parent_matrix)
        poses.append((pose_bone.name, parent_matrix))
    return poses, exact


def _pole_warning(root: Vector, target: Vector, pole_hint: Vector, length: float) -> Status:
    """POLE_ON_LINE when the solver fell back to its axis (contract D2's test), POLE_NEAR when the pole
    is within POLE_NEAR_LINE x length of the root-target line, else CLEAN."""
    forward = target - root
    if forward.length <= SOLVER_TOLERANCE * length:
        return CLEAN  # target at the root: the fold direction comes from the pole alone
    offset = pole_hint - root
    distance = offset.cross(forward).length / forward.length
    if distance <= SOLVER_TOLERANCE * max(offset.length, length):
        return POLE_ON_LINE
    return POLE_NEAR if distance < POLE_NEAR_LINE * length else CLEAN


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
        pose_bone = pose_bones.get(name)
        if pose_bone is None:  # renamed or deleted since the plan was made
            scope.invalidate()
            raise ChainError(mechanism.MISSING)
        if pose.differs(basis, pose_bone.matrix_basis, length):
            pose_bone.matrix_basis = basis


def evaluate_plan(plan, depsgraph) -> None:
    """Solve the chains of a dependency.Plan in its order; one broken chain never stops the others.

    Disabled chains and armatures in Edit Mode (their bone data is stale until it ends) are left
    alone; a blocked chain (shared bones, a cycle, a source outside the scene) only gets its status.
    """
    moved = Moved(depsgraph)
    fallback = []
    if plan.batch is not None:
        try:
            fallback = batch.evaluate(plan.batch, depsgraph)
        except Exception as problem:  # the exact path below solves them all, and says what failed
            print(f"Two-Bone IK: batched solve failed, solving chain by chain: {problem!r}")
            fallback = [entry.step for group in plan.batch.groups for entry in group.entries]
    for step in [*fallback, *plan.steps]:
        obj = step.obj
        chain = obj.two_bone_ik.chains[step.chain_index]
        if not chain.enabled or obj.data.is_editmode:
            continue
        try:
            if step.blocked:
                chain_bones(obj, chain)  # a bone renamed since the plan: say that first
                set_outputs(chain, error(step.blocked), False)
            else:
                evaluate_chain(obj, chain, depsgraph, moved, step, plan.solves)
        except ChainError as problem:
            set_outputs(chain, error(str(problem)), False)
        except Exception as problem:  # a handler must never raise
            try:
                set_outputs(chain, error(f"Internal error: {problem}"), False)
            except Exception:
                pass

# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's readouts, worked out when they are read (panel, overlay, report, Python): its state,
status, reach, joint, end, shortfall and what causes it. Nothing is written per update.

They read the original data, which the active depsgraph keeps current (the viewport's pose), and
compare the evaluated chain with the solver's answer for the evaluated inputs (docs/contract.md),
so a pose the network cannot give (other constraints, pose scale, an edited network) is never a
silent OK: the chain's state is OFF_TARGET and its status names the miss.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import bpy
from mathutils import Matrix, Vector

from ..network import build, health, layout
from ..network.layout import SOLVER_TOLERANCE
from ..solver import MIN_REACH, solve_two_bone_ik
from ..solver.expressions import FLOAT32_FAR
from . import memo, pose, settings
from .bones import ChainError, blender_ik, chain_bones, end_bone, renamed_source
from .status import (
    CLEAN,
    NO_POLE,
    POLE_NEAR,
    POLE_NEAR_LINE,
    POLE_ON_LINE,
    REST,
    SHEAR_TOLERANCE,
    STATE_CODES,
    Status,
    error,
)

ORIGIN = (0.0, 0.0, 0.0)
# Radians past which a twist, a float32 in the drivers, turns the bend by more than the
# readouts' tolerance (its float32 rounding reaches 1e-4 rad near 1e3).
TWIST_FLOAT32 = 1e3
FLOAT32_MAX = 3.4028234663852886e38

# chain.shortfall_cause items, in the order they are checked (the first that applies).
CAUSES = (
    ("NONE", "None", "The end is on the target"),
    ("NOT_SOLVED", "Not solved", "The chain did not solve (see its status)"),
    ("REST", "Rest Position", "The armature shows its Rest Position"),
    (
        "INFLUENCE",
        "Influence",
        "The chain is disabled or its influence is below 1: the FK pose shows through",
    ),
    (
        "CONSTRAINTS",
        "Constraints",
        "Other constraints, pose scale or uneven scale move the chain off the solve",
    ),
    ("TOO_CLOSE", "Too close", "The target is nearer the root than the folded chain"),
    ("TOO_FAR", "Out of reach", "The target is further than the chain reaches"),
    ("SOFTNESS", "Softness", "Softness eases the end short of the target"),
)
_CAUSE_CODES = {identifier: code for code, (identifier, _, _) in enumerate(CAUSES)}


class Reading(NamedTuple):
    """What a chain comes to now: its Status and reach (the solver's, for the evaluated inputs)."""

    status: Status
    reachable: bool = False
    too_close: bool = False


def _lower(chain):
    obj = chain.id_data
    if obj.pose is None:
        return None
    return obj.pose.bones.get(chain.lower_bone)


def joint(chain) -> tuple[float, float, float]:
    """World position of the lower bone's head (the joint), or the origin when it is missing."""
    bone = _lower(chain)
    return tuple(chain.id_data.matrix_world @ bone.head) if bone else ORIGIN


def end(chain) -> tuple[float, float, float]:
    """World position of the lower bone's tail (the chain's end), or the origin when it is missing."""
    bone = _lower(chain)
    return tuple(chain.id_data.matrix_world @ bone.tail) if bone else ORIGIN


def source_of(chain, which: str):
    """The chain's ``which`` ("target" or "pole") as (object, pose bone or None): the one reader of
    what a chain's target or pole is, for the status, Apply, Bake and Snap. (None, None) when
    unset. Raises ChainError for a bone that is missing (or was renamed), the chain's own armature
    without a bone, or one of the chains' network bones."""
    source, bone_name = layout.source(chain, which)
    if source is None:
        return None, None
    if source == chain.id_data and not bone_name:
        raise ChainError(f"The {which} is this armature: pick one of its control bones as {which} bone")
    if not bone_name:
        return source, None
    bone = source.pose.bones.get(bone_name) if source.pose is not None else None
    if bone is None:
        now = renamed_source(chain.id_data, chain, which)
        if now:
            raise ChainError(
                f"{which.capitalize()} bone '{bone_name}' was renamed '{now}': run Pose > Two-Bone IK > "
                "Update Mechanism"
            )
        raise ChainError(f"{which.capitalize()} bone '{bone_name}' not found in '{source.name}'")
    if source == chain.id_data and bone_name.startswith(layout.PREFIX):
        raise ChainError(f"The {which} bone '{bone_name}' is a chain's mechanism bone: pick a control bone")
    return source, bone


def source_point(chain, which: str) -> Vector | None:
    """World position of the chain's ``which`` ("target" or "pole"): the object's origin, or the
    point of its bone that Head/Tail picks; None when unset. Raises ChainError as
    :func:`source_of`."""
    source, bone = source_of(chain, which)
    if source is None:
        return None
    if bone is None:
        return source.matrix_world.translation.copy()
    return source.matrix_world @ bone.head.lerp(bone.tail, getattr(chain, f"{which}_head_tail"))


class Glance(NamedTuple):
    """Where a chain is now, world space, from its evaluated bones and its sources alone (no
    status): root, joint and end, the target and pole (None without one), and whether the end is
    on the target within the readouts' tolerance."""

    root: Vector
    joint: Vector
    end: Vector
    target: Vector
    pole: Vector | None
    on_target: bool


def on_target(end_point: Vector, point: Vector, root: Vector, joint_point: Vector) -> bool:
    """Whether ``end_point`` is on ``point`` within SHEAR_TOLERANCE x the chain's length (world)."""
    length = (joint_point - root).length + (end_point - joint_point).length
    return _distance(end_point, point) <= SHEAR_TOLERANCE * length


def glance(chain, obj=None) -> Glance | None:
    """The chain's :class:`Glance` in ``obj`` (its armature, or an evaluated copy of it), or None
    when there is nothing to show: the armature in its Rest Position, a bone missing, no target, or
    a target or pole that cannot be read (the status says why). Disabled or not. Costs no status:
    the overlay and the chain list draw from it on every redraw."""
    obj = obj or chain.id_data
    if obj.pose is None or obj.data.pose_position == "REST":
        return None
    upper, lower = obj.pose.bones.get(chain.upper_bone), obj.pose.bones.get(chain.lower_bone)
    try:
        target = source_point(chain, "target")
        pole = source_point(chain, "pole")
    except ChainError:
        return None
    if upper is None or lower is None or target is None:
        return None
    world = obj.matrix_world
    root, joint_point, end_point = world @ upper.head, world @ lower.head, world @ lower.tail
    return Glance(root, joint_point, end_point, target, pole, on_target(end_point, target, root, joint_point))


TRANSFORM_CHANNELS = frozenset(
    {"location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale"}
)


def _constraint_targets(constraint):
    """(object, subtarget) pairs a constraint reads: one, or several (Armature constraint)."""
    target = getattr(constraint, "target", None)
    if isinstance(target, bpy.types.Object):
        yield target, getattr(constraint, "subtarget", "")
    for item in getattr(constraint, "targets", ()):
        if isinstance(item.target, bpy.types.Object):
            yield item.target, getattr(item, "subtarget", "")


def _deforming_bones(mesh, groups=None):
    """(armature, bone) pairs deforming ``mesh`` through its Armature modifiers, limited to the
    vertex ``groups`` named (all its groups when None)."""
    names = [group.name for group in getattr(mesh, "vertex_groups", ())] if groups is None else groups
    for modifier in getattr(mesh, "modifiers", ()):
        if modifier.type == "ARMATURE" and modifier.object is not None:
            for name in names:
                yield modifier.object, name


def _driver_sources(obj) -> dict[str, list[tuple]]:
    """{owner: [(object, bone), ...]}: what the drivers on the transform channels of ``obj`` read,
    by the data path of their pose bone ('' for the object's own channels). One pass over the
    drivers: a walk asks for many bones of one rig."""
    animation = obj.animation_data
    found: dict[str, list[tuple]] = {}
    for fcurve in animation.drivers if animation is not None else ():
        owner, _, channel = fcurve.data_path.rpartition(".")
        if channel not in TRANSFORM_CHANNELS:
            continue
        sources = found.setdefault(owner, [])
        for variable in fcurve.driver.variables:
            for target in variable.targets:
                if isinstance(target.id, bpy.types.Object):
                    sources.append((target.id, target.bone_target if target.id.type == "ARMATURE" else ""))
    return found


def _follows(source, bone_name: str):
    """Every (object, bone) whose pose moves ``source`` (its bone ``bone_name``, or the object for
    ''): the bone and its parents, and what parenting (bone, object, vertex), constraints and
    drivers make each of them follow, at any depth; a mesh read by a constraint or a driver, or
    vertex-parented to, brings the bones deforming it."""
    stack, seen = [(source, bone_name)], set()
    drivers: dict[int, dict[str, list[tuple]]] = {}  # _driver_sources of each object met
    while stack:
        obj, name = stack.pop()
        if (obj.session_uid, name) in seen:
            continue
        seen.add((obj.session_uid, name))
        yield obj, name
        read = []  # (object, subtarget) read by constraints and drivers
        if obj.session_uid not in drivers:
            drivers[obj.session_uid] = _driver_sources(obj)
        bone = obj.data.bones.get(name) if name and obj.type == "ARMATURE" and obj.pose is not None else None
        if bone is not None:
            read += [pair for c in obj.pose.bones[name].constraints for pair in _constraint_targets(c)]
            read += drivers[obj.session_uid].get(layout.bone_path(name), [])
            stack.append((obj, bone.parent.name) if bone.parent is not None else (obj, ""))
        if not name:
            read += [pair for c in obj.constraints for pair in _constraint_targets(c)]
            read += drivers[obj.session_uid].get("", [])
            parent = obj.parent
            if parent is not None and obj.parent_type == "BONE" and parent.type == "ARMATURE":
                stack.append((parent, obj.parent_bone))
            elif parent is not None:
                stack.append((parent, ""))
                if obj.parent_type not in {"OBJECT", "ARMATURE"}:  # vertex, lattice, curve
                    stack += _deforming_bones(parent)
        elif bone is None:
            stack.append((obj, ""))  # a missing bone: at least the object
        for other, subtarget in read:
            if other.type == "ARMATURE":
                stack.append((other, subtarget))
            else:
                stack.append((other, ""))
                stack += _deforming_bones(other, [subtarget] if subtarget else None)


def _moves_with(obj, chain, source, bone_name: str) -> bool:
    """Whether ``source`` (or its bone ``bone_name``) follows the chain's upper bone or the part of
    its network that follows the target (through parenting, constraints, drivers or a deformed
    mesh): a cycle, the chain would chase its own target."""
    names = layout.parts(chain.upper_bone, chain.lower_bone)
    moving = {chain.upper_bone, names.target, names.aim}
    # A question of the rig's relations alone: the panel keeps its answer until they change.
    key = ("moves with", obj.session_uid, chain.upper_bone, chain.lower_bone, source.session_uid, bone_name)
    return memo.relations_scoped(
        key, lambda: any(armature == obj and name in moving for armature, name in _follows(source, bone_name))
    )


def check_sources(chain) -> None:
    """ChainError (the chain's status) for a target or pole that is unusable: missing, a missing
    bone, the armature itself without a bone, a mechanism bone, or one that moves with the chain's
    bones (a cycle)."""
    obj = chain.id_data
    for which in ("target", "pole"):
        if source_point(chain, which) is None:
            if which == "target":
                raise ChainError("Set a target object")
            continue
        source, bone_name = layout.source(chain, which)
        if _moves_with(obj, chain, source, bone_name):
            label = f"{which} bone '{bone_name}'" if bone_name else f"{which} '{source.name}'"
            raise ChainError(f"The {label} moves with the chain's own bones: a cycle")


def target_point(chain) -> Vector | None:
    """World position the chain reaches for, or None (unset, or a missing bone)."""
    try:
        return source_point(chain, "target")
    except ChainError:
        return None


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


def check_target_rotation(chain) -> None:
    """ChainError when the target's world rotation, which End Rotation Target copies onto the end
    bone, is not a rotation: a zero, flat or non-finite scale, or a non-finite rotation."""
    source = chain.target
    matrix = source.matrix_world
    bone_name = chain.target_bone if source.type == "ARMATURE" else ""
    if bone_name:
        matrix = matrix @ source.pose.bones[bone_name].matrix
    if not pose.invertible(matrix.to_3x3()):
        raise ChainError(
            f"The target '{source.name}' has a zero or non-finite rotation or scale: End Rotation "
            "Target has no rotation to copy"
        )


def expected(chain) -> tuple[Vector, Vector, bool, bool, float, Status]:
    """The solver's (joint, end, reachable, too close, chain length, Status) for the chain's
    current inputs, armature space: the root and lengths of its network's root bone, the target
    and pole (or the rest bend side). Under an uneven scale of a parent the solve is made in the
    root's frame, where the chain's bones are rigid (contract D6), and mapped back. Raises
    ChainError."""
    obj = chain.id_data
    names = layout.parts(chain.upper_bone, chain.lower_bone)
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
        # The builder's rule for the hint bone (network.build.hint_offset), from the chain's rest:
        # an edited hint bone then shows as a miss, not as the bend it gives.
        pole_hint = frame @ build.hint_offset(upper, lower)
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


def read(chain) -> Reading:
    """What the chain comes to now (see the module's docstring); never raises."""
    obj = chain.id_data
    try:
        if obj.pose is None:
            raise ChainError(f"Armature '{obj.name}' has no pose yet")
        upper, lower = chain_bones(obj, chain)
        # Which channels have drivers, and what was added to the network, are questions of the
        # rig's relations: the panel keeps their answers until those change.
        driven = memo.relations_scoped(("driven", obj.session_uid), lambda: health.driven_channels(obj))
        problem = health.problem(obj, chain, driven)
        if problem:
            raise ChainError(problem)
        check_sources(chain)
        if chain.end_rotation == "TARGET":
            if end_bone(chain, lower) is None:
                raise ChainError(f"End Rotation is Target, but '{lower.name}' has no child bone to turn")
            check_target_rotation(chain)
        joint_point, end_point, reachable, too_close, length, status = expected(chain)
    except ChainError as problem:
        return Reading(error(str(problem)))
    if obj.data.pose_position == "REST":
        return Reading(Status("REST", REST.format(obj.name)), reachable, too_close)
    values = settings.values(chain)
    root_head = obj.pose.bones[layout.parts(upper.name, lower.name).root].head
    tie = status is POLE_ON_LINE or (end_point - root_head).length <= SOLVER_TOLERANCE * length
    slack = _joint_slack(root_head, joint_point, end_point)
    if values["enabled"] > 0.0 and values["influence"] >= 1.0:
        bones = obj.pose.bones
        knee_miss = (bones[lower.name].head - joint_point).length
        end_miss = (bones[lower.name].tail - end_point).length
        miss = max(knee_miss - slack, end_miss)
        own_miss, own_cause = _own_channels(obj, upper, lower)
        if own_cause or not miss <= SHEAR_TOLERANCE * length + _world_noise(obj):  # NaN misses too
            cause = own_cause or _cause(obj, chain, upper, lower, obj.matrix_world.to_scale(), tie)
            miss = max(miss, own_miss)
            return Reading(_off_target(miss, "", cause), False, too_close)
    elif values["enabled"] > 0.0 and values["influence"] > 0.0:
        miss, unmeasured = _partial_miss(
            obj, upper, lower, values["influence"], joint_point, end_point, slack
        )
        if not miss <= SHEAR_TOLERANCE * length + _world_noise(obj):
            cause = _cause(obj, chain, upper, lower, obj.matrix_world.to_scale(), tie)
            blended = f" blended by its influence ({values['influence']:.3g})"
            return Reading(_off_target(miss, blended, cause), False, too_close)
        if unmeasured:
            text = (
                f"Constraints before and after the chain's own on '{unmeasured}': below influence 1 the "
                "status cannot tell what those after it do (at 1 it measures them)"
            )
            return Reading(Status("WARNING", text), reachable, too_close)
    added = _foreign(obj, chain)
    if added:  # on the solve where it is measured, but it may turn a bone about its own axis
        text = (
            f"{added[0]} was added to the chain's network: run Pose > Two-Bone IK > Update Mechanism, "
            "which removes it"
        )
        return Reading(Status("WARNING", text), reachable, too_close)
    stale = health.stale_turn(obj, chain) or health.mirrored_copy(obj, chain)
    if stale:  # this chain is solved; a bone's own turn, or a copy's leg, is not
        return Reading(Status("WARNING", stale), reachable, too_close)
    return Reading(status, reachable, too_close)


def _foreign(obj, chain) -> list[str]:
    """health.foreign, kept by the panel until the rig's relations change (a constraint, key or
    driver added to the network rebuilds them)."""
    key = ("foreign", obj.session_uid, chain.upper_bone, chain.lower_bone)
    return memo.relations_scoped(key, lambda: health.foreign(obj, chain))


def _world_noise(obj) -> float:
    """What float32 rounding of world-space matrices can move a bone by (armature units): the
    chains' world-space Copy Transforms and influence blends round at the armature's distance
    from the world origin (1e-4 m there from about 1 km)."""
    world = obj.matrix_world
    smallest = min(abs(value) for value in world.to_scale())
    return FLOAT32_ULPS * world.translation.length / smallest if smallest > 0.0 else 0.0


def _off_target(miss: float, blended: str, cause: str) -> Status:
    off = f"{miss:.3g} armature units off" if math.isfinite(miss) else "at a non-finite position, off"
    return Status("OFF_TARGET", f"The chain is {off} its solve{blended}: {cause}")


def _partial_miss(
    obj, upper, lower, weight: float, joint_point: Vector, end_point: Vector, slack: float
) -> tuple[float, str]:
    """(miss, unmeasured) of a chain at influence ``weight`` (between 0 and 1): how far it is off
    what it should show (armature units): its network's solved lower bone against the solve, and,
    where no constraint comes before the chain's own, its bones against their FK pose blended with
    the solved bones as Blender blends a constraint's influence (in world space, by polar
    decomposition: ``Matrix.lerp``). ``unmeasured``: a chain bone with constraints both before
    (the FK pose is not known) and after the chain's own, whose effect is not measured ('' when
    none). ``slack``: :func:`_joint_slack` of the solve."""
    bones = obj.pose.bones
    names = layout.parts(upper.name, lower.name)
    solved = bones[names.lower]
    miss = max((solved.head - joint_point).length - slack, (solved.tail - end_point).length)
    stacks = {bone.name: _acting_around(bones[bone.name]) for bone in (upper, lower)}
    if any(before for before, _ in stacks.values()):  # the FK pose it blends is not the channels'
        return miss, next((name for name, (before, after) in stacks.items() if before and after), "")
    world = obj.matrix_world
    to_armature = world.inverted()
    parent = bones[upper.parent.name].matrix if upper.parent is not None else None
    fk = pose.to_pose(upper, bones[upper.name].matrix_basis, parent)
    upper_pose = to_armature @ (world @ fk).lerp(world @ bones[names.upper].matrix, weight)
    fk = pose.to_pose(lower, bones[lower.name].matrix_basis, upper_pose)
    full = solved.matrix
    if layout.lower_space(lower) == "LOCAL":
        local = obj.convert_space(pose_bone=solved, matrix=solved.matrix, from_space="POSE", to_space="LOCAL")
        full = pose.to_pose(lower, local, upper_pose)
    lower_pose = to_armature @ (world @ fk).lerp(world @ full, weight)
    if lower.use_connect:  # Blender puts a connected bone's head back on its parent's tail
        lower_pose.translation = bones[upper.name].tail
    for bone, expected_pose in ((upper, upper_pose), (lower, lower_pose)):
        head = expected_pose.translation
        tail = head + expected_pose.col[1].xyz * bone.length
        posed = bones[bone.name]
        miss = max(miss, (posed.head - head).length, (posed.tail - tail).length)
    return miss, ""


def _acting_around(pose_bone) -> tuple[bool, bool]:
    """Whether constraints act before, and after, the chain's own in ``pose_bone``'s stack (enabled,
    influence above 0). Blender's IK is not in the stack's order (it poses the bones after every
    stack): it counts on neither side."""
    constraints = list(pose_bone.constraints)
    ours = pose_bone.constraints.find(layout.CONSTRAINT)
    acting = [c.enabled and c.influence > 0.0 and c.type not in ("IK", "SPLINE_IK") for c in constraints]
    return any(acting[: max(ours, 0)]), ours >= 0 and any(acting[ours + 1 :])


# Float32 units in the last place the network's stored distances may be off by (its bones' data and
# the eased distance in the end probe's location are float32).
FLOAT32_ULPS = 4 * 2.0**-23


def _joint_slack(root: Vector, joint: Vector, end: Vector) -> float:
    """How far float32 storage can move the knee of a chain this close to straight or folded
    (armature units; 0 elsewhere): an error e in the stored distance moves the knee by up to
    sqrt(2ab/(a + b) e) there, where the knee's place is ill-conditioned (docs/contract.md, D8),
    e.g. 4e-4 m on a 1 m leg within 1e-6 of full reach. Past that height the knee moves by e."""
    upper, lower, line = joint - root, end - joint, end - root
    a, b = upper.length, lower.length
    if a + b <= 0.0:
        return 0.0
    error = FLOAT32_ULPS * (root.length + a + b)
    bound = math.sqrt(2.0 * a * b / (a + b) * error)
    height = upper.cross(line).length / line.length if line.length > 0.0 else a
    return bound if height <= 4.0 * bound else 0.0


def _own_channels(obj, upper, lower) -> tuple[float, str]:
    """(miss, cause) of the chain bones' own location and scale channels, which the network does
    not read (armature units): how far they move the FK chain's heads and tail, or stretch a bone
    (its scale's change times its length); (0.0, '') when they hold nothing."""
    bones = obj.pose.bones
    parent = bones[upper.parent.name].matrix if upper.parent is not None else None
    posed, stripped, miss, cause = parent, parent, 0.0, ""
    for bone in (upper, lower):
        basis = bones[bone.name].matrix_basis
        _location, rotation, scale = basis.decompose()
        before = pose.to_pose(bone, basis, posed)
        after = pose.to_pose(bone, rotation.to_matrix().to_4x4(), stripped)
        moved = max(
            (before.translation - after.translation).length,
            (
                (before.translation + before.col[1].xyz * bone.length)
                - (after.translation + after.col[1].xyz * bone.length)
            ).length,
        )
        stretched = max(abs(value - 1.0) for value in scale) * bone.length
        if stretched > 1e-6 * bone.length:
            cause = cause or "the chain bones' own scale is not used by the network: set it on a parent"
        elif moved > 1e-6 * bone.length:
            cause = cause or "the chain bones' own location is not used by the network: set it on a parent"
        miss = max(miss, moved, stretched)
        posed, stripped = before, after
    return miss, cause


def _stopped_driver(obj, chain) -> str:
    """The data path of a driver of the chain's network that Blender has stopped ('' when none):
    an expression that failed once (on a value that was not a number) gives 0 until rebuilt."""
    names = (*layout.parts(chain.upper_bone, chain.lower_bone), chain.upper_bone, chain.lower_bone)
    paths = tuple(layout.bone_path(name) for name in names)
    animation = obj.animation_data
    for fcurve in animation.drivers if animation is not None else ():
        if fcurve.data_path.startswith(paths) and not fcurve.driver.is_valid:
            return fcurve.data_path
    return ""


def _cause(obj, chain, upper, lower, scale, tie: bool = False) -> str:
    """What most likely moves a chain off its solve, in words; ``tie``: the solve is at a tie of the
    degenerate rules (the pole on the line, the end at the root), which float32 may break."""
    iks = blender_ik(obj, chain)
    if iks:
        return (
            f"Blender's IK {iks[0]} poses its bones after every constraint stack, over the chain's: "
            "mute it (its Enabled), or remove the chain"
        )
    controls = obj.pose.bones[lower.name].constraints.get(layout.CONTROLS_CONSTRAINT)
    if controls is not None and controls.type == "IK" and controls.enabled and controls.influence > 0.0:
        return (
            f"the chain's '{controls.name}' on '{lower.name}', an IK kept muted to name the controls, "
            "was turned on: turn it off, or run Pose > Two-Bone IK > Update Mechanism"
        )
    stopped = _stopped_driver(obj, chain)
    if stopped:
        return f"Blender stopped its network's driver {stopped}: run Pose > Two-Bone IK > Update Mechanism"
    bones = obj.pose.bones
    for name in (upper.name, lower.name):
        if _acting_around(bones[name])[1]:  # an acting IK was named above
            remedy = (
                "run Pose > Two-Bone IK > Update Mechanism to put the chain's last"
                if chain.stack_position == "LAST"
                else "set the chain's Constraint Position to Last"
            )
            return f"other constraints on '{name}' move it: {remedy}"
    if any(abs(value - 1.0) > 1e-6 for name in (upper.name, lower.name) for value in bones[name].scale):
        return "the chain bones' own scale is not used by the network: set it on a parent"
    if max(scale) > (1.0 + 1e-6) * min(scale):
        return "the armature's uneven scale shears the influence blend"
    parent = upper.parent
    if parent is not None:
        parent_scale = bones[parent.name].matrix.to_scale()
        if max(parent_scale) > (1.0 + 1e-5) * min(parent_scale):
            aim = bones.get(layout.parts(upper.name, lower.name).aim)
            track = aim.constraints.get(layout.OWN_CONSTRAINTS["aim"][0]) if aim is not None else None
            if track is not None and track.owner_space != "CUSTOM":
                return (
                    f"the uneven pose scale on '{parent.name}' above it is solved by networks built since "
                    "this one: run Pose > Two-Bone IK > Update Mechanism"
                )
            return f"uneven pose scale on '{parent.name}', above the chain, shears it: scale it evenly"
    twist = settings.value(chain, "twist")
    if abs(twist) > TWIST_FLOAT32:
        return (
            f"a twist of {twist:.6g} rad is beyond what Blender's float32 drivers turn exactly: "
            "keep it within a few turns"
        )
    added = _foreign(obj, chain)
    if added:
        return f"{added[0]} moves it: run Pose > Two-Bone IK > Update Mechanism, which removes it"
    if tie:
        return (
            "the pole is on the root-target line, or the target at the root, where float32 may break "
            "the contract's tie the other way (docs/limits.md): move it off"
        )
    return "its network was edited: run Pose > Two-Bone IK > Update Mechanism"


def state_code(chain) -> int:
    return STATE_CODES[read(chain).status.state]


def shortfall(chain) -> float:
    """World distance from the evaluated end to the target, whatever keeps them apart (0 when there
    is nothing to measure)."""
    point = target_point(chain)
    if _lower(chain) is None or point is None:
        return 0.0
    return _distance(end(chain), point)


def _distance(end_point, point: Vector) -> float:
    # In float64: mathutils is float32 and a far target's squared distance would overflow.
    distance = math.dist(end_point, point.to_tuple())
    return min(distance, FLOAT32_MAX) if math.isfinite(distance) else 0.0  # the property is float32


def shortfall_cause(chain) -> int:
    """The code of :func:`cause` (the Shortfall Cause property's getter)."""
    return _CAUSE_CODES[cause(chain, read(chain))]


def cause(chain, reading: Reading) -> str:
    """The first of CAUSES that applies to the chain's shortfall, given its :func:`read`
    ("NONE" when the end is on the target within float32 noise). A chain off its solve is
    "CONSTRAINTS" even with its end on the target: its pose is not the one its bones' channels ask
    for (own scale ignored)."""
    bone = _lower(chain)
    point = target_point(chain)
    if bone is None or reading.status.state == "ERROR" or point is None:
        return "NOT_SOLVED"
    if reading.status.state == "OFF_TARGET":
        return "CONSTRAINTS"
    upper = chain.id_data.pose.bones.get(chain.upper_bone)
    world = chain.id_data.matrix_world
    head, joint_, tail = (world @ p for p in (upper.head if upper else bone.head, bone.head, bone.tail))
    if on_target(tail, point, head, joint_):
        return "NONE"
    state = reading.status.state
    if state == "REST":
        return "REST"
    values = settings.values(chain)
    if not values["enabled"] > 0.0 or values["influence"] < 1.0:
        return "INFLUENCE"
    if state == "OFF_TARGET":
        return "CONSTRAINTS"
    if not reading.reachable:
        return "TOO_CLOSE" if reading.too_close else "TOO_FAR"
    return "SOFTNESS" if values["softness"] > 0.0 else "CONSTRAINTS"


class Summary(NamedTuple):
    """Everything the panel shows of a chain, from one :func:`read`: its Reading, the shortfall
    (world units) and its cause (a CAUSES identifier)."""

    reading: Reading
    shortfall: float
    cause: str


def summary(chain) -> Summary:
    """The chain's :class:`Summary`: the status worked out once for a whole panel draw (each of the
    chain's readout properties works it out again when read)."""
    reading = read(chain)
    return Summary(reading, shortfall(chain), cause(chain, reading))

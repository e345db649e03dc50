# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's status, worked out when it is read (panel, overlay, report, Python): nothing is
written per update.

It reads the original data, which the active depsgraph keeps current (the viewport's pose), and
compares the evaluated chain with the solver's answer for the evaluated inputs (docs/contract.md),
so a pose the network cannot give (other constraints, pose scale, an edited network) is never a
silent OK: the chain's state is OFF_TARGET and its status names the miss.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from mathutils import Vector

from ..network import health, naming, outputs
from ..network.layout import SOLVER_TOLERANCE
from . import memo, pose, settings
from .bones import ChainError, checked_bones, end_bone
from .causes import acting_around, added_parts, off_solve_cause
from .solve import expected
from .sources import check_sources, check_target_rotation
from .status import POLE_ON_LINE, REST, SHEAR_TOLERANCE, STATE_CODES, Status, error


class Reading(NamedTuple):
    """What a chain comes to now: its Status and reach (the solver's, for the evaluated inputs)."""

    status: Status
    reachable: bool = False
    too_close: bool = False


def read(chain) -> Reading:
    """What the chain comes to now (see the module's docstring); never raises."""
    obj = chain.id_data
    try:
        if obj.pose is None:
            raise ChainError(f"Armature '{obj.name}' has no pose yet")
        # Which channels have drivers, and what was added to the network, are questions of the
        # rig's relations: the panel keeps their answers until those change.
        driven = memo.relations_scoped(("driven", obj.session_uid), lambda: health.driven_channels(obj))
        upper, lower = checked_bones(obj, chain, driven)
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
    root_head = obj.pose.bones[naming.parts(upper.name, lower.name).root].head
    tie = status is POLE_ON_LINE or (end_point - root_head).length <= SOLVER_TOLERANCE * length
    slack = _joint_slack(root_head, joint_point, end_point)
    if values["enabled"] > 0.0 and values["influence"] >= 1.0:
        bones = obj.pose.bones
        knee_miss = (bones[lower.name].head - joint_point).length
        end_miss = (bones[lower.name].tail - end_point).length
        miss = max(knee_miss - slack, end_miss)
        own_miss, own_cause = _own_channels(obj, upper, lower)
        if own_cause or not miss <= SHEAR_TOLERANCE * length + _world_noise(obj):  # NaN misses too
            cause = own_cause or off_solve_cause(obj, chain, upper, lower, obj.matrix_world.to_scale(), tie)
            miss = max(miss, own_miss)
            return Reading(_off_target(miss, "", cause), False, too_close)
    elif values["enabled"] > 0.0 and values["influence"] > 0.0:
        miss, unmeasured = _partial_miss(
            obj, upper, lower, values["influence"], joint_point, end_point, slack
        )
        if not miss <= SHEAR_TOLERANCE * length + _world_noise(obj):
            cause = off_solve_cause(obj, chain, upper, lower, obj.matrix_world.to_scale(), tie)
            blended = f" blended by its influence ({values['influence']:.3g})"
            return Reading(_off_target(miss, blended, cause), False, too_close)
        if unmeasured:
            text = (
                f"Constraints before and after the chain's own on '{unmeasured}': below influence 1 the "
                "status cannot tell what those after it do (at 1 it measures them)"
            )
            return Reading(Status("WARNING", text), reachable, too_close)
    added = added_parts(obj, chain)
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


def state_code(chain) -> int:
    return STATE_CODES[read(chain).status.state]


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
    names = naming.parts(upper.name, lower.name)
    solved = bones[names.lower]
    miss = max((solved.head - joint_point).length - slack, (solved.tail - end_point).length)
    stacks = {bone.name: acting_around(bones[bone.name]) for bone in (upper, lower)}
    if any(before for before, _ in stacks.values()):  # the FK pose it blends is not the channels'
        return miss, next((name for name, (before, after) in stacks.items() if before and after), "")
    world = obj.matrix_world
    to_armature = world.inverted()
    parent = bones[upper.parent.name].matrix if upper.parent is not None else None
    fk = pose.to_pose(upper, bones[upper.name].matrix_basis, parent)
    upper_pose = to_armature @ (world @ fk).lerp(world @ bones[names.upper].matrix, weight)
    fk = pose.to_pose(lower, bones[lower.name].matrix_basis, upper_pose)
    full = solved.matrix
    if outputs.lower_space(lower) == "LOCAL":
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

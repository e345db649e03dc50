# SPDX-License-Identifier: GPL-3.0-or-later
"""Many chains per update, solved together: bulk reads, the numpy solve and pose math, writes of
what changed (README, "How the driver works").

A chain is batched when nothing about it needs the exact per-chain path of evaluate.py: it reads no
other chain's new pose and feeds none (dependency.py), has no constraint but its own, its armature
has few bones per chain (reading all bones at once must pay), and, on each update, its bones keep
Blender's default inherit settings and unit scale under a uniformly scaled parent, and its inputs
are finite. Any chain failing a per-update check is handed back to the exact path for that update,
which also words its status. Both paths give the same pose (tests/blender/test_batch.py).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from mathutils import Matrix, Quaternion

from ..solver import solve_two_bone_ik_batch
from . import mechanism, pose, pose_batch
from .bones import ChainError, chain_bones, end_bone
from .moved import disabled
from .status import CLEAN, NO_POLE, POLE_NEAR, POLE_NEAR_LINE, POLE_ON_LINE, SOLVER_TOLERANCE, set_outputs

# Fewer chains than this in a whole plan: the exact path is faster than numpy's fixed costs.
MIN_CHAINS = 48
# An armature with more bones than this per batched chain: reading every bone costs more than it saves.
BONES_PER_CHAIN = 64


class Entry(NamedTuple):
    """A batched chain: its step, and its bones' indices in the pose (parent -1 for a root bone)."""

    step: object
    bone_data: tuple[int, int]  # the upper and lower bones' indices in the armature's bones
    upper: int
    lower: int
    parent: int
    mechanism_upper: str
    mechanism_lower: str
    mechanism_indices: tuple[int, int]
    end_target: bool
    rest: tuple  # upper and lower rest offsets (Matrix), lower bone length: stacked into a Batch
    row: int = -1  # the chain's row in its Batch's arrays


class Group(NamedTuple):
    """The batched chains of one armature object."""

    obj: object
    entries: list[Entry]


class Batch(NamedTuple):
    """The batched chains of a plan, with their rest data stacked once (rows as Entry.row):
    upper_offsets, lower_offsets (R, 4, 4) rest offsets (parent rest⁻¹ @ rest; the rest itself for a
    root bone), lower_lengths (R,)."""

    groups: list[Group]
    upper_offsets: np.ndarray
    lower_offsets: np.ndarray
    lower_lengths: np.ndarray


def _entry(step, obj, indices: dict[str, int], data_indices: dict[str, int]) -> Entry | None:
    """The batch entry of a plan step, or None when the chain needs the exact path. ``indices``,
    ``data_indices``: bone name -> index in the armature's pose bones, in its bones."""
    if step.blocked or step.waits_on or step.follows or step.feeds:
        return None
    chain = obj.two_bone_ik.chains[step.chain_index]
    if step.mechanism is None:
        return None
    mechanism_upper, mechanism_lower = step.mechanism
    try:
        upper, lower = chain_bones(obj, chain)
        end_target = chain.end_rotation == "TARGET"
        if end_target and end_bone(chain, lower) is None:
            return None
    except ChainError:
        return None
    pose_bones = obj.pose.bones
    if any(
        c.name != mechanism.CONSTRAINT
        for name in (upper.name, lower.name)
        for c in pose_bones[name].constraints
    ):
        return None
    rest_upper = upper.matrix_local
    upper_offset = rest_upper if upper.parent is None else upper.parent.matrix_local.inverted() @ rest_upper
    return Entry(
        step,
        (data_indices[upper.name], data_indices[lower.name]),
        indices[upper.name],
        indices[lower.name],
        indices[upper.parent.name] if upper.parent is not None else -1,
        mechanism_upper,
        mechanism_lower,
        (indices[mechanism_upper], indices[mechanism_lower]),
        end_target,
        (upper_offset, rest_upper.inverted() @ lower.matrix_local, lower.length),
    )


def prepare(steps) -> tuple[Batch | None, list]:
    """Split plan steps into the batched chains and the steps left to the exact path (in plan order)."""
    by_armature: dict[int, tuple[object, list]] = {}
    for step in steps:
        by_armature.setdefault(step.obj.session_uid, (step.obj, []))[1].append(step)
    groups = []
    for obj, armature_steps in by_armature.values():
        indices = {name: index for index, name in enumerate(obj.pose.bones.keys())}
        data_indices = {name: index for index, name in enumerate(obj.data.bones.keys())}
        entries = [
            entry
            for step in armature_steps
            if (entry := _entry(step, obj, indices, data_indices)) is not None
        ]
        if entries and len(indices) <= BONES_PER_CHAIN * len(entries):
            groups.append(Group(obj, entries))
    if sum(len(group.entries) for group in groups) < MIN_CHAINS:
        return None, list(steps)
    row = 0
    for group in groups:
        for position, entry in enumerate(group.entries):
            group.entries[position] = entry._replace(row=row)
            row += 1
    rests = [entry.rest for group in groups for entry in group.entries]
    batch = Batch(
        groups,
        np.array([[list(row) for row in upper] for upper, _, _ in rests]),
        np.array([[list(row) for row in lower] for _, lower, _ in rests]),
        np.array([length for _, _, length in rests]),
    )
    batched = {id(entry.step) for group in groups for entry in group.entries}
    return batch, [step for step in steps if id(step) not in batched]


def _matrices(pose_bones, name: str) -> np.ndarray:
    """Every pose bone's ``name`` matrix ("matrix", "matrix_basis"), flat float32 (column-major 4x4s)."""
    values = np.empty(len(pose_bones) * 16, dtype=np.float32)
    pose_bones.foreach_get(name, values)
    return values


def _row_major(flat: list[np.ndarray]) -> np.ndarray:
    """(bones, 4, 4) float64 row-major matrices from :func:`_matrices` arrays."""
    if not flat:
        return np.empty((0, 4, 4))
    return np.swapaxes(np.concatenate(flat).reshape(-1, 4, 4), 1, 2).astype(np.float64)


def _point(source, bone_name: str, head_tail: float, depsgraph, in_layer: bool):
    """World position of a target or pole (object origin, or the point of an armature's bone that
    ``head_tail`` picks), or None when its bone is missing or it is disabled in the viewport
    (``in_layer``: see Step.in_layer)."""
    if in_layer and disabled(source, depsgraph):
        return None  # the per-chain path says so
    evaluated = source.evaluated_get(depsgraph)
    if not bone_name:
        return evaluated.matrix_world.translation
    pose_bone = evaluated.pose.bones.get(bone_name) if evaluated.pose is not None else None
    return (
        None if pose_bone is None else evaluated.matrix_world @ pose_bone.head.lerp(pose_bone.tail, head_tail)
    )


def _default_bone(bone) -> bool:
    """Whether ``bone`` has Blender's default inherit settings (inherit rotation, full inherit scale,
    Local Location): the settings the batched formulas are exact for."""
    return bone.use_inherit_rotation and bone.inherit_scale == "FULL" and bone.use_local_location


# From this many batched chains on one armature, reading every bone's settings at once is cheaper.
BULK_FLAGS = 4


def _default_flags(bones) -> np.ndarray:
    """:func:`_default_bone` for every bone of an armature, read in bulk."""
    count = len(bones)
    flags = [np.empty(count, dtype=np.int32) for _ in range(3)]
    for values, name in zip(
        flags, ("use_inherit_rotation", "use_local_location", "inherit_scale"), strict=True
    ):
        bones.foreach_get(name, values)
    return (flags[0] != 0) & (flags[1] != 0) & (flags[2] == 0)  # inherit_scale 0 is FULL


class _Rows:
    """The per-update inputs of the batched chains: Python lists, one item per chain (or armature),
    turned into arrays once gathered. Bone indices point into the concatenated pose arrays."""

    def __init__(self) -> None:
        self.chains: list[tuple[Group, Entry, object]] = []
        self.worlds: list = []  # per armature: world matrix
        self.posed: list[np.ndarray] = []  # per armature with parented chains: every bone's pose matrix
        self.bases: list[np.ndarray] = []  # per armature: every bone's matrix_basis
        self.armature: list[int] = []  # per chain: index into worlds
        self.bones: list[
            tuple[int, int, int, int, int]
        ] = []  # parent (into posed), upper, lower, mechanism x2
        self.points: list[tuple] = []  # target and pole, world space (the target twice without a pole)
        self.has_pole: list[bool] = []
        self.settings: list[tuple[float, float]] = []  # twist, softness


def _gather(groups, depsgraph, fallback: list) -> _Rows:
    rows = _Rows()
    bone_count = posed_count = 0
    for group in groups:
        obj = group.obj
        if obj.data.is_editmode:
            fallback += [entry.step for entry in group.entries]
            continue
        evaluated = obj.evaluated_get(depsgraph)
        pose_bones = evaluated.pose.bones
        armature = len(rows.worlds)
        rows.worlds.append(evaluated.matrix_world)
        offset, posed_offset = bone_count, posed_count
        rows.bases.append(_matrices(pose_bones, "matrix_basis"))
        bone_count += len(pose_bones)
        if any(entry.parent >= 0 for entry in group.entries):
            rows.posed.append(_matrices(pose_bones, "matrix"))
            posed_count += len(pose_bones)
        chains, bones = obj.two_bone_ik.chains, obj.data.bones
        default_flags = _default_flags(bones).tolist() if len(group.entries) >= BULK_FLAGS else None
        for entry in group.entries:
            chain = chains[entry.step.chain_index]
            if not chain.enabled:
                continue
            target_source, pole_source = chain.target, chain.pole
            if (
                target_source is None
                or target_source == obj
                or pole_source == obj
                or not math.isfinite(chain.influence + chain.twist + chain.softness)
                or not (
                    default_flags[entry.bone_data[0]] and default_flags[entry.bone_data[1]]
                    if default_flags is not None
                    else _default_bone(bones[entry.bone_data[0]]) and _default_bone(bones[entry.bone_data[1]])
                )
            ):
                fallback.append(entry.step)
                continue
            target_bone = chain.target_bone if target_source.type == "ARMATURE" else ""
            in_layer = entry.step.in_layer
            target = _point(
                target_source, target_bone, chain.target_head_tail, depsgraph, "target" in in_layer
            )
            pole = target
            if pole_source is not None:
                pole_bone = chain.pole_bone if pole_source.type == "ARMATURE" else ""
                pole = _point(pole_source, pole_bone, chain.pole_head_tail, depsgraph, "pole" in in_layer)
            if target is None or pole is None:
                fallback.append(entry.step)
                continue
            if (
                entry.end_target
                and not abs(target_source.evaluated_get(depsgraph).matrix_world.determinant()) > 0.0
            ):
                fallback.append(entry.step)  # the exact path says why (a flat or non-finite target)
                continue
            rows.chains.append((group, entry, chain))
            rows.armature.append(armature)
            rows.bones.append(
                (
                    posed_offset + entry.parent if entry.parent >= 0 else -1,
                    offset + entry.upper,
                    offset + entry.lower,
                    offset + entry.mechanism_indices[0],
                    offset + entry.mechanism_indices[1],
                )
            )
            rows.points.append((*target, *pole))
            rows.has_pole.append(pole_source is not None)
            rows.settings.append((chain.twist, chain.softness))
    return rows


def _scales_squared(matrices: np.ndarray) -> np.ndarray:
    """(N, 3) squared lengths of the columns of (N, 3, 3) matrices."""
    return np.einsum("nij,nij->nj", matrices, matrices)


def _to_armature(worlds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(inverse 3x3, invertible) of the armatures' world matrices (A, 4, 4): as pose.invertible,
    finite, with a determinant not tiny next to the product of the axes' lengths."""
    linear = worlds[:, :3, :3]
    columns = np.swapaxes(linear, 1, 2)
    cofactors = np.stack(
        (
            np.cross(columns[:, 1], columns[:, 2]),
            np.cross(columns[:, 2], columns[:, 0]),
            np.cross(columns[:, 0], columns[:, 1]),
        ),
        axis=1,
    )
    determinant = np.einsum("ni,ni->n", columns[:, 0], cofactors[:, 0])
    axes = np.prod(np.sqrt(_scales_squared(linear)), axis=1)
    invertible = np.isfinite(determinant) & (axes > 0.0) & (np.abs(determinant) > 1e-6 * axes)
    safe = np.where(invertible, determinant, 1.0)
    return cofactors / safe[:, None, None], invertible


def evaluate(batch: Batch, depsgraph) -> list:
    """Solve the chains of ``batch`` and write their mechanism bones and outputs; returns the steps
    to hand to the exact path this update."""
    fallback: list = []
    rows = _gather(batch.groups, depsgraph, fallback)
    if not rows.chains:
        return fallback
    posed, bases = _row_major(rows.posed), _row_major(rows.bases)
    bones = np.array(rows.bones)
    parent = np.tile(np.eye(4), (len(bones), 1, 1))  # a root bone's "parent" is the armature
    has_parent = bones[:, 0] >= 0
    parent[has_parent] = posed[bones[has_parent, 0]]
    upper_basis, lower_basis = bases[bones[:, 1]], bases[bones[:, 2]]
    worlds = np.array(rows.worlds, dtype=np.float64)
    inverse, invertible = _to_armature(worlds)
    armature = np.array(rows.armature)
    world_points = np.array(rows.points, dtype=np.float64).reshape(-1, 2, 3)
    # point in armature space = world⁻¹ (point - world translation), for target and pole
    points = np.einsum(
        "nij,nkj->nki", inverse[armature], world_points - worlds[armature][:, None, :3, 3]
    ).reshape(-1, 6)
    entries = [entry for _, entry, _ in rows.chains]
    batch_rows = [entry.row for entry in entries]
    upper_offset, lower_offset = batch.upper_offsets[batch_rows], batch.lower_offsets[batch_rows]
    lower_bone_length = batch.lower_lengths[batch_rows]
    shape = pose_batch.chain_shapes(
        parent, upper_offset, lower_offset, upper_basis[:, :3, 3], lower_basis[:, :3, 3], lower_bone_length
    )
    length = shape.upper_length + shape.lower_length
    target, has_pole, root = points[:, :3], np.array(rows.has_pole), shape.head
    twist, softness = np.array(rows.settings, dtype=np.float64).reshape(-1, 2).T
    pole_hint = np.where(has_pole[:, None], points[:, 3:], root + shape.pole_side * length[:, None])
    # The batched formulas hold for unit FK scale under a uniformly scaled parent (pose_batch.py).
    gram = np.swapaxes(parent[:, :3, :3], 1, 2) @ parent[:, :3, :3]
    parent_scale = gram[:, 0, 0]
    usable = (
        (np.abs(_scales_squared(upper_basis[:, :3, :3]) - 1.0).max(axis=1) < 1e-6)
        & (np.abs(_scales_squared(lower_basis[:, :3, :3]) - 1.0).max(axis=1) < 1e-6)
        & (parent_scale > 0.0)
        & (np.abs(gram - parent_scale[:, None, None] * np.eye(3)).max(axis=(1, 2)) <= 1e-6 * parent_scale)
        & (shape.upper_length > 0.0)
        & (shape.lower_length > 0.0)
        & invertible[armature]
        & np.isfinite(points).all(axis=1)
        & np.isfinite(root).all(axis=1)
        & np.isfinite(pole_hint).all(axis=1)
    )
    if not usable.all():
        fallback += [entries[i].step for i in np.flatnonzero(~usable)]
        keep = np.flatnonzero(usable)
        if not len(keep):
            return fallback
        shape = pose_batch.ChainShapes(*(field[keep] for field in shape))
        target, has_pole, pole_hint, length = target[keep], has_pole[keep], pole_hint[keep], length[keep]
        twist, softness = twist[keep], softness[keep]
        root, lower_offset, bones = shape.head, lower_offset[keep], bones[keep]
        upper_basis, lower_basis = upper_basis[keep], lower_basis[keep]
        rows.chains = [rows.chains[i] for i in keep]
    result = solve_two_bone_ik_batch(
        root,
        target,
        pole_hint,
        shape.upper_length,
        shape.lower_length,
        tolerance=SOLVER_TOLERANCE,
        twist=twist,
        softness=softness,
    )
    normal, found = pose_batch.solved_normals(root, result.joints, result.ends, pole_hint, twist)
    normal = np.where(found[:, None], normal, shape.normal)
    rotations = pose_batch.solve_rotations(shape, lower_offset, result.joints, result.ends, normal)
    warning = _pole_warnings(root, target, pole_hint, length)
    fold = np.abs(shape.upper_length - shape.lower_length)
    reach = target - root
    too_close = ~result.reachable & (np.sqrt(np.einsum("ij,ij->i", reach, reach)) < fold)
    status_codes = np.where(has_pole, np.where(found, warning, 1), 3)
    statuses = (CLEAN, POLE_ON_LINE, POLE_NEAR, NO_POLE)
    changed: dict[int, tuple[Group, list]] = {}
    for side, (quaternion, basis) in enumerate(((rotations[0], upper_basis), (rotations[1], lower_basis))):
        current = bases[bones[:, 3 + side]]
        rotation = pose_batch.rotation_matrices(quaternion)
        location = basis[:, :3, 3]
        # As pose.differs: a rotation row or the location moved beyond float32 noise.
        rotation_change = np.einsum(
            "nij,nij->ni", rotation - current[:, :3, :3], rotation - current[:, :3, :3]
        )
        location_change = np.einsum("ni,ni->n", location - current[:, :3, 3], location - current[:, :3, 3])
        # "not <=", so that a NaN in a mechanism bone (a broken value to replace) counts as changed.
        scaled = ~(np.abs(_scales_squared(current[:, :3, :3]) - 1.0).max(axis=1) <= 1e-6)
        relocate = ~(location_change <= (pose.LOCATION_EPSILON * length) ** 2)
        stale = np.flatnonzero(~(rotation_change.max(axis=1) <= pose.ROTATION_EPSILON**2) | relocate | scaled)
        quaternions, locations = quaternion[stale].tolist(), location[stale].tolist()
        for row, q, loc, moved, rescaled in zip(
            stale.tolist(),
            quaternions,
            locations,
            relocate[stale].tolist(),
            scaled[stale].tolist(),
            strict=True,
        ):
            group, entry, _ = rows.chains[row]
            changed.setdefault(id(group), (group, []))[1].append(
                (entry.mechanism_indices[side], q, loc, moved, rescaled)
            )
    for group, changes in changed.values():
        _write(group.obj.pose.bones, changes)
    for (_, _, chain), code, reachable, close in zip(
        rows.chains, status_codes.tolist(), result.reachable.tolist(), too_close.tolist(), strict=True
    ):
        set_outputs(chain, statuses[code], reachable, close)
    return fallback


def _pole_warnings(root, target, pole_hint, length) -> np.ndarray:
    """evaluate._pole_warning per row: 0 none, 1 pole on the root-target line, 2 nearly on it."""
    forward = target - root
    forward_length = np.sqrt(np.einsum("ij,ij->i", forward, forward))
    offset = pole_hint - root
    cross = np.cross(offset, forward)
    distance = np.sqrt(np.einsum("ij,ij->i", cross, cross)) / np.where(
        forward_length > 0.0, forward_length, 1.0
    )
    offset_length = np.sqrt(np.einsum("ij,ij->i", offset, offset))
    on_line = distance <= SOLVER_TOLERANCE * np.maximum(offset_length, length)
    near = distance < POLE_NEAR_LINE * length
    codes = np.where(on_line, 1, np.where(near, 2, 0))
    return np.where(forward_length <= SOLVER_TOLERANCE * length, 0, codes)


# Below this many writes to one armature, writing bone by bone is cheaper than reading and writing
# every bone's channels at once (each single write also tags the armature: its cost grows with it).
BULK_WRITES = 8


def _write(pose_bones, changes) -> None:
    """Write mechanism bones' solved rotations, and their locations and scales where they changed.

    ``changes``: (bone index, quaternion, location, relocate, rescale) per bone. A bone in another
    rotation mode than quaternion gets its whole basis.
    """
    if len(changes) < BULK_WRITES:
        for index, quaternion, location, relocate, rescale in changes:
            pose_bone = pose_bones[index]
            if pose_bone.rotation_mode != "QUATERNION":
                pose_bone.matrix_basis = Matrix.LocRotScale(location, Quaternion(quaternion), None)
                continue
            pose_bone.rotation_quaternion = quaternion
            if relocate:
                pose_bone.location = location
            if rescale:
                pose_bone.scale = (1.0, 1.0, 1.0)
        return
    count = len(pose_bones)
    modes = np.empty(count, dtype=np.int32)
    pose_bones.foreach_get("rotation_mode", modes)
    channels = {}
    for name, size in (("rotation_quaternion", 4), ("location", 3), ("scale", 3)):
        channels[name] = np.empty(count * size, dtype=np.float32)
        pose_bones.foreach_get(name, channels[name])
        channels[name] = channels[name].reshape(count, size)
    other_modes = []
    for index, quaternion, location, _, _ in changes:
        if modes[index] != 0:  # not QUATERNION: after the bulk write, which would put back its location
            other_modes.append((index, quaternion, location))
            continue
        channels["rotation_quaternion"][index] = quaternion
        channels["location"][index] = location
        channels["scale"][index] = 1.0
    for name, values in channels.items():
        pose_bones.foreach_set(name, values.ravel())
    for index, quaternion, location in other_modes:
        pose_bones[index].matrix_basis = Matrix.LocRotScale(location, Quaternion(quaternion), None)
    pose_bones.id_data.update_tag(refresh={"DATA"})  # foreach_set tags nothing: one tag for the armature

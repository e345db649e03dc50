# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's output mechanism: native constraints that carry the solve, so the chain behaves like a
Blender constraint and never writes the animator's channels (docs/design.md, "Output mechanism").

For a chain on ``thigh``/``shin`` it is:

- two hidden, non-deforming mechanism bones, ``MCH-IK-thigh`` and ``MCH-IK-shin`` (unparented, in
  the hidden bone collection :data:`COLLECTION`). The driver writes the solved ``matrix_basis`` of
  each chain bone into its mechanism bone; nothing else writes them.
- a Copy Transforms constraint named :data:`CONSTRAINT` at the top of each chain bone's stack,
  copying its mechanism bone from local space to local space. Local space is the bone's
  ``matrix_basis`` space, so the chain bone gets the solve exactly, under any parent and inherit
  flag, and Blender's influence blend is the per-bone local blend (rotations slerp from the FK pose).
- with End Rotation Target, a Copy Rotation constraint named :data:`END_CONSTRAINT` on the end bone
  (world space to world space), targeting the chain's target.
- a driver on each constraint's influence: ``influence * enabled``, reading the chain's own
  properties. Blender evaluates it on every frame, in playback, ``frame_set`` and renders, with no
  Python (a simple expression needs no Auto Run).

Bones can only be added in Edit Mode, so :func:`build` is run by the operators (Add, Update
Mechanism) and on loading a file, never by the handler. Constraints and drivers need no Edit Mode:
:func:`sync` keeps them in step with the chain's settings from the properties' update callbacks.
"""

from __future__ import annotations

import contextlib

import bpy

from .bones import ChainError, chain_bones, end_bone, unique_name

COLLECTION = "Two-Bone IK Mechanism"
CONSTRAINT = "Two-Bone IK"
END_CONSTRAINT = "Two-Bone IK End Rotation"
BONE_PREFIX = "MCH-IK-"
# The chain's own properties, read by index: Blender resolves a driver's path on every evaluation,
# and finding a collection item by name is a linear search (docs/design.md).
DRIVER_VARIABLES = ("influence", "enabled")

MISSING = "The chain has no mechanism: run Pose > Two-Bone IK > Update Mechanism"


class MechanismError(ValueError):
    """The mechanism cannot be built on this armature; the message says why and what to do."""


def driver_paths(obj) -> dict[str, frozenset[str]]:
    """{data path of each of ``obj``'s drivers: what its variables read, each up to its last '.'}.
    (A dict: finding a driver in ``animation.drivers`` is a linear search.)"""
    animation = obj.animation_data
    if animation is None:
        return {}
    return {
        fcurve.data_path: frozenset(
            target.data_path.rpartition(".")[0]
            for variable in fcurve.driver.variables
            for target in variable.targets
        )
        for fcurve in animation.drivers
    }


def chain_index(obj, chain) -> int:
    """The position of ``chain`` in ``obj.two_bone_ik.chains``."""
    pointer = chain.as_pointer()
    return next(index for index, other in enumerate(obj.two_bone_ik.chains) if other.as_pointer() == pointer)


def chain_paths(chain, index: int) -> tuple[str, str]:
    """The data paths (from the armature object) a driver may read ``chain`` by: its index, as
    :func:`_drive` writes it, and its name, as earlier versions did."""
    return f"two_bone_ik.chains[{index}]", f'two_bone_ik.chains["{bpy.utils.escape_identifier(chain.name)}"]'


def mechanism_bone(obj, bone_name: str, drivers=None, reads: tuple[str, ...] = ()) -> str | None:
    """Name of the mechanism bone that chain bone ``bone_name`` copies, or None when the bone has no
    usable :data:`CONSTRAINT` (missing, not Copy Transforms, other target, no such bone, no
    influence driver, or one reading something else than ``reads`` when given). ``drivers``:
    :func:`driver_paths` of ``obj``, when already known."""
    pose_bone = obj.pose.bones.get(bone_name)
    constraint = pose_bone.constraints.get(CONSTRAINT) if pose_bone is not None else None
    if constraint is None or constraint.type != "COPY_TRANSFORMS" or constraint.target != obj:
        return None
    drivers = driver_paths(obj) if drivers is None else drivers
    variables = drivers.get(constraint.path_from_id("influence"))
    if variables is None or (reads and not variables <= set(reads)):
        return None  # without its driver the constraint ignores influence and Enabled
    name = constraint.subtarget
    return name if name and obj.pose.bones.get(name) is not None else None


def mechanism_bones(obj, chain, drivers=None, index: int | None = None) -> tuple[str, str]:
    """(upper, lower) mechanism bone names of a chain whose bones are valid; ChainError otherwise.

    Each constraint's driver must read this chain: a chain moved in the list by script reads
    another's influence until Update Mechanism re-points it. With End Rotation Target, the end bone
    must carry :data:`END_CONSTRAINT` aimed at the chain's target too. The message says what to run.
    ``drivers``: as for :func:`mechanism_bone`; ``index``: the chain's position, when known.
    """
    upper, lower = chain_bones(obj, chain)
    drivers = driver_paths(obj) if drivers is None else drivers
    reads = chain_paths(chain, chain_index(obj, chain) if index is None else index)
    names = (mechanism_bone(obj, upper.name, drivers, reads), mechanism_bone(obj, lower.name, drivers, reads))
    if names[0] is None or names[1] is None:
        raise ChainError(MISSING)
    if chain.end_rotation == "TARGET":
        end = end_bone(chain, lower)
        if end is not None and not _end_constraint_matches(obj, chain, end.name):
            raise ChainError(MISSING)
    return names[0], names[1]


def _end_constraint_matches(obj, chain, end_name: str) -> bool:
    constraint = obj.pose.bones[end_name].constraints.get(END_CONSTRAINT)
    return (
        constraint is not None
        and constraint.target == chain.target
        and constraint.subtarget == (chain.target_bone if _is_armature(chain.target) else "")
    )


def _is_armature(obj) -> bool:
    return obj is not None and obj.type == "ARMATURE"


def owns_bones(obj, chain) -> bool:
    """Whether ``chain`` is the first chain of ``obj`` using each of its bones: the mechanism of a
    bone belongs to that chain alone (two chains writing one bone would fight over it)."""
    pointer = chain.as_pointer()
    for other in obj.two_bone_ik.chains:
        if other.as_pointer() == pointer:
            return True
        if {other.upper_bone, other.lower_bone} & {chain.upper_bone, chain.lower_bone}:
            return False
    return False


def can_add_bones(obj) -> str:
    """Why mechanism bones cannot be added to ``obj``'s armature ('' when they can)."""
    if obj.library is not None:
        return f"'{obj.name}' is linked from a library: make a library override first"
    data = obj.data
    if data.library is not None or data.override_library is not None:
        return (
            f"The bones of '{obj.name}' come from a library, and an override cannot add bones: "
            "add the chain in the library file, where the rig is built"
        )
    return ""


@contextlib.contextmanager
def edit_bones(obj):
    """Switch ``obj`` to Edit Mode, yield its edit bones, then go back to the mode it was in.

    Raises MechanismError (naming the armature) when Blender refuses Edit Mode (hidden or
    excluded object).
    """
    context = bpy.context
    mode = obj.mode
    if mode == "EDIT":
        raise MechanismError(f"'{obj.name}' is in Edit Mode: leave it to build the chain's mechanism")
    view_layer = context.view_layer
    active = view_layer.objects.active
    view_layer.objects.active = obj
    try:
        with context.temp_override(active_object=obj, object=obj, selected_objects=[obj]):
            bpy.ops.object.mode_set(mode="EDIT")
    except (RuntimeError, TypeError) as error:
        view_layer.objects.active = active
        raise MechanismError(f"'{obj.name}' cannot enter Edit Mode to add bones: {error}") from None
    try:
        yield obj.data.edit_bones
    finally:
        with context.temp_override(active_object=obj, object=obj, selected_objects=[obj]):
            bpy.ops.object.mode_set(mode=mode)
        view_layer.objects.active = active


def _bone_collection(armature):
    collection = armature.collections_all.get(COLLECTION)
    if collection is None:
        collection = armature.collections.new(COLLECTION)
        collection.is_visible = False
    return collection


def build(obj, chains) -> None:
    """Build whatever the mechanism of ``chains`` (of armature object ``obj``) lacks: bones,
    constraints, drivers. Existing parts are kept, so it is safe to run again (Update Mechanism).

    Chains whose bones are missing are left alone (their status says so). Raises MechanismError
    when bones are needed and the armature cannot take them (:func:`can_add_bones`, Edit Mode).
    """
    wanted = []  # chain bones whose constraint is missing
    valid = []
    _name_chains(obj)
    drivers = driver_paths(obj)
    positions = {other.as_pointer(): index for index, other in enumerate(obj.two_bone_ik.chains)}
    for chain in chains:
        try:
            upper, lower = chain_bones(obj, chain)
        except ChainError:
            continue
        if not owns_bones(obj, chain):
            continue
        valid.append((positions[chain.as_pointer()], chain))
        wanted += [bone.name for bone in (upper, lower) if mechanism_bone(obj, bone.name, drivers) is None]
    # Objects sharing one armature (a crowd) share its bones: reuse a mechanism bone already there.
    existing = {name: f"{BONE_PREFIX}{name}" for name in wanted if obj.data.bones.get(f"{BONE_PREFIX}{name}")}
    missing = [name for name in wanted if name not in existing]
    if missing:
        reason = can_add_bones(obj)
        if reason:
            raise MechanismError(reason)
        with edit_bones(obj) as bones:
            collection = _bone_collection(obj.data)
            for bone_name in missing:
                source = bones[bone_name]
                mechanism = bones.new(f"{BONE_PREFIX}{bone_name}")
                mechanism.head, mechanism.tail, mechanism.roll = source.head, source.tail, source.roll
                mechanism.use_deform = False
                collection.assign(mechanism)
                existing[bone_name] = mechanism.name  # Blender may have added a .001 suffix
    for bone_name, mechanism_name in existing.items():
        _copy_constraint(obj, bone_name, mechanism_name)
    for index, chain in valid:
        sync(obj, chain, index)


def _name_chains(obj) -> None:
    """Give every chain of ``obj`` a unique, non-empty name (its lower bone's): the influence drivers
    find their chain by name, so chains added by script without one would share a driver."""
    names: set[str] = set()
    for chain in obj.two_bone_ik.chains:
        if not chain.name or chain.name in names:
            chain.name = unique_name(names, chain.lower_bone or "chain")
        names.add(chain.name)


def _copy_constraint(obj, bone_name: str, mechanism_name: str) -> None:
    """Put the :data:`CONSTRAINT` copying ``mechanism_name`` at the top of ``bone_name``'s stack."""
    constraints = obj.pose.bones[bone_name].constraints
    old = constraints.get(CONSTRAINT)
    if old is not None:
        _remove_constraint(obj.pose.bones[bone_name], old)
    constraint = constraints.new("COPY_TRANSFORMS")
    constraint.name = CONSTRAINT
    constraint.target, constraint.subtarget = obj, mechanism_name
    constraint.owner_space = constraint.target_space = "LOCAL"
    constraint.mix_mode = "REPLACE"
    constraint.show_expanded = False
    constraints.move(len(constraints) - 1, 0)


def _drive(obj, constraint, chain, index: int) -> None:
    """Drive ``constraint.influence`` with the chain's ``influence * enabled`` (chain ``index``)."""
    fcurve = constraint.driver_add("influence")
    driver = fcurve.driver
    driver.type = "SCRIPTED"
    for variable in list(driver.variables):
        driver.variables.remove(variable)
    path = chain_paths(chain, index)[0]
    for prop in DRIVER_VARIABLES:
        variable = driver.variables.new()
        variable.name, variable.type = prop, "SINGLE_PROP"
        target = variable.targets[0]
        target.id_type, target.id = "OBJECT", obj
        target.data_path = f"{path}.{prop}"
    driver.expression = " * ".join(DRIVER_VARIABLES)


def sync(obj, chain, index: int | None = None) -> None:
    """Bring the constraints and drivers of one chain in step with its settings (no Edit Mode):
    the influence drivers, and the end bone's :data:`END_CONSTRAINT`, present only with End
    Rotation Target and aimed at the chain's target. Does nothing for a chain whose bones or
    mechanism bones are missing (its status says so)."""
    try:
        upper, lower = chain_bones(obj, chain)
        end = end_bone(chain, lower)
    except ChainError:
        return
    if not owns_bones(obj, chain):
        return  # a later chain on an earlier chain's bones does not solve (its status says so)
    index = chain_index(obj, chain) if index is None else index
    pose_bones = obj.pose.bones
    for bone in (upper, lower):
        constraint = pose_bones[bone.name].constraints.get(CONSTRAINT)
        if constraint is not None:
            _drive(obj, constraint, chain, index)
    for child in lower.children:
        constraint = pose_bones[child.name].constraints.get(END_CONSTRAINT)
        keep = chain.end_rotation == "TARGET" and end is not None and child.name == end.name
        if constraint is not None and not keep:
            _remove_constraint(pose_bones[child.name], constraint)
    if chain.end_rotation != "TARGET" or end is None:
        return
    constraints = pose_bones[end.name].constraints
    constraint = constraints.get(END_CONSTRAINT)
    if constraint is None:
        constraint = constraints.new("COPY_ROTATION")
        constraint.name = END_CONSTRAINT
        constraint.show_expanded = False
    constraint.target = chain.target
    constraint.subtarget = chain.target_bone if _is_armature(chain.target) else ""
    constraint.owner_space = constraint.target_space = "WORLD"
    constraint.mix_mode = "REPLACE"
    _drive(obj, constraint, chain, index)


def _remove_constraint(pose_bone, constraint) -> None:
    """Remove one of our constraints with its influence driver (Blender keeps orphaned drivers)."""
    with contextlib.suppress(RuntimeError, TypeError):  # no driver left: nothing to remove
        constraint.driver_remove("influence")
    pose_bone.constraints.remove(constraint)


def _chain_drivers(obj, chain) -> list:
    """The influence drivers (F-curves) on ``obj`` that read ``chain``: they mark the constraints
    that belong to it, whatever became of its bones since."""
    animation = obj.animation_data
    if animation is None:
        return []
    prefixes = tuple(f"{path}." for path in chain_paths(chain, chain_index(obj, chain)))
    return [
        fcurve
        for fcurve in animation.drivers
        if any(
            target.data_path.startswith(prefixes)
            for variable in fcurve.driver.variables
            for target in variable.targets
        )
    ]


def remove(obj, chain) -> None:
    """Remove the chain's constraints (those whose influence driver reads it), their drivers and its
    mechanism bones; the chain bones' own channels are untouched, so they show the animator's pose.

    Works for a chain whose bones were renamed or deleted, and leaves alone the mechanism of an
    earlier chain on the same bones. Bones are removed only where the armature can be edited and no
    other object shares it (a library override keeps the library's bones).
    """
    bones = {f"{BONE_PREFIX}{chain.upper_bone}", f"{BONE_PREFIX}{chain.lower_bone}"}
    for fcurve in _chain_drivers(obj, chain):
        owner_path = fcurve.data_path.rpartition(".constraints[")[0]
        constraint_path = fcurve.data_path.removesuffix(".influence")
        try:
            pose_bone = obj.path_resolve(owner_path)
            constraint = obj.path_resolve(constraint_path)
        except ValueError:  # the bone is gone: only the driver is left
            obj.animation_data.drivers.remove(fcurve)
            continue
        if constraint.type == "COPY_TRANSFORMS" and constraint.subtarget.startswith(BONE_PREFIX):
            bones.add(constraint.subtarget)
        _remove_constraint(pose_bone, constraint)
    if owns_bones(obj, chain):  # constraints whose drivers are gone are the chain's too
        for bone_name in (chain.upper_bone, chain.lower_bone):
            pose_bone = obj.pose.bones.get(bone_name)
            constraint = pose_bone.constraints.get(CONSTRAINT) if pose_bone is not None else None
            if constraint is not None:
                if constraint.type == "COPY_TRANSFORMS" and constraint.subtarget.startswith(BONE_PREFIX):
                    bones.add(constraint.subtarget)
                _remove_constraint(pose_bone, constraint)
            if pose_bone is not None and bone_name == chain.lower_bone:
                for child in pose_bone.children:
                    end = child.constraints.get(END_CONSTRAINT)
                    if end is not None:
                        _remove_constraint(child, end)
    used = {
        constraint.subtarget
        for pose_bone in obj.pose.bones
        for constraint in pose_bone.constraints
        if constraint.type == "COPY_TRANSFORMS" and constraint.target == obj
    }
    doomed = [name for name in bones if name not in used and obj.data.bones.get(name) is not None]
    shared = any(other.data == obj.data and other != obj for other in bpy.data.objects)
    if doomed and not shared and not can_add_bones(obj):
        with edit_bones(obj) as edit:
            for name in doomed:
                edit.remove(edit[name])

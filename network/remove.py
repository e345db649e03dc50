# SPDX-License-Identifier: GPL-3.0-or-later
"""Remove chains' networks: their bones, the chain bones' constraints and every driver and key of
theirs, keeping what riggers and animators made (a switch driven by a chain's Influence, the FK
keys); and the clearing a rebuild does first."""

from __future__ import annotations

import contextlib

import bpy

from ..compat import animation_fcurves
from . import outputs, spec
from .edit import can_add_bones, edit_bones, in_mode
from .health import first_users, renamed_part, sharing, users_parts
from .layout import (
    COLLECTION,
    PROPERTIES,
    bone_path,
    bone_prefix,
    influence_path,
    legacy_setting_path,
    setting_path,
)
from .naming import Parts, chain_parts

# The names of the chain's constraints that pose (each has an influence driver), and of those on its
# upper and lower bones (:data:`.spec.OUTPUTS`).
POSING_NAMES = frozenset(row.name for row in spec.POSING)
CHAIN_BONE_NAMES = frozenset(row.name for row in spec.OUTPUTS if row.slot != "end")


def _driven_constraints(obj, influences: set[str]) -> tuple[set[str], set[tuple[str, str]]]:
    """The influence drivers that read one of the Influence settings of data paths ``influences``
    (their data paths), and the chain constraints they drive ((pose bone name, constraint name)):
    found by the driver, so a chain bone that was renamed is found too, and a driver left on a
    deleted bone. A constraint of another name is the rigger's (a switch driven by the chain's
    Influence): it and its driver stay."""
    animation = obj.animation_data
    if animation is None:
        return set(), set()
    paths: set[str] = set()
    constraints: set[tuple[str, str]] = set()
    # Twice: the lower and end bones' drivers read the upper bone's influence (spec.SAME_INFLUENCE).
    for _ in range(2):
        found = _driven_pass(obj, animation, influences, paths, constraints)
        influences = influences | found
    return paths, constraints


def _driven_pass(obj, animation, influences: set[str], paths: set[str], constraints: set) -> set[str]:
    """One pass of :func:`_driven_constraints`: adds to ``paths`` and ``constraints``; returns the
    influence paths of the chain constraints found."""
    found = set()
    for fcurve in animation.drivers:
        path = fcurve.data_path
        if not path.endswith(".influence") or ".constraints[" not in path:
            continue
        if not influences & {
            target.data_path for variable in fcurve.driver.variables for target in variable.targets
        }:
            continue
        try:
            pose_bone = obj.path_resolve(bone_prefix(path))
            constraint = obj.path_resolve(path.removesuffix(".influence"))
        except ValueError:  # the bone is gone: only the driver is left
            paths.add(path)
            continue
        if constraint.name in POSING_NAMES:  # a rigger's own switch reading it stays
            paths.add(path)
            constraints.add((pose_bone.name, constraint.name))
            found.add(path)
    return found


def remove(obj, chains) -> None:
    """Remove the networks of ``chains`` (of ``obj``): their constraints on the chain bones and the
    end bones with their drivers (found by the drivers too, so a renamed chain bone loses them),
    every F-Curve on their bones (the settings' keys and drivers, in actions, NLA strips and
    drivers), and their bones (where the armature can be edited; not those that chains of
    other objects sharing the armature use, since such objects share its bones), all in one pass
    and one Edit Mode session. The chain bones then show their own channels: the animator's pose,
    never written. A network bone renamed by hand (:func:`renamed_part`) is removed under its new
    name. A chain on an earlier chain's bones (:func:`sharing`) has no network of its own:
    skipped."""
    users = first_users(obj)
    chains = [chain for chain in chains if not sharing(obj, chain, users)]
    if not chains:
        return
    names = [chain_parts(chain) for chain in chains]
    # The settings' bone: the lower bone, or where its drivers read them after a rename.
    holders = {chain.lower_bone for chain in chains} | _settings_read(obj, names)
    settings = {setting_path(holder, name) for holder in holders for name in PROPERTIES}
    read = {setting_path(holder, "influence") for holder in holders}
    read |= {legacy_setting_path(name.root, "influence") for name in names}
    influences, constraints = _driven_constraints(obj, read)
    for chain in chains:
        for row in spec.OUTPUTS:
            constraints |= {(bone, row.name) for bone in outputs.holders(obj, chain, row)}
    # The muted one has no driver to find it by after a rename: on every settings' bone too.
    constraints |= {(holder, spec.CONTROLS.name) for holder in holders}
    network = {name for chain_names in names for name in chain_names}
    # A network bone renamed by hand (the status names it) goes too, with what is wired to it.
    network |= {found[1] for chain in chains if (found := renamed_part(obj, chain)) is not None}
    # Objects sharing the armature (linked duplicates) share its bones: those their chains use stay.
    needed = users_parts(obj.data, skip=obj)
    present = [name for name in network if obj.data.bones.get(name) is not None and name not in needed]
    if can_add_bones(obj):
        present = []  # library bones: the armature keeps them
    paths = {bone_path(name) for name in network}
    influences |= {influence_path(bone, name) for bone, name in constraints} | settings
    if present:
        with edit_bones(obj) as edit:  # first: it may be refused, and nothing is changed yet
            _remove_fcurves(obj, paths, influences)
            _remove_settings(obj, holders)
            # Not aimed at the bones about to go: a relation to a deleted bone is a depsgraph error.
            for bone_name, name in constraints:
                pose_bone = obj.pose.bones.get(bone_name)
                constraint = pose_bone.constraints.get(name) if pose_bone is not None else None
                if constraint is not None:
                    constraint.target = None
            by_name = {bone.name: bone for bone in edit}  # edit_bones[name] walks the list
            for name in present:
                edit.remove(by_name[name])
        collection = obj.data.collections_all.get(COLLECTION)
        if collection is not None and not len(collection.bones):  # the last chain's network went
            obj.data.collections.remove(collection)
    else:
        _remove_fcurves(obj, paths, influences)
        _remove_settings(obj, holders)
    # Blender tests every constraint left on the armature after each single removal: bones whose
    # constraints are all the chains' are cleared in one call where it can (Pose Mode).
    _remove_constraints(obj, constraints)


def _remove_settings(obj, holders: set[str]) -> None:
    """Remove the settings' and rolls' custom properties from the pose bones ``holders``."""
    for name in holders:
        holder = obj.pose.bones.get(name)
        for key in PROPERTIES.values() if holder is not None else ():
            if key in holder:
                del holder[key]


def _settings_read(obj, names: list[Parts]) -> set[str]:
    """The bones whose Influence property the Copy Transforms of the networks ``names`` read (the
    lower bones, under their names now: Blender's rename re-points the drivers)."""
    solved = {name for chain_names in names for name in (chain_names.upper, chain_names.lower)}
    drivers = obj.animation_data.drivers if obj.animation_data is not None else ()
    key = f'["{PROPERTIES["influence"]}"]'
    found = set()
    for fcurve in drivers:
        path = fcurve.data_path
        if not path.endswith(".influence") or f'.constraints["{spec.COPY_UPPER.name}"]' not in path:
            continue
        try:
            constraint = obj.path_resolve(path.removesuffix(".influence"))
        except ValueError:
            continue
        if getattr(constraint, "subtarget", None) not in solved:
            continue
        for variable in fcurve.driver.variables:
            for target in variable.targets:
                prefix = bone_prefix(target.data_path)
                if prefix and target.data_path == prefix + key:
                    with contextlib.suppress(ValueError):
                        found.add(obj.path_resolve(prefix).name)
    return found


def _remove_fcurves(obj, paths: set[str], influences: set[str]) -> None:
    """Remove every F-Curve of ``obj`` on the pose bones of data ``paths`` (:func:`bone_path`) and
    those of data paths ``influences`` (constraint influences, the chains' settings), in one
    pass."""
    for fcurves in animation_fcurves(obj):
        doomed = [f for f in fcurves if bone_prefix(f.data_path) in paths or f.data_path in influences]
        for fcurve in doomed:
            fcurves.remove(fcurve)
    drivers_removed(obj)


def clear_constraints(obj, chains_names: list[Parts], chain_bones: list[str]) -> None:
    """Remove every constraint of the networks' existing bones (a bone made anew under the same
    name in Edit Mode keeps its pose channel, constraints and all; the settings on the root bone
    stay with it, as they should) and the chain's constraint on each of ``chain_bones``, with its
    influence driver, in as few calls as Blender allows (:func:`_clear_whole_stacks`)."""
    bones = obj.pose.bones
    constraints = {
        (name, constraint.name)
        for names in chains_names
        for name in names
        if (pose_bone := bones.get(name)) is not None
        for constraint in pose_bone.constraints
    }
    ours = {
        (bone, name)
        for bone in chain_bones
        for name in CHAIN_BONE_NAMES
        if (pose_bone := bones.get(bone)) is not None and pose_bone.constraints.get(name) is not None
    }
    _remove_fcurves(obj, set(), {influence_path(bone, name) for bone, name in ours})
    _remove_constraints(obj, constraints | ours)


def _remove_constraints(obj, constraints: set[tuple[str, str]]) -> None:
    """Remove ``constraints`` ((pose bone name, constraint name)) of ``obj``: whole stacks in one
    call (:func:`_clear_whole_stacks`), the rest one by one."""
    bones = obj.pose.bones
    for bone_name, name in sorted(_clear_whole_stacks(obj, constraints)):
        stack = bones[bone_name].constraints
        stack.remove(stack[name])


def _clear_whole_stacks(obj, constraints: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """Of ``constraints`` ((pose bone name, constraint name)) of ``obj``, remove those of the bones
    that have no others, in one call (Blender's Clear Pose Constraints, in Pose Mode: ``obj`` is
    switched there and back if need be). Returns the ones left that exist. Raises MechanismError
    when Blender refuses Pose Mode."""
    bones = obj.pose.bones
    by_bone: dict[str, set[str]] = {}
    for bone_name, name in constraints:
        pose_bone = bones.get(bone_name)
        if pose_bone is not None and pose_bone.constraints.get(name) is not None:
            by_bone.setdefault(bone_name, set()).add(name)
    whole = [
        bones[bone_name]
        for bone_name, names in by_bone.items()
        if {constraint.name for constraint in bones[bone_name].constraints} <= names
    ]
    if not whole:
        return [(bone_name, name) for bone_name, names in by_bone.items() for name in names]
    names_whole = [pose_bone.name for pose_bone in whole]
    # Outside Pose Mode, a switch there and back (two evaluations) beats a removal at a time.
    with contextlib.nullcontext() if obj.mode == "POSE" else in_mode(obj, "POSE"):
        whole = [bones[name] for name in names_whole]  # a mode switch may free the references
        with bpy.context.temp_override(object=obj, active_object=obj, selected_pose_bones=whole):
            if bpy.ops.pose.constraints_clear.poll():  # type: ignore[call-arg]  # the stub wants a context
                bpy.ops.pose.constraints_clear()
                for name in names_whole:
                    del by_bone[name]
    return [(bone_name, name) for bone_name, names in by_bone.items() for name in names]


def clear_foreign(obj, chains_names: list[Parts]) -> None:
    """Remove keys and drivers on the networks' bones (the rebuild makes its drivers anew; the keys a
    network of the earlier layout kept there were moved or measured first: network/legacy.py), in one pass."""
    paths = {bone_path(name) for names in chains_names for name in names}
    for fcurves in animation_fcurves(obj):
        for fcurve in [f for f in fcurves if bone_prefix(f.data_path) in paths]:
            fcurves.remove(fcurve)
    drivers_removed(obj)


def remove_constraint(pose_bone, name: str) -> None:
    """Remove our constraint ``name`` from ``pose_bone`` with its influence driver."""
    constraint = pose_bone.constraints.get(name)
    if constraint is None:
        return
    with contextlib.suppress(RuntimeError, TypeError):  # no driver left: nothing to remove
        constraint.driver_remove("influence")
        drivers_removed(pose_bone.id_data)
    pose_bone.constraints.remove(constraint)


def drivers_removed(obj) -> None:
    """Call after removing drivers (or other F-Curves) of ``obj`` outside Edit Mode: Blender then
    copies ``obj`` into the depsgraph again. Until it does, the evaluated copy keeps its old list of
    drivers, which the depsgraph evaluates by position, so the drivers after a removed one turn
    invalid at the next update (measured: every driver of the armature's other chains)."""
    obj.update_tag()

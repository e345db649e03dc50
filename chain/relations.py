# SPDX-License-Identifier: GPL-3.0-or-later
"""What moves a bone or an object: the walk through parenting, constraints, drivers and deformed
meshes that tells a chain's target or pole which follows the chain's own bones (a cycle)."""

from __future__ import annotations

import bpy

from ..network import layout

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


def follows(source, bone_name: str):
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

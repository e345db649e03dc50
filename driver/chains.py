# SPDX-License-Identifier: GPL-3.0-or-later
"""Creating chains on an armature: the set-up the add operator performs, kept out of the operator."""

from __future__ import annotations

import bpy
from mathutils import Vector

from . import pose
from .evaluate import chain_bones

# How far the pole empty sits from the joint, as a share of the chain's length.
POLE_DISTANCE = 0.5


def _unique_name(names, wanted: str) -> str:
    name, number = wanted, 1
    while name in names:
        number += 1
        name = f"{wanted}.{number:03d}"
    return name


def current_pole_side(obj, upper_name: str, lower_name: str) -> tuple[Vector, Vector, Vector, Vector]:
    """(root, joint, end, side) of the chain's current pose, armature space.

    ``side`` is the unit direction from the root-end line to the joint; for a straight pose it is
    the rest pole side carried by the upper bone's current rotation, so a pole placed along it keeps
    the bones' roll.
    """
    upper_bone, lower_bone = obj.data.bones[upper_name], obj.data.bones[lower_name]
    upper_pose, lower_pose = obj.pose.bones[upper_name], obj.pose.bones[lower_name]
    root, joint, end = upper_pose.head.copy(), lower_pose.head.copy(), lower_pose.tail.copy()
    forward = end - root
    offset = joint - root
    if forward.length > 0.0:
        offset -= offset.dot(forward) / forward.length_squared * forward
    rest = pose.chain_rest(upper_bone, lower_bone)
    if offset.length > pose.PARALLEL * (rest.upper_length + rest.lower_length):
        return root, joint, end, offset.normalized()
    turn = upper_pose.matrix.to_3x3().normalized() @ upper_bone.matrix_local.to_3x3().inverted()
    return root, joint, end, (turn @ rest.pole_side).normalized()


def add_chain(context, obj, lower_name: str):
    """Add a chain on ``lower_name`` and its parent, with a target at the lower tail and a pole on
    the bend side of the joint, so the first solve reproduces the current pose.

    Returns the new chain. Raises ValueError (naming the bone) when the bone cannot carry a chain.
    """
    lower_bone = obj.data.bones.get(lower_name)
    if lower_bone is None:
        raise ValueError(f"lower_name: bone '{lower_name}' not found")
    if lower_bone.parent is None:
        raise ValueError(f"lower_name: bone '{lower_name}' has no parent to be the upper bone")
    upper_name = lower_bone.parent.name
    context.view_layer.update()  # the pose matrices must be current before they are read
    root, joint, end, side = current_pole_side(obj, upper_name, lower_name)
    length = (joint - root).length + (end - joint).length

    collection = obj.users_collection[0] if obj.users_collection else context.scene.collection
    world = obj.matrix_world
    target = bpy.data.objects.new(f"IK Target {lower_name}", None)
    target.empty_display_type = "SPHERE"
    target.empty_display_size = max(0.05 * length, 1e-3)
    target.location = world @ end
    pole = bpy.data.objects.new(f"IK Pole {lower_name}", None)
    pole.empty_display_type = "PLAIN_AXES"
    pole.empty_display_size = max(0.1 * length, 1e-3)
    pole.location = world @ (joint + side * (POLE_DISTANCE * length))
    for empty in (target, pole):
        collection.objects.link(empty)

    chains = obj.two_bone_ik.chains
    chain = chains.add()
    chain.name = _unique_name({other.name for other in chains if other != chain}, lower_name)
    chain.upper_bone, chain.lower_bone = upper_name, lower_name
    chain.target, chain.pole = target, pole
    obj.two_bone_ik.active_chain_index = len(chains) - 1
    chain_bones(obj, chain)  # validates the pair
    return chain

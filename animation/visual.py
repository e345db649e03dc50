# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain's result as channel values: what Apply, Bake and Snap FK to IK write into the bones.

The chain's constraints blend each bone from its own channels (the FK pose) to its network's solved
bone (network/build.py) by their evaluated influence. A bone with no other constraint gets the
rotation of its evaluated pose (exact whatever the blend did); a bone with other constraints gets
the local blend of its FK pose and the solved bone's orientation, so those constraints stay out of
the keys and still apply on top. Location and scale channels stay as they are.
"""

from __future__ import annotations

from mathutils import Matrix, Vector

from ..chain import pose, sources
from ..chain.bones import ChainError, chain_bone_slots, checked_bones, end_bone
from ..network import naming, outputs, spec

EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


def _influence(pose_bone, name: str, influence: float | None) -> float:
    if influence is not None:
        return influence
    constraint = pose_bone.constraints.get(name)
    return constraint.influence if constraint is not None else 0.0


def _only_ours(pose_bone, name: str) -> bool:
    """Whether the only active constraint of ``pose_bone`` is the chain's own ``name``."""
    return not any(c.enabled and c.influence > 0.0 and c.name != name for c in pose_bone.constraints)


def check_channels(obj, chain, remedy: str = "or bake with Blender's Bake Action (Visual Keying)") -> None:
    """ChainError when channel values cannot give the chain's result with the chain off, nor the
    channels the pose the animator sees with it off: an active constraint before the chain's own on
    one of its bones (Constraint Position Last, as on Rigify's ORG bones) is overridden by the
    chain's Copy Transforms while the chain is on, and acts on the channels once it is off.
    Constraints after the chain's act on the result either way. ``remedy`` ends the message."""
    chain_bone_slots(obj, chain)  # raises for missing bones or a wrong End Bone
    for name, row in outputs.chain_outputs(obj, chain, spec.POSING):
        for constraint in obj.pose.bones[name].constraints:
            if constraint.name == row.name:
                break
            if constraint.enabled and constraint.influence > 0.0:
                raise ChainError(
                    f"'{name}' has the constraint '{constraint.name}' before the chain's, which overrides "
                    "it: with the chain off that constraint sets the bone, not its channels; "
                    f"mute it, {remedy}"
                )


def result_bases(obj, chain, depsgraph, influence: float | None = None) -> list[tuple[str, Matrix]]:
    """(bone name, ``matrix_basis``) that reproduce the chain's evaluated result with the chain off.

    Parameters
    ----------
    obj : bpy.types.Object
        The armature object (original).
    chain : TwoBoneIKChain
        One of its chains (its network's solved bones hold the solve).
    depsgraph : bpy.types.Depsgraph
        Read through: the evaluated channels, solved bones and constraint influences.
    influence : float or None
        Use this influence instead of the constraints' evaluated ones (1.0: the full solve).

    Returns
    -------
    list of (str, mathutils.Matrix)
        The upper and lower bones, and the end bone when End Rotation is Target, in that order.

    Raises
    ------
    ChainError
        When the chain's bones or network are missing, or channels cannot give its result
        (:func:`check_channels`).
    """
    upper_bone, lower_bone = checked_bones(obj, chain)
    check_channels(obj, chain)
    names = naming.parts(upper_bone.name, lower_bone.name)
    obj_eval = obj.evaluated_get(depsgraph)
    bones = obj_eval.pose.bones
    results = []
    # Copies: evaluated data is freed on the next evaluation, and mathutils would still point at it.
    parent_matrix = bones[upper_bone.name].parent.matrix.copy() if upper_bone.parent is not None else None
    for bone, solved_name in ((upper_bone, names.upper), (lower_bone, names.lower)):
        pose_bone = bones[bone.name]
        fk = pose_bone.matrix_basis.copy()
        if influence is None and _only_ours(pose_bone, spec.OUTPUT):
            # The evaluated pose itself: Blender blends influence in world space, which differs
            # from a local blend under non-uniform scale; the rotation that gives it is exact.
            basis = pose.turned_basis(bone, fk, pose_bone.head, pose_bone.matrix.to_3x3(), parent_matrix)
        else:
            weight = _influence(pose_bone, spec.OUTPUT, influence)
            solved = bones[solved_name].matrix
            full = pose.turned_basis(bone, fk, solved.translation, solved.to_3x3(), parent_matrix)
            basis = pose.blend(fk, full, weight)
        results.append((bone.name, basis))
        lower_pose = pose.to_pose(bone, basis, parent_matrix)  # the lower bone's, after the loop
        parent_matrix = lower_pose
    end = end_bone(chain, lower_bone) if chain.end_rotation == "TARGET" else None
    if end is not None:
        source, bone = sources.source_of(chain, "target")
        if source is None:
            raise ChainError("Set a target object")
        target = source.evaluated_get(depsgraph)
        target_matrix = target.matrix_world.copy()
        if bone is not None:
            target_matrix = target_matrix @ target.pose.bones[bone.name].matrix
        pose_bone = bones[end.name]
        # The end constraint's rule (Copy Rotation, world space): the target's rotation read as
        # Euler angles in the end bone's order (XYZ for a quaternion bone), as Blender reads it,
        # a mirrored target's included; seen from the armature, a mirror there taken out.
        order = pose_bone.rotation_mode if pose_bone.rotation_mode in EULER_ORDERS else "XYZ"
        turned = target_matrix.to_3x3().normalized().to_euler(order).to_matrix()
        orientation = pose.rotation_of(obj_eval.matrix_world.inverted().to_3x3() @ turned)
        head = lower_pose @ Vector((0.0, lower_bone.length, 0.0))  # the lower bone's tail
        fk_end = pose_bone.matrix_basis.copy()
        if influence is None and _only_ours(pose_bone, spec.END_ROTATION.name):
            solved = pose.turned_basis(end, fk_end, head, pose_bone.matrix.to_3x3(), lower_pose)
            results.append((end.name, solved))
        else:
            solved = pose.turned_basis(end, fk_end, head, orientation, lower_pose)
            weight = _influence(pose_bone, spec.END_ROTATION.name, influence)
            results.append((end.name, pose.blend(fk_end, solved, weight)))
    return results

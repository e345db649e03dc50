# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain's target and pole as bones of its own armature (Add's default, ``controls='BONES'``):
the animator poses the whole character in Pose Mode, and every key on the controls goes into the
armature's action with the rest of the pose (docs/design.md, "Controls in the rig").

The control bones are non-deforming, in the visible bone collection :data:`COLLECTION`, coloured
(:data:`COLOR`), and children of the rig's root bone where the rig has one (:func:`rig_root`).
Their rest is where the chain's rest pose puts them; their pose, where Add places them for the
current pose.
"""

from __future__ import annotations

from mathutils import Matrix, Vector

from ..network import naming
from ..network.edit import bone_collection, edit_bones
from . import pose

COLLECTION = "IK Controls"
# Blender's theme bone colour set the controls get (a warm red, as many rigs colour IK controls).
COLOR = "THEME01"
# How far the pole sits from the joint, as a share of the chain's length (as Add's empties).
POLE_DISTANCE = 0.5
# Bone lengths, as a share of the chain's length.
TARGET_LENGTH, POLE_LENGTH = 0.25, 0.1


def rig_root(obj, upper_name: str) -> str:
    """The rig's root bone over the chain on ``upper_name`` ('' when it has none): an ancestor of the
    upper bone named "root", else the armature's parentless bone "root" (Rigify's, whose limbs hang
    from hidden parent-switch bones), else the topmost ancestor when it does not deform and is shown
    (a bone in a hidden collection is mechanism). A deforming top bone (hips, pelvis) is not a root:
    controls under it would move with it, and a foot control must stay planted when the hips move."""
    bones = obj.data.bones
    ancestors = list(bones[upper_name].parent_recursive)
    named = next((bone for bone in ancestors if bone.name.lower() == "root"), None)
    if named is not None:
        return named.name
    root = next((bone for bone in bones if bone.parent is None and bone.name.lower() == "root"), None)
    if root is not None:
        return root.name
    top = ancestors[-1] if ancestors else None
    # A bone in no collection is shown; in collections, when one of them is.
    shown = (
        top is not None
        and not top.hide
        and (not len(top.collections) or any(c.is_visible for c in top.collections))
    )
    return top.name if shown and not top.use_deform else ""


def add(context, obj, lower_name: str, target_pose: Matrix, pole_pose: Vector) -> tuple[str, str]:
    """Make the target and pole bones of the chain on ``lower_name`` (its parent the upper bone),
    posed at armature-space ``target_pose`` (a 4x4: the end's position and the end bone's rotation)
    and ``pole_pose`` (a point); returns their names (Blender's, when taken: "IK Target shin.001").

    Their rest: the target at the lower bone's rest tail turned like the end bone at rest, the pole
    on the rest bend side along the armature's axes; both as long as a share of the chain. Raises
    MechanismError (from Edit Mode) when the armature's bones cannot be edited; nothing is made
    then.
    """
    lower = obj.data.bones[lower_name]
    upper = lower.parent
    children = lower.children
    end = children[0] if len(children) else lower
    length = (lower.head_local - upper.head_local).length + lower.length
    rest = pose.chain_rest(upper, lower)
    rest_joint = lower.head_local
    root = rig_root(obj, upper.name)
    with edit_bones(obj) as bones:
        collection = bone_collection(obj.data, COLLECTION, visible=True)
        parent = bones.get(root) if root else None
        made = []
        target_rest = Matrix.Translation(lower.tail_local) @ end.matrix_local.to_3x3().to_4x4()
        # The pole along the armature's axes: its location channels move it along them.
        pole_rest = Matrix.Translation(pole_point(rest_joint, rest.pole_side, length))
        for name, matrix, share in (
            (naming.TARGET_NAME, target_rest, TARGET_LENGTH),
            (naming.POLE_NAME, pole_rest, POLE_LENGTH),
        ):
            bone = bones.new(naming.control_name(name, lower_name))
            bone.tail = (0.0, 1.0, 0.0)  # a bone needs a length before its matrix can be set
            bone.matrix = matrix
            bone.length = max(share * length, 1e-3)
            bone.parent = parent
            bone.use_deform = False
            bone.color.palette = COLOR
            collection.assign(bone)
            made.append(bone.name)
    target, pole = made
    context.view_layer.update()
    bones = obj.pose.bones
    for name in made:
        bones[name].rotation_mode = "QUATERNION"
        bones[name].matrix_basis = Matrix.Identity(4)
    context.view_layer.update()  # the parent's pose, before the controls' pose matrices are set
    bones[target].matrix = target_pose
    context.view_layer.update()
    bones[pole].matrix = Matrix.Translation(pole_pose) @ bones[pole].matrix.to_3x3().to_4x4()
    context.view_layer.update()
    return target, pole


def made_by_add(obj) -> set[str]:
    """The bones of ``obj`` that Add made as controls: in :data:`COLLECTION` and named as Add names
    them (with Blender's ``.001`` when the name was taken); a rigger's own bone put there is not."""
    collection = obj.data.collections_all.get(COLLECTION)
    return (
        {bone.name for bone in collection.bones if naming.is_control_name(bone.name)} if collection else set()
    )


def remove(obj, names) -> None:
    """Delete control bones ``names`` of ``obj`` (those that exist), with their keys; the bone
    collection too when it is left empty. Raises MechanismError when the bones cannot be edited."""
    with edit_bones(obj) as bones:
        for name in names:
            bone = bones.get(name)
            if bone is not None:
                bones.remove(bone)
    collection = obj.data.collections_all.get(COLLECTION)
    if collection is not None and not len(collection.bones):
        obj.data.collections.remove(collection)


def pole_point(joint: Vector, side: Vector, length: float) -> Vector:
    """Where a pole goes for a chain: ``POLE_DISTANCE`` of the chain's length from the joint, on
    the bend side (armature space)."""
    return joint + side * (POLE_DISTANCE * length)

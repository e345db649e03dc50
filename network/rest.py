# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain at rest, as its network bakes it in (:class:`RestShape`), and the network's bones made
from it in Edit Mode as :data:`.spec.NETWORK` lists them (:func:`edit_chain`, run by
:func:`.build.build`). The readouts take the hint bone's place from here (:func:`hint_offset`)."""

from __future__ import annotations

from typing import NamedTuple

from mathutils import Matrix, Vector

from . import spec
from .layout import INHERIT
from .naming import Parts

# A straight chain's bend normal is the upper bone's X axis below this relative cross product.
PARALLEL = 1e-6


# Rows/columns of the canonical hinge frame: bend normal -X, forward +Y, pole side +Z.
HINGE = Matrix(((-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, -1.0)))


class RestShape(NamedTuple):
    """The chain at rest, armature space: what the network bakes in.

    head:                     the root (upper bone's head).
    upper_length, lower_length: |lower head - head| and the lower bone's length.
    side:                     unit direction from the root-end line towards the joint.
    upper_rest:               4x4 rest matrix of the solved upper bone, in the aim frame at rest
                              (identity orientation at the root): its segment along +Y, the bend
                              normal along -X.
    lower_rest:               the solved lower bone's, at the chain's rest offset from the solved
                              upper bone (as the lower bone is from the upper one), so that its
                              local transform is the lower bone's own and blends in local space.
    """

    head: Vector
    upper_length: float
    lower_length: float
    side: Vector
    upper_rest: Matrix
    lower_rest: Matrix


def rest_shape(upper, lower) -> RestShape:
    """The :class:`RestShape` of edit bones ``upper``/``lower``."""
    head = upper.head.copy()
    upper_segment, lower_segment = lower.head - head, lower.tail - lower.head
    a, b = upper_segment.length, lower_segment.length
    upper_matrix = upper.matrix.to_3x3().normalized()
    lower_matrix = lower.matrix.to_3x3().normalized()
    upper_direction = upper_segment.normalized() if a > 0.0 else upper_matrix.col[1]
    lower_direction = lower_segment.normalized() if b > 0.0 else lower_matrix.col[1]
    normal = upper_direction.cross(lower_direction)
    if normal.length <= PARALLEL:
        normal = upper_matrix.col[0]  # straight chain: Blender's usual hinge axis
    normal = (normal - normal.dot(upper_direction) * upper_direction).normalized()
    reach = lower.tail - head
    forward = reach.normalized() if reach.length > PARALLEL * (a + b) else upper_direction

    # Armature axes -> the aim frame at rest: the upper segment onto +Y, the bend normal onto -X.
    to_aim = HINGE @ Matrix((normal, upper_direction, normal.cross(upper_direction)))
    upper_rest = Matrix.Translation(head) @ (to_aim @ upper_matrix).to_4x4()
    return RestShape(
        head,
        a,
        b,
        forward.cross(normal).normalized(),
        upper_rest,
        upper_rest @ upper.matrix.inverted() @ lower.matrix,
    )


class _RestBone(NamedTuple):
    head: Vector
    tail: Vector
    matrix: Matrix


def hint_offset(upper, lower) -> Vector:
    """Where the hint bone's head is (the rest bend side, a chain length out) in the chain root's
    rest frame, the upper bone's; ``upper``/``lower`` are the chain's data bones (``Bone``). The
    readouts use it in place of the hint bone, so an edit of that bone shows."""
    upper_rest = _RestBone(upper.head_local, upper.tail_local, upper.matrix_local)
    shape = rest_shape(upper_rest, _RestBone(lower.head_local, lower.tail_local, lower.matrix_local))
    hint = shape.head + shape.side * (shape.upper_length + shape.lower_length)
    return upper.matrix_local.inverted() @ hint


def _new_bone(bones, collection, name: str, matrix: Matrix, length: float, parent=None):
    """Replace (or make) edit bone ``name`` with rest ``matrix`` and ``length``, non-deforming.
    ``bones``: :class:`EditBones`."""
    bone = bones.replace(name)
    bone.tail = (0.0, 1.0, 0.0)  # a bone needs a length before its matrix can be set
    bone.matrix = matrix
    bone.length = length
    bone.parent = parent
    bone.use_deform = False
    bone.hide_select = True  # Select > Constraint Target from a chain bone skips it
    collection.assign(bone)
    return bone


class EditBones:
    """An armature's edit bones by name: ``edit_bones.get`` walks the whole list (Blender keeps
    no index of edit bones), so a build looks them up here."""

    def __init__(self, edit_bones):
        self._bones = edit_bones
        self._by_name = {bone.name: bone for bone in edit_bones}

    def __getitem__(self, name: str):
        return self._by_name[name]

    def replace(self, name: str):
        """A new edit bone ``name``, in place of the one of that name if there is one."""
        old = self._by_name.pop(name, None)
        if old is not None:
            self._bones.remove(old)
        bone = self._bones.new(name)
        self._by_name[bone.name] = bone
        return bone


def edit_chain(bones: EditBones, collection, chain, names: Parts) -> RestShape:
    """Make one chain's network bones (Edit Mode) as :data:`.spec.NETWORK` lists them; returns the
    chain's rest shape."""
    upper, lower = bones[chain.upper_bone], bones[chain.lower_bone]
    shape = rest_shape(upper, lower)
    reach = shape.upper_length + shape.lower_length
    rests = {
        "upper": upper.matrix,
        "root": Matrix.Translation(shape.head),
        "hint": Matrix.Translation(shape.head + shape.side * reach),
        "solved upper": shape.upper_rest,
        "solved lower": shape.lower_rest,
    }
    lengths = {"upper": upper.length, "lower": lower.length, "probe": 0.25 * reach}
    for spec_bone in spec.NETWORK:
        parent = bones[getattr(names, spec_bone.parent)] if spec_bone.parent else upper.parent
        name = getattr(names, spec_bone.field)
        bone = _new_bone(bones, collection, name, rests[spec_bone.rest], lengths[spec_bone.length], parent)
        if spec_bone.inherit == "upper":
            for flag in INHERIT:
                setattr(bone, flag, getattr(upper, flag))
        elif spec_bone.inherit == "hinge":
            # Its head is the root and its scale the parents', its orientation armature-aligned.
            bone.use_connect = upper.use_connect
            bone.use_inherit_rotation = False
            bone.inherit_scale = upper.inherit_scale
    return shape

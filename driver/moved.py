# SPDX-License-Identifier: GPL-3.0-or-later
"""Poses moved earlier in the same update, as the chains after them must read them.

Blender evaluates what the handler writes only after the handler returns, so a chain that follows
another (dependency.py) computes its inputs from the other chain's new pose itself: a bone below it
from its channels and inherit flags (pose.to_pose), an object parented to such a bone (or to an
object that is, at any depth) from the parent's change. Matrices are armature space for bones,
world space for objects.
"""

from __future__ import annotations

from mathutils import Matrix, Vector

from . import pose


def _at_tail(matrix: Matrix, length: float) -> Matrix:
    """A bone's pose matrix moved to its tail: what an object parented to the bone follows."""
    moved = matrix.copy()
    moved.translation = matrix @ Vector((0.0, length, 0.0))
    return moved


class Moved:
    """New pose matrices of the chains solved so far in one update, and what follows from them."""

    def __init__(self, depsgraph) -> None:
        self.depsgraph = depsgraph
        self._solved: dict[tuple[int, str], Matrix] = {}  # chain bones, armature space
        self._armatures: set[int] = set()
        self._derived: dict[tuple[int, str], Matrix | None] = {}  # bones below them; None: unmoved
        self._changes: dict[int, Matrix | None] = {}  # objects: world-space change; None: unmoved
        # (armature session_uid, chain index) of chains whose new pose could only be estimated.
        self.inexact: set[tuple[int, int]] = set()

    def record(self, obj, poses, inexact: tuple[int, int] | None = None) -> None:
        """Record (bone name, new pose matrix) pairs of a chain of ``obj`` just solved; ``inexact``:
        the chain's key when the poses are only an estimate."""
        if inexact is not None:
            self.inexact.add(inexact)
        self._armatures.add(obj.session_uid)
        for name, matrix in poses:
            self._solved[(obj.session_uid, name)] = matrix
        self._derived.clear()
        self._changes.clear()

    def _new_pose(self, obj, pose_bone) -> Matrix | None:
        """The new pose matrix of ``pose_bone`` (of ``obj``'s evaluated pose), or None when nothing
        recorded moves it."""
        uid = obj.session_uid
        path = []  # the bone and its parents up to a known one, nearest first
        known: Matrix | None = None
        while pose_bone is not None:
            key = (uid, pose_bone.name)
            if key in self._solved:
                known = self._solved[key]
                break
            if key in self._derived:
                known = self._derived[key]
                break
            path.append(pose_bone)
            pose_bone = pose_bone.parent
        for bone in reversed(path):  # down from the known parent, by each bone's channels
            if known is not None:
                known = pose.to_pose(bone.bone, bone.matrix_basis, known)
            self._derived[(uid, bone.name)] = known
        return known

    def bone_matrix(self, obj, name: str) -> Matrix | None:
        """Armature-space pose matrix of ``obj``'s bone ``name`` after this update's solves; None when
        the bone does not exist."""
        pose_bone = obj.evaluated_get(self.depsgraph).pose.bones.get(name)
        if pose_bone is None:
            return None
        if obj.session_uid in self._armatures:
            moved = self._new_pose(obj, pose_bone)
            if moved is not None:
                return moved
        return pose_bone.matrix

    def _change(self, obj) -> Matrix | None:
        """World-space change of ``obj`` from this update's solves (new @ old⁻¹), or None."""
        key = obj.session_uid
        if key in self._changes:
            return self._changes[key]
        parent = obj.parent
        change = self._change(parent) if parent is not None else None
        if parent is not None and obj.parent_type == "BONE" and parent.session_uid in self._armatures:
            parent_eval = parent.evaluated_get(self.depsgraph)
            pose_bone = parent_eval.pose.bones.get(obj.parent_bone)
            new = self._new_pose(parent, pose_bone) if pose_bone is not None else None
            if new is not None:
                length = pose_bone.bone.length
                world = parent_eval.matrix_world
                step = (
                    world
                    @ _at_tail(new, length)
                    @ _at_tail(pose_bone.matrix, length).inverted()
                    @ world.inverted()
                )
                change = step if change is None else change @ step
        self._changes[key] = change
        return change

    def world(self, obj) -> Matrix:
        """World matrix of ``obj`` after this update's solves."""
        evaluated = obj.evaluated_get(self.depsgraph).matrix_world
        if not self._armatures:
            return evaluated
        change = self._change(obj)
        return evaluated if change is None else change @ evaluated


def disabled(source, depsgraph) -> bool:
    """Whether ``source``, an object of the depsgraph's view layer, is disabled in the viewport (by
    itself or its collection; one hidden with H is still evaluated). Blender then stops evaluating
    its transform, so a chain following it would follow its old place."""
    if depsgraph.mode == "RENDER":
        return False
    if source.hide_viewport:
        return True
    view_layer = depsgraph.view_layer  # invisible but not hidden with H: its collection is disabled
    return not source.visible_get(view_layer=view_layer) and not source.hide_get(view_layer=view_layer)

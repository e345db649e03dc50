# SPDX-License-Identifier: GPL-3.0-or-later
"""Constraints and drivers set up on a scratch object and copied onto the armature in one call each.

Blender answers every write to a constraint's setting or a driver variable with an update that walks
the armature's bones or every driver it has (docs/design.md, "Bulk operations"): a network made
write by write costs time in proportion to the chains already built. A scratch object outside the
scene has one constraint of each kind and one driver at a time, so writes to them walk nothing, and
each lands on the armature with one ``constraints.copy`` or ``drivers.from_existing``.
"""

from __future__ import annotations

from typing import Any

import bpy

SCRATCH = "Two-Bone IK scratch"
# An object's constraints have no Pose space: it is set on the copy (raw, with no update to walk).
_POSE_SPACE = bpy.types.Constraint.bl_rna.properties["owner_space"].enum_items["POSE"].value


class Templates:
    """Use as ``with Templates() as made:``; the scratch object is made on first use (removing an
    object walks the file's data) and gone after the block."""

    def __enter__(self) -> Templates:
        self._holder: Any = None
        self._constraints: dict[tuple[str, str], Any] = {}
        self._spaces: dict[int, str] = {}  # a scratch constraint's as_pointer() -> its space
        self._pending: tuple[Any, Any] | None = None  # (scratch F-Curve, armature) not copied yet
        return self

    def __exit__(self, *exc) -> None:
        try:
            if exc[0] is None:
                self._flush()
        finally:
            if self._holder is not None:
                bpy.data.objects.remove(self._holder)

    def _scratch(self):
        if self._holder is None:
            self._holder = bpy.data.objects.new(SCRATCH, None)
            self._holder.animation_data_create()
        return self._holder

    def constraint(
        self,
        pose_bone,
        kind: str,
        name: str,
        target,
        subtarget: str = "",
        space: str = "WORLD",
        space_bone: str = "",
    ):
        """Add constraint ``kind`` named ``name`` at the end of ``pose_bone``'s stack, targeting
        ``target``/``subtarget``, owner and target space ``space`` (with "CUSTOM", the space of
        ``target``'s bone ``space_bone``), collapsed in the panel."""
        return self.copy(pose_bone, self.template(kind, name, target, subtarget, space, space_bone))

    def template(
        self, kind: str, name: str, target, subtarget: str = "", space: str = "WORLD", space_bone: str = ""
    ):
        """The scratch constraint of ``kind``/``name`` set as :meth:`constraint` says (Head/Tail
        0), for the caller to set more on before :meth:`copy`."""
        template = self._constraints.get((kind, name))
        if template is None:
            template = self._scratch().constraints.new(kind)
            template.name = name
            template.show_expanded = False
            self._constraints[kind, name] = template
        template.target, template.subtarget = target, subtarget
        if hasattr(template, "head_tail"):
            template.head_tail = 0.0
        if space == "CUSTOM":
            template.space_object, template.space_subtarget = target, space_bone
        template.owner_space = "WORLD" if space == "POSE" else space
        template.target_space = space
        self._spaces[template.as_pointer()] = space
        return template

    def copy(self, pose_bone, template):
        """Copy scratch constraint ``template`` (from :meth:`template`) to the end of
        ``pose_bone``'s stack; returns the copy."""
        copy = pose_bone.constraints.copy(template)
        if self._spaces[template.as_pointer()] == "POSE":
            stack = pose_bone.constraints
            spaces = [0] * len(stack)
            stack.foreach_get("owner_space", spaces)
            spaces[-1] = _POSE_SPACE
            stack.foreach_set("owner_space", spaces)
        return copy

    def driver(self, obj, path: str, index: int, expression: str):
        """A scripted driver with ``expression`` for ``obj``'s property ``path`` (``index``: the
        array element, -1 for a scalar property). Add its variables to the returned driver; it is
        copied onto ``obj`` at the next :meth:`driver` call or at the end of the block. ``obj``
        must have no driver on that property."""
        self._flush()
        fcurve = self._scratch().animation_data.drivers.new(path, index=max(index, 0))
        fcurve.keyframe_points.clear()  # as driver_add: the driver's value, not a mapping of it
        driver = fcurve.driver
        driver.type = "SCRIPTED"
        driver.expression = expression
        self._pending = fcurve, obj
        return driver

    def _flush(self) -> None:
        if self._pending is None:
            return
        fcurve, obj = self._pending
        self._pending = None
        animation = obj.animation_data or obj.animation_data_create()
        animation.drivers.from_existing(src_driver=fcurve)
        self._holder.animation_data.drivers.remove(fcurve)

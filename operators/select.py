# SPDX-License-Identifier: GPL-3.0-or-later
"""Select the chain's target or pole: the object, or the bone when it is a bone of an armature."""

from typing import Literal

import bpy
from bpy.props import BoolProperty

from ..animation.snap import controlled
from ..chain.chains import find_chain, owning_armature
from ..compat import select_bone
from .common import ChainOperator


def _set_mode(obj, mode: Literal["OBJECT", "POSE"]) -> None:
    if obj.mode != mode:
        with bpy.context.temp_override(active_object=obj, object=obj):
            bpy.ops.object.mode_set(mode=mode)


class _SelectChainSource(ChainOperator):
    """Select the chain's ``role`` ("target" or "pole") and make it active.

    An object is selected in Object Mode (an empty cannot be moved while the armature is in Pose
    Mode); a bone is selected in Pose Mode on its armature.
    """

    bl_options = {"REGISTER", "UNDO"}
    edits_rig = False
    role = ""

    extend: BoolProperty(
        name="Extend", description="Add to the selection instead of replacing it", default=False
    )

    @classmethod
    def poll(cls, context) -> bool:
        if not super().poll(context):
            return False
        if getattr(find_chain(owning_armature(context)), cls.role) is None:
            cls.poll_message_set(f"The active chain has no {cls.role}")
            return False
        return True

    def execute_chain(self, context, obj, chain):
        source = getattr(chain, self.role)
        if source is None:
            self.report({"ERROR"}, f"Chain '{chain.name}' has no {self.role}")
            return {"CANCELLED"}
        view_layer = context.view_layer
        if view_layer.objects.get(source.name) != source or not source.visible_get(view_layer=view_layer):
            self.report({"ERROR"}, f"'{source.name}' is hidden or not in this view layer: show it first")
            return {"CANCELLED"}
        moved = controlled(chain, self.role)  # a misspelt bone raises: never the whole rig in its place
        if moved != source and source.library is not None and source.override_library is None:
            self.report(
                {"ERROR"},
                f"'{source.name}' is linked from a library: make a library override to pose its bones",
            )
            return {"CANCELLED"}
        if source != obj:
            try:  # Blender refuses a mode switch of a hidden armature; nothing is changed yet
                _set_mode(obj, "OBJECT")
            except RuntimeError:
                self.report(
                    {"ERROR"},
                    f"'{obj.name}' cannot leave {obj.mode.title()} Mode (is it hidden?): show it first",
                )
                return {"CANCELLED"}
        if not self.extend:
            for selected in context.selected_objects:
                if selected != source:
                    selected.select_set(False)
        source.select_set(True)
        view_layer.objects.active = source
        if moved != source:  # a bone: select it in Pose Mode (PoseBone.select or Bone.select)
            _set_mode(source, "POSE")
            if not self.extend:
                for pose_bone in source.pose.bones:
                    select_bone(source, pose_bone.name, False)
            select_bone(source, moved.name, True)
            source.data.bones.active = source.data.bones[moved.name]
        self.report({"INFO"}, f"Selected the {self.role} '{moved.name}'")
        return {"FINISHED"}


# mypy infers the mixin's bl_options as set[str], not the flag literals Operator declares.
class POSE_OT_two_bone_ik_select_target(_SelectChainSource, bpy.types.Operator):  # type: ignore[misc]
    """Select the chain's target (object or bone) and make it active"""

    bl_idname = "pose.two_bone_ik_select_target"
    bl_label = "Select Two-Bone IK Target"
    role = "target"


class POSE_OT_two_bone_ik_select_pole(_SelectChainSource, bpy.types.Operator):  # type: ignore[misc]
    """Select the chain's pole (object or bone) and make it active"""

    bl_idname = "pose.two_bone_ik_select_pole"
    bl_label = "Select Two-Bone IK Pole"
    role = "pole"

# SPDX-License-Identifier: GPL-3.0-or-later
"""Add Two-Bone IK Chain."""

import bpy

from ..driver.chains import add_chain


class POSE_OT_two_bone_ik_add(bpy.types.Operator):
    """Add a two-bone IK chain on the active bone and its parent, with new target and pole empties"""

    bl_idname = "pose.two_bone_ik_add"
    bl_label = "Add Two-Bone IK Chain"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context) -> bool:
        obj = context.object
        if obj is None or obj.type != "ARMATURE" or context.mode != "POSE":
            cls.poll_message_set("Select an armature in Pose Mode")
            return False
        if obj.library is not None:
            cls.poll_message_set("The armature is linked from a library: make a library override first")
            return False
        bone = context.active_pose_bone
        if bone is None or bone.parent is None:
            cls.poll_message_set("Make the lower bone of the chain (shin, forearm) active; its parent is the upper bone")
            return False
        return True

    def execute(self, context):
        obj = context.object
        lower = context.active_pose_bone.name
        try:
            chain = add_chain(context, obj, lower)
        except ValueError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        self.report({"INFO"}, f"Added chain '{chain.name}' ({chain.upper_bone} -> {chain.lower_bone})")
        return {"FINISHED"}

# SPDX-License-Identifier: GPL-3.0-or-later
"""Update Mechanism: build what the chains' constraint mechanism lacks (chains made by script, or
whose bones or End Rotation changed)."""

import bpy

from ..driver.chains import owning_armature
from ..driver.mechanism import MechanismError, build


class POSE_OT_two_bone_ik_update_mechanism(bpy.types.Operator):
    """Build the mechanism bones, constraints and drivers that the armature's two-bone IK chains \
lack; run it after adding chains by script"""

    bl_idname = "pose.two_bone_ik_update_mechanism"
    bl_label = "Update Mechanism"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context) -> bool:
        obj = owning_armature(context)
        if obj is None or not len(obj.two_bone_ik.chains):
            cls.poll_message_set("Select an armature with two-bone IK chains")
            return False
        if obj.library is not None:
            cls.poll_message_set(f"'{obj.name}' is linked from a library: make a library override first")
            return False
        if context.mode == "EDIT_ARMATURE":
            cls.poll_message_set("Leave Edit Mode first")
            return False
        return True

    def execute(self, context):
        obj = owning_armature(context)
        try:
            build(obj, obj.two_bone_ik.chains)
        except MechanismError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        obj.update_tag()
        self.report({"INFO"}, f"Updated the mechanism of {len(obj.two_bone_ik.chains)} chain(s)")
        return {"FINISHED"}

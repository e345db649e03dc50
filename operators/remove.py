# SPDX-License-Identifier: GPL-3.0-or-later
"""Remove Two-Bone IK Chain."""

import bpy
from bpy.props import BoolProperty

from ..chain.chains import library_chain, remove_chain
from ..network.edit import MechanismError
from .common import ChainOperator


class POSE_OT_two_bone_ik_remove(ChainOperator, bpy.types.Operator):
    """Remove the two-bone IK chain and its constraints: the bones show their own (FK) pose again"""

    bl_idname = "pose.two_bone_ik_remove"
    bl_label = "Remove Two-Bone IK Chain"
    bl_options = {"REGISTER", "UNDO"}

    delete_empties: BoolProperty(
        name="Delete Target and Pole",
        description="Also delete the chain's target and pole empties when no other chain uses them",
        default=False,
    )

    def execute(self, context):
        obj, chain = self.armature_and_chain(context)
        if chain is None:
            return {"CANCELLED"}
        name = chain.name
        index = list(obj.two_bone_ik.chains).index(chain)
        reason = library_chain(obj, chain)
        if reason:
            self.report({"ERROR"}, reason)
            return {"CANCELLED"}
        try:
            kept = remove_chain(obj, index, delete_empties=self.delete_empties)
        except MechanismError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        if kept:
            self.report({"WARNING"}, f"Kept {', '.join(kept)}: used by another chain or not an empty")
        self.report({"INFO"}, f"Removed chain '{name}'")
        return {"FINISHED"}

# SPDX-License-Identifier: GPL-3.0-or-later
"""Remove Two-Bone IK Chain."""

import bpy
from bpy.props import BoolProperty

from ..driver.chains import chain_bone_slots, remove_chain
from ..driver.evaluate import ChainError
from .common import ChainOperator


class POSE_OT_two_bone_ik_remove(ChainOperator, bpy.types.Operator):
    """Remove the two-bone IK chain; the bones keep their last solved pose unless the FK pose is restored"""

    bl_idname = "pose.two_bone_ik_remove"
    bl_label = "Remove Two-Bone IK Chain"
    bl_options = {"REGISTER", "UNDO"}

    delete_empties: BoolProperty(
        name="Delete Target and Pole",
        description="Also delete the chain's target and pole empties when no other chain uses them",
        default=False,
    )
    restore_fk: BoolProperty(
        name="Restore FK Pose",
        description="Put the bones back in the FK pose the chain blended from, "
        "instead of keeping the solved pose",
        default=False,
    )

    def execute(self, context):
        obj, chain = self.armature_and_chain(context)
        if chain is None:
            return {"CANCELLED"}
        name = chain.name
        index = list(obj.two_bone_ik.chains).index(chain)
        if self.restore_fk:
            try:
                chain_bone_slots(obj, chain)
            except ChainError as error:  # a broken chain is still removed: there is just no pose to restore
                self.report({"WARNING"}, f"Chain '{name}': {error}: no FK pose to restore")
        kept = remove_chain(obj, index, delete_empties=self.delete_empties, restore_fk=self.restore_fk)
        if kept:
            self.report({"WARNING"}, f"Kept {', '.join(kept)}: used by another chain or not an empty")
        self.report({"INFO"}, f"Removed chain '{name}'")
        return {"FINISHED"}

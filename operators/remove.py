# SPDX-License-Identifier: GPL-3.0-or-later
"""Remove Two-Bone IK Chain."""

import bpy
from bpy.props import BoolProperty

from ..chain.chains import remove_chains
from .common import ChainOperator


class POSE_OT_two_bone_ik_remove(ChainOperator, bpy.types.Operator):
    """Remove the two-bone IK chain and its constraints: the bones show their own (FK) pose again"""

    bl_idname = "pose.two_bone_ik_remove"
    bl_label = "Remove Two-Bone IK Chain"
    bl_options = {"REGISTER", "UNDO"}

    delete_empties: BoolProperty(
        name="Delete Target and Pole",
        description=(
            "Also delete the chain's target and pole (empties, or the control bones Add made) "
            "when no other chain uses them"
        ),
        default=False,
    )

    all_chains: BoolProperty(
        name="All Chains",
        description="Remove every chain of the armature (in one go: fast for many chains)",
        default=False,
    )

    def execute_chain(self, context, obj, chain):
        chains = list(obj.two_bone_ik.chains)
        doomed = chains if self.all_chains else [chain]
        self.check_removable(obj, doomed)
        names = [each.name for each in doomed]
        muted = [f"'{item.name}' on '{item.bone}'" for each in doomed for item in each.muted_ik]
        kept = remove_chains(obj, [chains.index(each) for each in doomed], delete_empties=self.delete_empties)
        if kept:
            self.report(
                {"WARNING"}, f"Kept {', '.join(kept)}: used by another chain, or not a control Add makes"
            )
        if muted:
            self.report({"INFO"}, f"Blender's IK {', '.join(muted)} on again (muted for the chain)")
        shown = f"'{names[0]}'" if len(names) == 1 else f"{len(names)} chains"
        self.report({"INFO"}, f"Removed chain {shown}" if len(names) == 1 else f"Removed {shown}")
        return {"FINISHED"}

# SPDX-License-Identifier: GPL-3.0-or-later
"""Apply Two-Bone IK Chain: the chain's result into the bones' channels, then the chain removed."""

import bpy

from ..animation.visual import result_bases
from ..chain.chains import remove_chain
from ..chain.status import applied
from .common import ChainOperator


class POSE_OT_two_bone_ik_apply(ChainOperator, bpy.types.Operator):
    """Write the chain's current result into the bones' rotations and remove the chain, like Apply \
on a constraint: the pose stays as it is"""

    bl_idname = "pose.two_bone_ik_apply"
    bl_label = "Apply Two-Bone IK Chain"
    bl_options = {"REGISTER", "UNDO"}

    def execute_chain(self, context, obj, chain):
        name = chain.name
        self.check_removable(obj, [chain])
        depsgraph = context.evaluated_depsgraph_get()
        if not applied(chain.state):
            # Not solved (or the armature in Rest Position): there is no result to keep, as the
            # status says; Snap FK to IK and Bake refuse it alike (docs/how-it-works.md, "What the
            # operators refuse").
            self.report({"ERROR"}, f"Chain '{name}': {chain.status}")
            return {"CANCELLED"}
        bases = result_bases(obj, chain, depsgraph)
        for bone_name, basis in bases:
            obj.pose.bones[bone_name].matrix_basis = basis
        muted = [f"'{item.name}' on '{item.bone}'" for item in chain.muted_ik]
        # The applied pose must not move: Blender's IK muted for the chain stays muted.
        remove_chain(obj, list(obj.two_bone_ik.chains).index(chain), keep_ik_muted=True)
        if muted:
            self.report(
                {"WARNING"}, f"Blender's IK {', '.join(muted)} stays muted: it would pose the bones again"
            )
        self.report({"INFO"}, f"Applied chain '{name}'")
        return {"FINISHED"}

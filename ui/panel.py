# SPDX-License-Identifier: GPL-3.0-or-later
"""The View3D sidebar tab "Two-Bone IK": the active armature's chains and their reach."""

import bpy

from .status import chain_state


class POSE_UL_two_bone_ik_chains(bpy.types.UIList):
    """The chains of an armature: enable toggle, name and reach at a glance."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_property, index=0, flt_flag=0):
        state_icon, text = chain_state(context, item)
        row = layout.row(align=True)
        row.prop(item, "enabled", text="")
        row.prop(item, "name", text="", emboss=False)
        row.label(text=text, icon=state_icon)


class VIEW3D_PT_two_bone_ik(bpy.types.Panel):
    """Two-bone IK chains of the active armature"""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Two-Bone IK"
    bl_label = "Two-Bone IK"

    @classmethod
    def poll(cls, context) -> bool:
        obj = context.object
        return obj is not None and obj.type == "ARMATURE"

    def draw(self, context) -> None:
        layout = self.layout
        obj = context.object
        settings = obj.two_bone_ik
        row = layout.row()
        row.template_list(
            "POSE_UL_two_bone_ik_chains", "", settings, "chains", settings, "active_chain_index", rows=3
        )
        column = row.column(align=True)
        column.operator("pose.two_bone_ik_add", icon="ADD", text="")
        if not 0 <= settings.active_chain_index < len(settings.chains):
            layout.label(text="Select a lower bone in Pose Mode and add a chain", icon="INFO")
            return
        chain = settings.chains[settings.active_chain_index]
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.prop(chain, "enabled")
        column = layout.column()
        column.active = chain.enabled
        column.prop_search(chain, "upper_bone", obj.data, "bones")
        column.prop_search(chain, "lower_bone", obj.data, "bones")
        column.prop(chain, "target")
        column.prop(chain, "pole")
        column.prop(chain, "influence", slider=True)
        if chain.enabled:
            state_icon, text = chain_state(context, chain)
            box = layout.box()
            box.label(text=text, icon=state_icon)
            if chain.status and text != chain.status:
                box.label(text=chain.status, icon="ERROR")


classes = (POSE_UL_two_bone_ik_chains, VIEW3D_PT_two_bone_ik)
register, unregister = bpy.utils.register_classes_factory(classes)

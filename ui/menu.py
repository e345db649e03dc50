# SPDX-License-Identifier: GPL-3.0-or-later
"""Pose ▸ Two-Bone IK: every chain operator, so each is also found by menu search (F3)."""

import bpy


class VIEW3D_MT_pose_two_bone_ik(bpy.types.Menu):
    """The two-bone IK operators"""

    bl_label = "Two-Bone IK"

    def draw(self, context) -> None:
        layout = self.layout
        layout.operator("pose.two_bone_ik_add", icon="CON_KINEMATIC")
        layout.operator("pose.two_bone_ik_add", text="Add Two-Bone IK Chain (Mirrored)").mirror = True
        layout.operator("pose.two_bone_ik_remove", icon="REMOVE")
        layout.operator("pose.two_bone_ik_apply")
        layout.operator("pose.two_bone_ik_update_mechanism")
        layout.operator("pose.two_bone_ik_rigify_limbs")
        layout.separator()
        layout.operator("pose.two_bone_ik_snap_ik_to_fk")
        layout.operator("pose.two_bone_ik_snap_fk_to_ik")
        layout.separator()
        layout.operator("pose.two_bone_ik_select_target", icon="RESTRICT_SELECT_OFF")
        layout.operator("pose.two_bone_ik_select_pole")
        layout.separator()
        layout.operator("pose.two_bone_ik_bake", icon="REC")


def _pose_menu(self, context) -> None:
    self.layout.separator()
    self.layout.menu(VIEW3D_MT_pose_two_bone_ik.__name__, icon="CON_KINEMATIC")


classes = (VIEW3D_MT_pose_two_bone_ik,)
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)  # type: ignore[misc]


def register() -> None:
    _register_classes()
    bpy.types.VIEW3D_MT_pose.append(_pose_menu)


def unregister() -> None:
    bpy.types.VIEW3D_MT_pose.remove(_pose_menu)
    _unregister_classes()

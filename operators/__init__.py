# SPDX-License-Identifier: GPL-3.0-or-later
"""User actions on chains (thin: they call driver/)."""

import bpy

from .add import POSE_OT_two_bone_ik_add

classes = (POSE_OT_two_bone_ik_add,)
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)


def _pose_menu(self, context) -> None:
    self.layout.separator()
    self.layout.operator(POSE_OT_two_bone_ik_add.bl_idname, icon="CON_KINEMATIC")


def register() -> None:
    _register_classes()
    bpy.types.VIEW3D_MT_pose.append(_pose_menu)


def unregister() -> None:
    bpy.types.VIEW3D_MT_pose.remove(_pose_menu)
    _unregister_classes()

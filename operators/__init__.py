# SPDX-License-Identifier: GPL-3.0-or-later
"""User actions on chains (thin: they call driver/). The menu that lists them lives in ui/."""

import bpy

from .add import POSE_OT_two_bone_ik_add
from .apply import POSE_OT_two_bone_ik_apply
from .bake import POSE_OT_two_bone_ik_bake
from .mechanism import POSE_OT_two_bone_ik_update_mechanism
from .remove import POSE_OT_two_bone_ik_remove
from .rigify import POSE_OT_two_bone_ik_rigify_limbs
from .select import POSE_OT_two_bone_ik_select_pole, POSE_OT_two_bone_ik_select_target
from .snap import POSE_OT_two_bone_ik_snap_fk_to_ik, POSE_OT_two_bone_ik_snap_ik_to_fk

classes = (
    POSE_OT_two_bone_ik_add,
    POSE_OT_two_bone_ik_remove,
    POSE_OT_two_bone_ik_apply,
    POSE_OT_two_bone_ik_update_mechanism,
    POSE_OT_two_bone_ik_rigify_limbs,
    POSE_OT_two_bone_ik_bake,
    POSE_OT_two_bone_ik_snap_ik_to_fk,
    POSE_OT_two_bone_ik_snap_fk_to_ik,
    POSE_OT_two_bone_ik_select_target,
    POSE_OT_two_bone_ik_select_pole,
)
register, unregister = bpy.utils.register_classes_factory(classes)  # type: ignore[misc]  # stub says None

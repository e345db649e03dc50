# SPDX-License-Identifier: GPL-3.0-or-later
"""User actions on chains (thin: they call driver/). The menu that lists them lives in ui/."""

from .. import cli
from ..driver.compat import register_classes_factory
from .add import POSE_OT_two_bone_ik_add
from .apply import POSE_OT_two_bone_ik_apply
from .bake import POSE_OT_two_bone_ik_bake
from .mechanism import POSE_OT_two_bone_ik_update_mechanism
from .remove import POSE_OT_two_bone_ik_remove
from .select import POSE_OT_two_bone_ik_select_pole, POSE_OT_two_bone_ik_select_target
from .snap import POSE_OT_two_bone_ik_snap_fk_to_ik, POSE_OT_two_bone_ik_snap_ik_to_fk

classes = (
    POSE_OT_two_bone_ik_add,
    POSE_OT_two_bone_ik_remove,
    POSE_OT_two_bone_ik_apply,
    POSE_OT_two_bone_ik_update_mechanism,
    POSE_OT_two_bone_ik_bake,
    POSE_OT_two_bone_ik_snap_ik_to_fk,
    POSE_OT_two_bone_ik_snap_fk_to_ik,
    POSE_OT_two_bone_ik_select_target,
    POSE_OT_two_bone_ik_select_pole,
)
_register_classes, _unregister_classes = register_classes_factory(classes)


def register() -> None:
    _register_classes()
    # The headless command runs the same actions; it is registered here so the root wiring stays
    # as it is (cli.register is idempotent, so listing cli in the root's modules too is harmless).
    cli.register()


def unregister() -> None:
    cli.unregister()
    _unregister_classes()

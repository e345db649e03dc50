# SPDX-License-Identifier: GPL-3.0-or-later
"""Snap IK to FK and Snap FK to IK."""

import bpy

from ..animation.snap import controlled, snap_fk_to_ik, snap_ik_to_fk
from ..chain.bones import chain_bone_slots
from ..compat import animation_fcurves, autokey
from ..network.layout import PROPERTIES, setting_path
from .common import ChainOperator


class _SnapOperator(ChainOperator):
    """Snap the chain with ``snap(context, obj, chain)``; with Auto Keying, key what it moved."""

    bl_options = {"REGISTER", "UNDO"}
    done = ""

    def execute_chain(self, context, obj, chain):
        self.snap(context, obj, chain)
        for struct, paths in self.moved(obj, chain):
            autokey(context, struct, paths)
        if context.scene.tool_settings.use_keyframe_insert_auto:
            self.key_always(obj, chain)
        caveat = self.caveat(chain)
        self.report({"WARNING"} if caveat else {"INFO"}, self.done.format(chain=chain.name) + caveat)
        return {"FINISHED"}

    @staticmethod
    def caveat(chain) -> str:
        """What the snap could not match, said with its report ('' when nothing)."""
        return ""

    @staticmethod
    def key_always(obj, chain) -> None:
        """With Auto Keying, what is keyed even where Only Insert Available would skip it."""


# mypy infers the mixin's bl_options as set[str], not the flag literals Operator declares.
class POSE_OT_two_bone_ik_snap_ik_to_fk(_SnapOperator, bpy.types.Operator):  # type: ignore[misc]
    """Move the chain's target to the tip of the FK pose and its pole into the FK bend plane, so \
switching to IK changes nothing"""

    bl_idname = "pose.two_bone_ik_snap_ik_to_fk"
    bl_label = "Snap IK to FK"
    done = "Snapped the target and pole of '{chain}' to its FK pose"
    snap = staticmethod(snap_ik_to_fk)

    @staticmethod
    def caveat(chain) -> str:
        if chain.pole is None:
            return (
                ": without a pole the knee bends as in the rest pose, so turning the chain on can "
                "move it off its FK bend (add a pole to keep it)"
            )
        if chain.end_rotation == "TARGET" and chain.target.matrix_world.determinant() < 0.0:
            return (
                ": the target is mirrored (a negative scale on it or its parents), whose rotation "
                "Blender's Copy Rotation reads its own way, so End Rotation Target turns the end "
                "bone off its FK rotation (unmirror the target, or snap with End Rotation FK)"
            )
        return ""

    @staticmethod
    def moved(obj, chain):
        turned = chain.end_rotation == "TARGET"
        for role, paths in (("target", ["location"] + ["rotation"] * turned), ("pole", ["location"])):
            moved = controlled(chain, role)
            if moved is not None:
                yield moved, paths

    @staticmethod
    def key_always(obj, chain) -> None:
        # The rolls (the lower bone's properties) are keyed on every snap (Only Insert Available
        # would skip a first key): a frame snapped later must not change an earlier one's pose.
        lower = obj.pose.bones[chain.lower_bone]
        for name in ("upper_roll", "lower_roll"):
            lower.keyframe_insert(f'["{PROPERTIES[name]}"]', group=lower.name)


class POSE_OT_two_bone_ik_snap_fk_to_ik(_SnapOperator, bpy.types.Operator):  # type: ignore[misc]
    """Copy the chain's solved pose into the bones' FK rotations, so switching to FK changes nothing"""

    bl_idname = "pose.two_bone_ik_snap_fk_to_ik"
    bl_label = "Snap FK to IK"
    done = "Copied the solved pose of '{chain}' to its FK rotations"
    snap = staticmethod(snap_fk_to_ik)

    @staticmethod
    def key_always(obj, chain) -> None:
        # The rolls keep the solve where it was when the lower bone's own turn changes
        # (snap_fk_to_ik): keyed where they are set or keyed already, so other frames keep theirs.
        lower = obj.pose.bones[chain.lower_bone]
        names = ("upper_roll", "lower_roll")
        paths = {setting_path(chain.lower_bone, name) for name in names}
        keyed = any(fcurve.data_path in paths for fcurves in animation_fcurves(obj)[1:] for fcurve in fcurves)
        if keyed or any(abs(lower.get(PROPERTIES[name], 0.0)) > 1e-6 for name in names):
            POSE_OT_two_bone_ik_snap_ik_to_fk.key_always(obj, chain)

    @staticmethod
    def moved(obj, chain):
        for _, name in chain_bone_slots(obj, chain):
            yield obj.pose.bones[name], ["rotation"]

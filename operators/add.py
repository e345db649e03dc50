# SPDX-License-Identifier: GPL-3.0-or-later
"""Add Two-Bone IK Chain: one chain per selected lower bone, optionally on the mirrored bones too."""

import bpy
from bpy.props import BoolProperty, EnumProperty

from ..chain import muting
from ..chain.bones import blender_ik, blender_ik_constraints
from ..chain.chains import (
    add_chain,
    chain_on_bone,
    chains_sharing_bones,
    constrained_bones,
    lower_bone_names,
    mirrored_names,
)
from ..chain.properties import STACK_POSITION, STACK_POSITIONS


def _lower_bones(context) -> list[tuple[object, list[str]]]:
    """(armature, its lower bones) for each armature in Pose Mode whose bones the selection asks
    for, the active one first (empty outside Pose Mode, where there is no selection). With several
    armatures in Pose Mode, selected bones are matched to their own armature, never by name."""
    selected = context.selected_pose_bones or ()  # None headless in Object Mode
    active = context.active_pose_bone
    armatures = dict.fromkeys([context.object, *(bone.id_data for bone in selected)])
    found = []
    for obj in armatures:
        names = [bone.name for bone in selected if bone.id_data == obj]
        lower = lower_bone_names(obj, names, active.name if active and active.id_data == obj else None)
        if lower:
            found.append((obj, lower))
    return found


class POSE_OT_two_bone_ik_add(bpy.types.Operator):
    """Add a two-bone IK chain on each selected lower bone (shin, forearm) and its parent, with new \
target and pole controls placed so the pose does not move"""

    bl_idname = "pose.two_bone_ik_add"
    bl_label = "Add Two-Bone IK Chain"
    bl_options = {"REGISTER", "UNDO"}

    mirror: BoolProperty(
        name="Mirror",
        description="Also add a chain on the mirrored bones (.L/.R, _l/_r, -L/-R, Left/Right)",
        default=False,
    )
    controls: EnumProperty(
        name="Controls",
        description="What the new target and pole are",
        items=(
            (
                "BONES",
                "Bones",
                "Control bones of the armature (bone collection 'IK Controls'): posed in Pose Mode and "
                "keyed in the armature's action with the rest of the character",
            ),
            ("EMPTIES", "Empties", "Empty objects, each with an action of its own"),
        ),
        default="BONES",
    )
    parent_controls: BoolProperty(
        name="Parent to Rig",
        description=(
            "Parent new target and pole empties to the armature object, so they move with the character"
        ),
        default=True,
    )
    stack_position: EnumProperty(
        name="Constraint Position", description=STACK_POSITION, items=STACK_POSITIONS, default="LAST"
    )
    mute_blender_ik: BoolProperty(
        name="Mute Blender's IK",
        description=(
            "Mute Blender's IK and Spline IK constraints that pose the chain's bones (they act after "
            "every constraint stack, so the chain cannot); Remove turns them on again"
        ),
        default=False,
    )

    def draw(self, context) -> None:
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "mirror")
        layout.prop(self, "controls")
        if self.controls == "EMPTIES":
            layout.prop(self, "parent_controls")
        # Its name on a line of its own: beside the field, the redo panel cuts it off.
        layout.label(text="Constraint Position")
        layout.prop(self, "stack_position", text="")
        # Only where it does something (or did: once muted, the constraints are no longer found).
        if self.mute_blender_ik or any(
            blender_ik_constraints(obj, obj.data.bones[name].parent.name, name)
            for obj, names in _lower_bones(context)
            for name in names
        ):
            layout.prop(self, "mute_blender_ik")

    @classmethod
    def poll(cls, context) -> bool:
        obj = context.object
        if obj is None or obj.type != "ARMATURE":
            cls.poll_message_set("Select an armature in Pose Mode")
            return False
        if obj.library is not None:
            cls.poll_message_set(f"'{obj.name}' is linked from a library: make a library override first")
            return False
        if context.mode != "POSE":
            cls.poll_message_set("Select an armature in Pose Mode")
            return False
        if not _lower_bones(context):
            cls.poll_message_set(
                "Select the lower bone of the chain (shin, forearm); its parent is the upper bone "
                "(the chains' network and control bones are never chain bones)"
            )
            return False
        return True

    def _add(self, context, obj, names, added, skipped, overlapping, constrained, made) -> None:
        """Add the chains of one armature's lower bones ``names``, collecting what to report."""
        if self.mirror:
            names = names + mirrored_names(obj, names)
        for name in names:
            if chain_on_bone(obj, name) is not None:
                skipped.append(name)
                continue
            # Two chains writing one bone fight over it: whichever solves last wins, the other misses.
            shared = chains_sharing_bones(obj, obj.data.bones[name].parent.name, name)
            if shared:
                other, bone = shared[0]
                overlapping.append(f"{name} ('{bone}' is a bone of chain '{other}')")
                continue
            try:
                chain = add_chain(
                    context, obj, name, self.parent_controls, self.stack_position, self.controls
                )
            except ValueError as error:
                self.report({"ERROR"}, str(error))
                continue
            added.append(f"'{chain.name}' ({chain.upper_bone} -> {chain.lower_bone})")
            made.append((obj, chain.name))
            iks = blender_ik(obj, chain)
            if iks and self.mute_blender_ik:
                muted, refused = muting.mute(obj, chain)
                if muted:
                    self.report(
                        {"INFO"},
                        f"Chain '{chain.name}': muted Blender's IK {', '.join(muted)} "
                        "(Remove turns it on again)",
                    )
                if refused:
                    self.report(
                        {"WARNING"},
                        f"Chain '{chain.name}': Blender's IK {', '.join(refused)} not muted: its Enabled "
                        "is keyed, and it poses the chain's bones after every constraint stack",
                    )
                constrained += constrained_bones(obj, chain)
            elif iks:
                self.report(
                    {"WARNING"},
                    f"Chain '{chain.name}': Blender's IK {', '.join(iks)} poses its bones after every "
                    "constraint stack, so the chain cannot: mute it (Add's Mute Blender's IK, or its "
                    "Enabled) to use the chain",
                )
            else:
                constrained += constrained_bones(obj, chain)

    def execute(self, context):
        added, skipped, overlapping, constrained, made = [], [], [], [], []
        for obj, names in _lower_bones(context):
            self._add(context, obj, names, added, skipped, overlapping, constrained, made)
        if skipped:
            self.report({"WARNING"}, f"Already a chain on {', '.join(skipped)}: not added again")
        if overlapping:
            self.report(
                {"WARNING"},
                f"No chain added on {', '.join(overlapping)}: two chains must not share a bone",
            )
        which = (
            f"Bones {', '.join(constrained)} carry"
            if len(constrained) > 1
            else f"Bone {''.join(constrained)} carries"
        )
        if constrained and self.stack_position == "LAST":
            self.report(
                {"INFO"},
                f"{which} other constraints: the chain's go after them, so they have no effect while "
                "the chain is on (Constraint Position: First keeps them)",
            )
        elif constrained:
            self.report(
                {"WARNING"},
                f"{which} other constraints, which act after the chain's: its end may miss the target "
                "(Constraint Position: Last puts it there)",
            )
        if not added:
            return {"CANCELLED"}
        for obj, name in made:  # what the new chain cannot give (an uneven parent scale...): said now
            chain = obj.two_bone_ik.chains[name]
            if chain.state in ("ERROR", "OFF_TARGET"):
                self.report({"WARNING"}, f"Chain '{name}': {chain.status}")
        self.report({"INFO"}, f"Added chain {', '.join(added)}")
        return {"FINISHED"}

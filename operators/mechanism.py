# SPDX-License-Identifier: GPL-3.0-or-later
"""Update Mechanism: rebuild every chain's network whole (chains made by script, or whose bones
changed, or whose network was edited)."""

import bpy

from ..chain.adopt import adopt, adopt_copies, orphans
from ..chain.bones import ChainError, blender_ik, chain_bones, missing_control
from ..chain.chains import follow_renames, owning_armature
from ..chain.muting import park_all
from ..network.build import build
from ..network.edit import can_add_bones
from ..network.health import foreign_all, problem
from .common import rig_editable


class POSE_OT_two_bone_ik_update_mechanism(bpy.types.Operator):
    """Rebuild the network bones, constraints and drivers of the armature's two-bone IK chains; \
run it after adding chains by script or changing their bones"""

    bl_idname = "pose.two_bone_ik_update_mechanism"
    bl_label = "Update Mechanism"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context) -> bool:
        obj = owning_armature(context)
        if obj is None or not (len(obj.two_bone_ik.chains) or orphans(obj)):
            cls.poll_message_set("Select an armature with two-bone IK chains")
            return False
        return rig_editable(cls, context, obj)

    def _adopt_copies(self, context, obj) -> list[str] | None:
        """Make chains of the bones Symmetrize gave a chain's constraints (chain/adopt.py); returns
        their names, or None (reported) when the armature cannot take their bones."""
        try:
            copied, left = adopt_copies(context, obj)
        except ValueError as error:  # MechanismError
            self.report({"ERROR"}, str(error))
            return None
        if copied:
            self.report(
                {"INFO"}, f"Made chains of the bones that copied a chain's constraints: {', '.join(copied)}"
            )
        if left:
            self.report(
                {"WARNING"},
                f"Not a chain's two bones, left as they are: {'; '.join(left)} (delete their Two-Bone IK "
                "constraints, or add a chain on them)",
            )
        return copied

    def execute(self, context):
        obj = owning_armature(context)
        try:
            adopted = adopt(obj)  # networks a Join brought in, chains again (built)
        except ValueError as error:  # MechanismError
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        if adopted:
            self.report({"INFO"}, f"Made the joined network(s) chains again: {', '.join(adopted)}")
        chains, skipped, followed = [], [], []
        for chain in obj.two_bone_ik.chains:
            if chain.name in adopted:
                continue
            followed += follow_renames(obj, chain)
            try:
                chain_bones(obj, chain)
                missing_control(chain)  # a rebuild would aim at nothing
            except ChainError as problem:
                skipped.append(f"'{chain.name}': {problem}")
                continue
            chains.append(chain)
        reason = can_add_bones(obj)
        if reason:
            return self._library_bones(obj, chains, skipped, followed, reason)
        # After the renames are followed: a renamed chain bone copies its own chain's network.
        paths = [chain.path_from_id() for chain in chains]  # names may repeat (chains made by script)
        copied = self._adopt_copies(context, obj)
        if copied is None:
            return {"CANCELLED"}
        chains = [obj.path_resolve(path) for path in paths]  # a build frees the references
        adopted = adopted + copied
        if not chains and not adopted:
            self.report({"ERROR"}, "No chain can be built: " + "; ".join(skipped))
            return {"CANCELLED"}
        added = [part for lines in foreign_all(obj, chains) for part in lines]
        moved: list[str] = []
        chain_names = [chain.name for chain in chains]  # Edit Mode frees the references
        try:
            build(obj, chains, moved)
        except ValueError as error:  # MechanismError, or bones the network cannot be named for
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        parked = [item for name in chain_names for item in park_all(obj, obj.two_bone_ik.chains[name])]
        obj.update_tag()
        for name in chain_names:  # what a rebuild cannot change, said so
            iks = blender_ik(obj, obj.two_bone_ik.chains[name])
            if iks:
                self.report(
                    {"WARNING"},
                    f"Chain '{name}': Blender's IK {', '.join(iks)} still poses its bones (a rebuild "
                    "cannot change that): mute it to use the chain",
                )
        self._report_build(skipped, added, followed, moved, parked, len(chains), len(adopted))
        return {"FINISHED"}

    def _report_build(self, skipped, added, followed, moved, parked, built: int, made: int) -> None:
        """What a rebuild did, beside what it could not do; ``made`` chains were made (and built)
        before it, and said so."""
        if skipped:
            self.report({"WARNING"}, "Skipped " + "; ".join(skipped))
        if added:
            self.report({"WARNING"}, f"Removed what was added to the network: {'; '.join(added)}")
        if followed:
            self.report({"INFO"}, f"Followed renamed bones: {', '.join(followed)}")
        if moved:
            self.report(
                {"INFO"},
                f"Moved keys of a network of the earlier layout to the lower bone: {'; '.join(moved)}",
            )
        if parked:
            self.report(
                {"INFO"},
                "Moved the drivers of Blender's IK muted for the chains to custom properties of their "
                f"bones, where they make no dependency cycle (Remove moves them back): {', '.join(parked)}",
            )
        if built:
            besides = f", besides the {made} made above" if made else ""
            self.report({"INFO"}, f"Updated the network of {built} chain(s){besides}")

    def _library_bones(self, obj, chains, skipped: list[str], followed: list[str], reason: str) -> set[str]:
        """On an armature whose bones come from a library (an override), whose networks are the
        library's and cannot be rebuilt here: report what was done (renamed bones followed, which
        the networks' own constraints and drivers already follow) and which chains still need the
        library file, with their problem."""
        broken = [f"'{chain.name}': {why}" for chain in chains if (why := problem(obj, chain))]
        if skipped:
            self.report({"WARNING"}, "Skipped " + "; ".join(skipped))
        if followed:
            self.report({"INFO"}, f"Followed renamed bones: {', '.join(followed)}")
        if broken:
            self.report({"WARNING" if followed else "ERROR"}, f"{reason}. Not rebuilt: {'; '.join(broken)}")
        elif not skipped and not followed:
            self.report({"INFO"}, f"The networks of '{obj.name}' come from its library and are whole")
        if not followed:
            return {"CANCELLED"}
        obj.update_tag()
        return {"FINISHED"}

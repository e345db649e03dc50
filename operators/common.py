# SPDX-License-Identifier: GPL-3.0-or-later
"""What the chain operators share: which armature and chain they act on, their poll, and how a
chain that cannot be acted on is reported."""

from bpy.props import StringProperty

from ..chain.bones import ChainError
from ..chain.chains import find_chain, library_chain, owning_armature
from ..network.edit import MechanismError


def rig_editable(cls, context, obj) -> bool:
    """Whether an operator that rebuilds ``obj``'s networks can run: not a linked armature, not in
    Edit Mode (the network is built through Edit Mode and Pose Mode); else says why in ``cls``'s
    poll message."""
    if obj.library is not None:
        cls.poll_message_set(f"'{obj.name}' is linked from a library: make a library override first")
        return False
    if context.mode == "EDIT_ARMATURE":
        cls.poll_message_set("Leave Edit Mode first")
        return False
    return True


class ChainOperator:
    """Mixin for operators acting on one chain: the one named ``chain``, else the active chain of
    the armature (the active object, or the armature whose chain uses the active target or pole).

    Its ``execute`` finds the chain and runs the operator's ``execute_chain(context, obj, chain)``;
    a ChainError (the chain's status) or a MechanismError (the armature's) raised there is
    reported and the operator is CANCELLED, so each operator raises and never repeats the report.
    """

    chain: StringProperty(
        name="Chain",
        description="Name of the chain to act on; the active chain when empty",
        options={"SKIP_SAVE"},
    )
    # Operators that change the rig refuse linked armatures (their data cannot be edited).
    edits_rig = True

    @classmethod
    def poll(cls, context) -> bool:
        obj = owning_armature(context)
        if obj is None:
            cls.poll_message_set(
                "Select an armature with two-bone IK chains, or one of their targets or poles"
            )
            return False
        if cls.edits_rig and obj.library is not None:
            cls.poll_message_set(f"'{obj.name}' is linked from a library: make a library override first")
            return False
        if find_chain(obj) is None:
            cls.poll_message_set(f"'{obj.name}' has no two-bone IK chain: add one from the Pose menu")
            return False
        if cls.edits_rig and obj.mode == "EDIT":
            # Edit Mode has no pose to read: the chains' readouts and network are stale there.
            cls.poll_message_set(f"'{obj.name}' is in Edit Mode: leave it first")
            return False
        return True

    def execute(self, context):
        obj, chain = self.armature_and_chain(context)
        if chain is None:
            return {"CANCELLED"}
        name = chain.name  # the chain may be gone when the error is raised
        try:
            return self.execute_chain(context, obj, chain)
        except ChainError as error:
            self.report({"ERROR"}, f"Chain '{name}': {error}")
        except MechanismError as error:
            self.report({"ERROR"}, str(error))
        return {"CANCELLED"}

    def execute_chain(self, context, obj, chain) -> set[str]:
        """What the operator does to ``chain`` of ``obj``; raises ChainError or MechanismError."""
        raise NotImplementedError

    @staticmethod
    def check_removable(obj, chains) -> None:
        """MechanismError when one of ``chains`` comes from a library (chains.library_chain)."""
        for chain in chains:
            reason = library_chain(obj, chain)
            if reason:
                raise MechanismError(reason)

    def armature_and_chain(self, context):
        """(armature object, chain) this operator acts on; reports and returns (obj, None) when the
        named chain does not exist."""
        obj = owning_armature(context)
        chain = find_chain(obj, self.chain)
        if chain is None:
            self.report({"ERROR"}, f"No chain '{self.chain}' on '{obj.name}'")
        return obj, chain

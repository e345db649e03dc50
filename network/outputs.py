# SPDX-License-Identifier: GPL-3.0-or-later
"""The chain's edge on one armature: which of its bones carry which of its constraints
(:data:`.spec.OUTPUTS`), in which space. The builder, the health checks, Remove, the visual
readout and the status all ask here, so that what the chain puts on the rig is read as the spec
writes it."""

from __future__ import annotations

from . import spec


def end_bone_name(obj, chain) -> str:
    """The bone End Rotation turns: ``chain.end_bone`` when it is a child of the lower bone, else
    the lower bone's first child; '' when there is none."""
    lower = obj.data.bones.get(chain.lower_bone)
    if lower is None:
        return ""
    if chain.end_bone:
        return chain.end_bone if lower.children.get(chain.end_bone) is not None else ""
    return lower.children[0].name if len(lower.children) else ""


def slot_bone(obj, chain, slot: str) -> str:
    """The bone of ``chain`` in ``slot`` (:attr:`.spec.Output.slot`): its upper or lower bone, or the
    end bone while End Rotation is Target ('' otherwise, or when it has none)."""
    if slot == "end":
        return end_bone_name(obj, chain) if chain.end_rotation == "TARGET" else ""
    return chain.upper_bone if slot == "upper" else chain.lower_bone


def chain_outputs(obj, chain, rows: tuple[spec.Output, ...] = spec.OUTPUTS) -> list[tuple[str, spec.Output]]:
    """(bone name, row) of each of ``rows`` that ``chain`` puts on a bone now (:func:`slot_bone`),
    in the spec's order."""
    placed = ((slot_bone(obj, chain, row.slot), row) for row in rows)
    return [(bone, row) for bone, row in placed if bone]


def slots(obj, chain) -> list[tuple[str, str]]:
    """(slot, bone name) of each bone the chain poses (:data:`.spec.POSING`: one row a slot)."""
    return [(row.slot, bone) for bone, row in chain_outputs(obj, chain, spec.POSING)]


def holders(obj, chain, row: spec.Output) -> list[str]:
    """The bones that may carry ``row``'s constraint for ``chain``, whatever its settings say now:
    its slot's bone, or for ``end`` every child of the lower bone (End Rotation may have moved)."""
    if row.slot != "end":
        return [slot_bone(obj, chain, row.slot)]
    lower = obj.data.bones.get(chain.lower_bone)
    return [child.name for child in lower.children] if lower is not None else []


def lower_space(lower) -> str:
    """The space the lower bone copies its solved bone in: local (its influence blends relative to
    its own parent, as the solved bone's rest is the same offset from the solved upper bone) when
    it inherits as Blender's defaults do; world (exact at full influence, blended as Blender blends
    constraints) when an inherit flag makes local transforms mean something else."""
    default = lower.use_inherit_rotation and lower.inherit_scale == "FULL" and lower.use_local_location
    return "LOCAL" if default else "WORLD"


def space(obj, chain, row: spec.Output) -> str:
    """The owner space of ``row``'s constraint on ``chain``'s bone (``LOWER``: :func:`lower_space`)."""
    return lower_space(obj.data.bones[chain.lower_bone]) if row.space == "LOWER" else row.space


def own(constraint, row: spec.Output, solved: str) -> bool:
    """Whether ``constraint`` is ``row`` as the chain made it: its name and type, and for a copy,
    aimed at the chain's solved bone ``solved``."""
    return (
        constraint.name == row.name
        and constraint.type == row.kind
        and (not row.copies or constraint.subtarget == solved)
    )

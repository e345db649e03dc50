# SPDX-License-Identifier: GPL-3.0-or-later
"""Chain storage on the armature object: ``obj.two_bone_ik.chains`` and ``active_chain_index``."""

from typing import Literal

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..network import build, layout, naming
from . import glance, reading, settings, shortfall
from .bones import unique_name
from .status import STATES

# Chains must survive library overrides of the rig (the collection accepts inserted items).
OVERRIDABLE: set[Literal["LIBRARY_OVERRIDABLE"]] = {"LIBRARY_OVERRIDABLE"}


def _rename(self, context) -> None:
    """Keep chain names unique and non-empty (the panel, the command line and the operators find
    a chain by name)."""
    others = {chain.name for chain in self.id_data.two_bone_ik.chains if chain != self}
    if not self.name or self.name in others:
        self.name = unique_name(others, self.name or self.lower_bone or "chain")  # calls this again


def _sync(self, context) -> None:
    """Keep the chain's network in step with the setting (targets, pole, End Rotation)."""
    obj = self.id_data
    if obj.library is None and obj.pose is not None:
        build.sync(obj, self)
        obj.update_tag()


# Where a chain's constraints go among the chain bones' other constraints (the chain property and
# Add's option).
STACK_POSITION = "Where the chain's constraints go in the stacks of bones that carry other constraints"
STACK_POSITIONS = (
    (
        "LAST",
        "Last",
        "After the bones' other constraints, as a constraint added in Blender goes: the chain's "
        "pose comes out, and the others have no effect while the chain is on",
        0,
    ),
    (
        "FIRST",
        "First",
        "Before the bones' other constraints: they act on the chain's pose, and the end may "
        "miss the target (the status says by how much)",
        1,
    ),
)


class TwoBoneIKMutedConstraint(bpy.types.PropertyGroup):
    """A Blender IK or Spline IK constraint the chain's Add turned off (docs/rigify.md, "Bones with other
    constraints"): Remove turns it back on (chain/muting.py)."""

    # ``name`` (PropertyGroup's) is the constraint's name.
    bone: StringProperty(
        name="Bone", description="Pose bone that carries the muted constraint", override=OVERRIDABLE
    )
    driver_muted: BoolProperty(
        name="Driver Muted",
        description="The constraint's Enabled was driven: its driver was muted too, and is unmuted again",
        default=False,
        override=OVERRIDABLE,
    )
    was_chain_count: IntProperty(
        name="Was Chain Length",
        description=(
            "The constraint's Chain Length before it was shortened to stop at the chain's upper bone "
            "(-1: not shortened); Remove sets it back"
        ),
        default=-1,
        min=-1,
        override=OVERRIDABLE,
    )
    driver_path: StringProperty(
        name="Driver Path",
        description=(
            "The data path the constraint's Enabled (Mute) driver drove: while the chain is on, the "
            "driver drives a custom property of the same bone instead, and Remove moves it back"
        ),
        override=OVERRIDABLE,
    )
    was_enabled: BoolProperty(
        name="Was Enabled",
        description="Whether the constraint was enabled when it was muted (Remove sets it back)",
        default=True,
        override=OVERRIDABLE,
    )


class TwoBoneIKChain(bpy.types.PropertyGroup):
    """One two-bone chain: its bones, target, pole and the outputs of its last solve."""

    # Redefined from PropertyGroup's to keep chain names unique.
    name: StringProperty(name="Name", description="Name of the chain", update=_rename, override=OVERRIDABLE)
    enabled: BoolProperty(
        name="Enabled",
        description="Apply this chain (its network's root bone holds the value, animatable there)",
        get=lambda chain: settings.value(chain, "enabled") > 0.0,
        set=lambda chain, on: settings.set_value(chain, "enabled", 1.0 if on else 0.0),
        options=set(),  # key the lower bone's property (settings.path), which plays anywhere
        override=OVERRIDABLE,
    )
    upper_bone: StringProperty(
        name="Upper Bone",
        description="Pose bone at the chain's root (thigh, upper arm)",
        update=_sync,
        override=OVERRIDABLE,
    )
    lower_bone: StringProperty(
        name="Lower Bone",
        description="Pose bone whose tail is the chain's end (shin, forearm); its parent is the upper bone",
        update=_sync,
        override=OVERRIDABLE,
    )
    target: PointerProperty(
        name="Target",
        description="Object whose origin the chain's end reaches for",
        type=bpy.types.Object,
        update=_sync,
        override=OVERRIDABLE,
    )
    target_bone: StringProperty(
        name="Target Bone",
        description="When the target is an armature: the bone the end reaches for (at Head/Tail)",
        update=_sync,
        override=OVERRIDABLE,
    )
    target_head_tail: FloatProperty(
        name="Head/Tail",
        description="Point of the target bone the end reaches for: 0 its head, 1 its tail "
        "(as Blender's constraints' Head/Tail)",
        min=0.0,
        max=1.0,
        subtype="FACTOR",
        update=_sync,
        override=OVERRIDABLE,
    )
    pole: PointerProperty(
        name="Pole",
        description="Object the joint (knee, elbow) bends toward; "
        "without one the chain bends as in its rest pose",
        type=bpy.types.Object,
        update=_sync,
        override=OVERRIDABLE,
    )
    pole_bone: StringProperty(
        name="Pole Bone",
        description="When the pole is an armature: the bone the joint bends toward (at Head/Tail)",
        update=_sync,
        override=OVERRIDABLE,
    )
    pole_head_tail: FloatProperty(
        name="Head/Tail",
        description="Point of the pole bone the joint bends toward: 0 its head, 1 its tail",
        min=0.0,
        max=1.0,
        subtype="FACTOR",
        update=_sync,
        override=OVERRIDABLE,
    )
    twist: FloatProperty(
        name="Twist",
        description="Turns the bend plane about the root-target axis from where the pole puts it "
        "(positive: right-handed about root to target), e.g. to splay a knee",
        subtype="ANGLE",
        get=settings.getter("twist"),
        set=settings.setter("twist"),
        options=set(),  # key the lower bone's property (settings.path), which plays anywhere
        override=OVERRIDABLE,
    )
    softness: FloatProperty(
        name="Softness",
        description="Eases the last part of the reach (this share of the chain's length) toward full "
        "extension, so the joint does not pop straight; the end may stop short of the target",
        min=0.0,
        max=1.0,
        subtype="FACTOR",
        get=settings.getter("softness"),
        set=settings.setter("softness"),
        options=set(),  # key the lower bone's property (settings.path), which plays anywhere
        override=OVERRIDABLE,
    )
    end_rotation: EnumProperty(
        name="End Rotation",
        description="Rotation of the end bone (the lower bone's child: foot, hand)",
        items=(
            ("FK", "FK", "The end bone keeps its own (FK or animated) rotation", 0),
            ("TARGET", "Target", "The end bone matches the target's world rotation", 1),
        ),
        default="FK",
        update=_sync,
        override=OVERRIDABLE,
    )
    stack_position: EnumProperty(
        name="Constraint Position",
        description=STACK_POSITION,
        items=STACK_POSITIONS,
        default="LAST",
        update=_sync,
        override=OVERRIDABLE,
    )
    end_bone: StringProperty(
        name="End Bone",
        description="Child of the lower bone that End Rotation applies to (empty: its first child)",
        update=_sync,
        override=OVERRIDABLE,
    )
    muted_ik: CollectionProperty(
        type=TwoBoneIKMutedConstraint,
        name="Muted Blender IK",
        description="Blender IK and Spline IK constraints muted for this chain, which Remove turns on again",
        override={"LIBRARY_OVERRIDABLE", "USE_INSERTION"},
    )
    influence: FloatProperty(
        name="Influence",
        description="Blend between the FK pose (0) and the full solve (1)",
        min=0.0,
        max=1.0,
        subtype="FACTOR",
        get=settings.getter("influence"),
        set=settings.setter("influence"),
        options=set(),  # key the lower bone's property (settings.path), which plays anywhere
        override=OVERRIDABLE,
    )

    # Readouts, read-only, worked out when read (reading.py, shortfall.py, glance.py): nothing is
    # written per update.
    state: EnumProperty(
        name="State",
        description="What the chain comes to now (read-only); Status says it in words",
        items=STATES,
        get=lambda chain: reading.state_code(chain),
    )
    reachable: BoolProperty(
        name="Reachable",
        description="The target is within the chain's reach (read-only)",
        get=lambda chain: reading.read(chain).reachable,
    )
    too_close: BoolProperty(
        name="Too Close",
        description="The target is unreachable because it is nearer the root than the folded chain "
        "(read-only)",
        get=lambda chain: reading.read(chain).too_close,
    )
    shortfall: FloatProperty(
        name="Shortfall",
        description="World-space distance from the chain's evaluated end to the target, whatever the "
        "cause (Shortfall Cause says which)",
        subtype="DISTANCE",
        unit="LENGTH",
        get=lambda chain: shortfall.shortfall(chain),
    )
    shortfall_cause: EnumProperty(
        name="Shortfall Cause",
        description="What keeps the end off the target (read-only)",
        items=shortfall.CAUSES,
        get=lambda chain: shortfall.shortfall_cause(chain),
    )
    joint: FloatVectorProperty(
        name="Joint",
        description="World-space position of the joint (the lower bone's head)",
        size=3,
        subtype="TRANSLATION",
        unit="LENGTH",
        get=lambda chain: glance.joint(chain),
    )
    end: FloatVectorProperty(
        name="End",
        description="World-space position of the chain's end (the lower bone's tail)",
        size=3,
        subtype="TRANSLATION",
        unit="LENGTH",
        get=lambda chain: glance.end(chain),
    )
    status: StringProperty(
        name="Status",
        description="Empty when the chain is right, else what to fix (read-only)",
        get=lambda chain: reading.read(chain).status.text,
    )
    layout: IntProperty(
        name="Layout",
        description="The number of the network layout the chain was built with, as its network's root bone "
        "records it (0 without a network; older than the extension's: Update Mechanism upgrades it)",
        get=lambda chain: _built_layout(chain),
    )


def _built_layout(chain) -> int:
    obj = chain.id_data
    if obj.pose is None:
        return 0
    return layout.built_layout(obj, naming.chain_parts(chain))


class TwoBoneIKSettings(bpy.types.PropertyGroup):
    """The two-bone IK chains of one armature object."""

    chains: CollectionProperty(
        type=TwoBoneIKChain, name="Chains", override={"LIBRARY_OVERRIDABLE", "USE_INSERTION"}
    )
    active_chain_index: IntProperty(
        name="Active Chain",
        description="Index of the chain shown in the panel",
        default=0,
        min=0,
        override=OVERRIDABLE,
    )


classes = (TwoBoneIKMutedConstraint, TwoBoneIKChain, TwoBoneIKSettings)
_register_classes, _unregister_classes = bpy.utils.register_classes_factory(classes)  # type: ignore[misc]


def register() -> None:
    _register_classes()
    bpy.types.Object.two_bone_ik = PointerProperty(
        type=TwoBoneIKSettings, name="Two-Bone IK", override=OVERRIDABLE
    )


def unregister() -> None:
    del bpy.types.Object.two_bone_ik
    _unregister_classes()

# SPDX-License-Identifier: GPL-3.0-or-later
"""The View3D sidebar tab "Two-Bone IK": the armature's chains, the active chain's settings and reach."""

import textwrap

import bpy

from ..chain import memo, shortfall
from ..chain import settings as chain_settings
from ..chain.adopt import copies, orphans
from ..chain.chains import constrained_bones, find_chain, owning_armature
from ..chain.rigify import is_rigify_rig
from ..compat import UI_LIST_TYPE
from .status import chain_state, row_icon, status_line

# How many pixels a character of a label takes at UI scale 1 (Blender's interface font, mixed
# text, rounded up), and what a box, an icon and the region's margins take beside a label: a long
# sentence is wrapped to what the region really fits, at any UI scale (docs/panel.md).
CHARACTER_WIDTH = 7
LABEL_MARGIN = 50


class POSE_UL_two_bone_ik_chains(bpy.types.UIList):
    """The chains of an armature: enable toggle, name, and whether the end is on its target."""

    def draw_item(self, context, layout, data, item, icon, active_data, active_property, index=0, flt_flag=0):
        row = layout.row(align=True)
        owner, path = chain_settings.path(item, "enabled")  # keyed there, it plays anywhere
        row.prop(owner, path, text="")
        row.prop(item, "name", text="", emboss=False)
        row.label(text="", icon=row_icon(item))


def characters_that_fit(region_width: int, ui_scale: float) -> int:
    """How many characters of a label fit in a region ``region_width`` pixels wide (Blender's
    region width, which grows with the UI scale) beside an icon in a box."""
    return max(8, int((region_width - LABEL_MARGIN * ui_scale) / (CHARACTER_WIDTH * ui_scale)))


def wrap_lines(text: str, characters: int) -> list[str]:
    """``text`` in lines of at most ``characters`` (a word longer than that gets a line of its own,
    broken), never broken at a hyphen ("root-target" stays one word)."""
    return textwrap.wrap(text, width=characters, break_on_hyphens=False) or [""]


def _characters(context) -> int:
    width = context.region.width if context.region is not None else 300
    # 0 in background mode, where nothing is drawn on screen.
    return characters_that_fit(width, context.preferences.system.ui_scale or 1.0)


def _wrapped_label(layout, context, text: str, icon: str) -> None:
    """A label broken into lines that fit the sidebar; the icon on the first line only."""
    lines = wrap_lines(text, _characters(context))
    column = layout.column(align=True)
    for number, line in enumerate(lines):
        column.label(text=line, icon=icon if number == 0 else "BLANK1")


def _draw_chain(layout, context, obj, chain) -> None:
    """The active chain: its bones, target, pole and influence, its reach and status, its actions."""
    layout.use_property_split = True
    layout.use_property_decorate = False
    column = layout.column()
    column.active = chain.enabled
    column.prop_search(chain, "upper_bone", obj.data, "bones")
    column.prop_search(chain, "lower_bone", obj.data, "bones")
    for role in ("target", "pole"):
        source = getattr(chain, role)
        row = column.row(align=True)
        row.prop(chain, role)
        if source is None:
            continue
        row.operator(f"pose.two_bone_ik_select_{role}", text="", icon="RESTRICT_SELECT_OFF")
        if source.type == "ARMATURE":
            column.prop_search(chain, f"{role}_bone", source.data, "bones")
            if getattr(chain, f"{role}_bone"):
                column.prop(chain, f"{role}_head_tail", slider=True)
    column.prop(chain, "end_rotation", expand=True)
    if chain.end_rotation == "TARGET":
        column.prop_search(chain, "end_bone", obj.data, "bones")
    if chain.stack_position != "LAST" or constrained_bones(obj, chain):  # only where it changes a pose
        column.prop(chain, "stack_position")
    # The animatable settings as their network bone's custom properties: keyed there (I over the
    # field), they play in a Blender without the extension.
    for name, text, slider in (
        ("twist", "Twist", False),
        ("softness", "Softness", True),
        ("influence", "Influence", True),
    ):
        owner, path = chain_settings.path(chain, name)
        column.prop(owner, path, text=text, slider=slider)

    summary = shortfall.summary(chain)
    state = chain_state(context, chain, summary)
    box = layout.box()
    _wrapped_label(box, context, state.text, state.icon)
    line = status_line(chain, summary)
    if line is not None:
        _wrapped_label(box, context, line[1], line[0])

    # Side by side where both names fit, else one above the other.
    snap_text = "Snap IK to FK"
    row = (
        layout.row(align=True)
        if _characters(context) >= 2 * len(snap_text) + 4
        else layout.column(align=True)
    )
    row.operator("pose.two_bone_ik_snap_ik_to_fk")
    row.operator("pose.two_bone_ik_snap_fk_to_ik")
    layout.operator("pose.two_bone_ik_bake", icon="REC")


def _draw_panel(layout, context) -> None:
    """The panel's contents (VIEW3D_PT_two_bone_ik.draw)."""
    obj = owning_armature(context)
    settings = obj.two_bone_ik
    row = layout.row()
    row.template_list(
        "POSE_UL_two_bone_ik_chains",
        "",
        settings,
        "chains",
        settings,
        "active_chain_index",
        rows=3,
        type=UI_LIST_TYPE,
    )
    column = row.column(align=True)
    column.operator("pose.two_bone_ik_add", icon="ADD", text="")
    column.operator("pose.two_bone_ik_remove", icon="REMOVE", text="")
    column.separator()
    column.menu("VIEW3D_MT_pose_two_bone_ik", icon="DOWNARROW_HLT", text="")
    chains_key = tuple((chain.upper_bone, chain.lower_bone) for chain in settings.chains)
    joined = memo.relations_scoped(("orphans", obj.session_uid, chains_key), lambda: orphans(obj))
    if joined:  # a Join brought another armature's chains in: their networks, not the chains
        box = layout.box()
        _wrapped_label(
            box,
            context,
            f"{len(joined)} network(s) of no chain, from a Join: Update Mechanism makes them chains",
            "ERROR",
        )
        box.operator("pose.two_bone_ik_update_mechanism")
    copied = memo.relations_scoped(("copies", obj.session_uid, chains_key), lambda: copies(obj))
    for owner, bones in copied.items():  # a leg silently following another chain's
        _wrapped_label(
            layout.box(),
            context,
            f"{', '.join(bones)} copy the constraints of chain '{owner}' and follow its leg: Update "
            "Mechanism makes them a chain of their own",
            "ERROR",
        )
    chain = find_chain(obj)
    if chain is None:
        _wrapped_label(layout, context, "Select a lower bone in Pose Mode and add a chain", "INFO")
        if is_rigify_rig(obj):  # docs/rigify.md, README "Rigify"
            layout.operator("pose.two_bone_ik_rigify_limbs", icon="CON_KINEMATIC")
    else:
        _draw_chain(layout, context, obj, chain)
    layout.prop(context.window_manager, "two_bone_ik_show_overlay")


class VIEW3D_PT_two_bone_ik(bpy.types.Panel):
    """Two-bone IK chains of the active armature"""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Two-Bone IK"
    bl_label = "Two-Bone IK"

    @classmethod
    def poll(cls, context) -> bool:
        # The armature itself, or one whose chain uses the active object (a target being moved).
        return owning_armature(context) is not None

    def draw(self, context) -> None:
        with memo.drawing():  # what depends on the rig's relations alone is kept between redraws
            _draw_panel(self.layout, context)


classes = (POSE_UL_two_bone_ik_chains, VIEW3D_PT_two_bone_ik)
register, unregister = bpy.utils.register_classes_factory(classes)  # type: ignore[misc]  # stub says None

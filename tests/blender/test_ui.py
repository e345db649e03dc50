# SPDX-License-Identifier: GPL-3.0-or-later
"""The sidebar panel, the chain list, the Pose menu and the viewport overlay.

The reach indicator and status sentence are checked for every chain state on real chains (the
pure functions the panel draws from). Drawing itself needs a real ``UILayout``: headless, a popup
menu's layout is one, but ending that popup crashes background Blender, so the panel, list and menu
are drawn for every state in a second process, where the unfinished popup leaks a few bytes at
exit. Blender builds no panel headless, so ``self`` for ``Panel.draw``/``Menu.draw``/``draw_item``
is a plain object carrying that real layout (and the list's ``layout_type``).
"""

from typing import Any

import addon_utils
import bpy
import pytest
from blender_rig import (
    MODULE,
    assert_close,
    base_rig,
    exited_cleanly,
    make_empty,
    package,
    run_blender,
)

TOLERANCE = 1e-5


def rig(**options):
    """The base rig (blender_rig.base_rig: ``shin_tail``, ``target``, ``pole`` None for no pole), updated
    once more: a constrained chain reports its evaluated miss one update late. Returns the armature."""
    obj, _ = base_rig(**options)
    bpy.context.view_layer.update()
    return obj


def limit_shin(obj) -> None:
    """Limit Rotation on the shin (local X between 0 and 10 degrees): a constraint the solve cannot see."""
    import math

    constraint = obj.pose.bones["shin"].constraints.new("LIMIT_ROTATION")
    constraint.use_limit_x, constraint.min_x, constraint.max_x = True, 0.0, math.radians(10)
    constraint.owner_space = "LOCAL"


# Every state the panel distinguishes: (name, rig arguments, set-up, expected kind, text, status icon).
STATES: dict[str, tuple[dict[str, Any], str | None, str, str, str | None]] = {
    "reachable": ({}, None, "REACHABLE", "Reachable", None),
    "too_far": ({"target": (3, 0, 0)}, None, "TOO_FAR", "Out of reach by 1 m", None),
    "too_close": (
        {"shin_tail": (0, 1.5, 0), "target": (0.2, 0, 0)},
        None,
        "TOO_CLOSE",
        "Too close by 30 cm",
        None,
    ),
    "failed": ({}, "no_target", "FAILED", "Set a target object", None),
    "pole_on_line": (
        {"target": (3, 0, 0), "pole": (1, 0, 0)},
        None,
        "TOO_FAR",
        "Out of reach by 1 m",
        "ERROR",
    ),
    "no_pole": ({"pole": None}, None, "REACHABLE", "Reachable", "INFO"),
    "disabled": ({}, "disable", "DISABLED", "Disabled", None),
    "off_target": ({"target": (0.8, 0.4, 0.3)}, "limit_shin", "CONSTRAINTS", "Off target by", "ERROR"),
}


def build_state(name: str):
    """The rig in state ``name`` (see STATES); returns the armature object."""
    arguments, setup, *_ = STATES[name]
    obj = rig(**arguments)
    chain = obj.two_bone_ik.chains[0]
    if setup == "no_target":
        chain.target = None
    elif setup == "disable":
        chain.enabled = False
    elif setup == "limit_shin":
        limit_shin(obj)
    bpy.context.view_layer.update()
    bpy.context.view_layer.update()
    return obj


@pytest.mark.parametrize("name", list(STATES))
def test_chain_state_reads_at_a_glance(scene, name):
    """Each chain state gives its icon and sentence, and a status line only where one applies."""
    _, _, kind, text, status_icon = STATES[name]
    status = package().ui.status
    chain = build_state(name).two_bone_ik.chains[0]
    state = status.chain_state(bpy.context, chain)
    assert state.kind == kind
    assert state.text.startswith(text), state.text
    icons = {
        "REACHABLE": "CHECKMARK",
        "TOO_FAR": "CANCEL",
        "TOO_CLOSE": "CANCEL",
        "FAILED": "ERROR",
        "DISABLED": "HIDE_ON",
        "CONSTRAINTS": "ERROR",
    }
    assert state.icon == icons[kind]
    line = status.status_line(chain)
    assert (line[0] if line else None) == status_icon
    # The list's row: where the end is, from the pose alone.
    rows = {"REACHABLE": "CHECKMARK", "DISABLED": "HIDE_ON", "FAILED": "ERROR"}
    assert status.row_icon(chain) == rows.get(kind, "CANCEL")
    if name == "pole_on_line":
        assert line[1].startswith("Pole is on")
    if name == "no_pole":
        assert line[1].startswith("No pole")
    if name == "off_target":
        assert line[1].startswith("The chain is ") and "other constraints on 'shin' move it" in line[1]
        assert chain.shortfall > 0.05  # the evaluated miss, never "Reachable"


def test_lengths_follow_the_scene_units(scene):
    """The out-of-reach distance is written in the scene's units."""
    obj = build_state("too_far")
    scene.unit_settings.system = "IMPERIAL"
    assert (
        package().ui.status.chain_state(bpy.context, obj.two_bone_ik.chains[0]).text
        == "Out of reach by 3.28'"
    )
    scene.unit_settings.system = "NONE"
    assert package().ui.status.chain_state(bpy.context, obj.two_bone_ik.chains[0]).text == "Out of reach by 1"


def test_panel_polls_for_the_armature_and_its_targets(scene):
    """The panel shows for an armature and for its chains' targets and poles, not for other objects."""
    panel = bpy.types.VIEW3D_PT_two_bone_ik
    obj = rig()
    other = make_empty("Other", (0, 0, 0))
    target, pole = bpy.data.objects["Target"], bpy.data.objects["Pole"]
    for active, shown in ((obj, True), (target, True), (pole, True), (other, False)):
        with bpy.context.temp_override(object=active, active_object=active):
            assert panel.poll(bpy.context) is shown
    with bpy.context.temp_override(object=None, active_object=None):
        assert not panel.poll(bpy.context)


DRAW_EVERY_STATE = """
import types
sys.path.insert(0, {tests!r})
from test_ui import STATES, build_state

panel, menu = bpy.types.VIEW3D_PT_two_bone_ik, bpy.types.VIEW3D_MT_pose_two_bone_ik
chain_list = bpy.types.POSE_UL_two_bone_ik_chains
drawn, reads = {{}}, {{}}
reading = package().chain.reading
read = reading.read


def counted(chain):
    reads[name] += 1
    return read(chain)


reading.read = counted
for name in list(STATES) + ["no_chain"]:
    reads[name] = 0
    bpy.ops.wm.read_homefile(use_empty=True)
    if name == "no_chain":
        from blender_rig import make_leg
        obj = make_leg()
    else:
        obj = build_state(name)
    window = bpy.context.window_manager.windows[0]
    area = next(area for area in window.screen.areas if area.type == "VIEW_3D")
    region = next(region for region in area.regions if region.type == "UI")
    with bpy.context.temp_override(window=window, area=area, region=region, object=obj, active_object=obj):
        popup = bpy.context.window_manager.popmenu_begin__internal(name)
        # A real UILayout; the popup is never ended (that crashes headless).
        panel.draw(types.SimpleNamespace(layout=popup.layout), bpy.context)
        reads[name + " panel"] = reads[name]
        menu.draw(types.SimpleNamespace(layout=popup.layout), bpy.context)
        settings = obj.two_bone_ik
        for layout_type in ("DEFAULT", "COMPACT"):
            for item in settings.chains:
                chain_list.draw_item(
                    types.SimpleNamespace(layout_type=layout_type), bpy.context, popup.layout.row(), settings,
                    item, 0, settings, "active_chain_index",
                )
    chains = settings.chains
    drawn[name] = package().ui.status.chain_state(bpy.context, chains[0]).kind if len(chains) else None
reading.read = read
print("RESULT " + json.dumps([drawn, reads]))
"""


def test_panel_list_and_menu_draw_every_state(scene):
    """Panel, list rows and menu draw into a real UILayout for every state, with nothing Blender cannot
    find, and the panel works the chain's status out once, for its box (the list's rows read none)."""
    import json
    import pathlib

    tests = str(pathlib.Path(__file__).resolve().parent)
    process = run_blender(DRAW_EVERY_STATE.format(tests=tests))
    lines = [line for line in process.stdout.splitlines() if line.startswith("RESULT ")]
    assert exited_cleanly(process.returncode) and lines, process.stdout + process.stderr
    console = process.stdout + process.stderr
    # A missing property or operator does not raise in draw code: Blender prints it instead.
    for complaint in (
        "Traceback",
        "Error: Python",
        "rna_ui",
        "not found",
        "unknown operator",
        "ui_template_list",
    ):
        assert complaint not in console, console
    drawn, reads = json.loads(lines[-1][len("RESULT ") :])
    assert drawn == {name: kind for name, (_, _, kind, _, _) in STATES.items()} | {"no_chain": None}
    # The panel works the chain's status out once, for its box: not once per readout it shows (up
    # to 8 times once), nor for its list rows, whose icons come from the pose (glance.glance).
    assert {name: count for name, count in reads.items() if name.endswith(" panel") and count > 1} == {}


def test_status_wraps_to_the_characters_the_sidebar_fits(scene):
    """A long sentence is wrapped by what the sidebar fits at the current UI scale: Blender's region
    width grows with the scale (292 px at 1.0, 436 px at 1.5 for the same sidebar), the characters
    that fit do not. Measured in a real window (tests/window): at 292 px and scale 1.0 a status
    line of 36 characters showed whole and one of 41 was cut off with "..."; dragged to 202 px, the
    reach line ("Out of reach by 2.5 m", 21 characters) must fit."""
    panel = package().ui.panel
    fit = panel.characters_that_fit
    assert 30 <= fit(292, 1.0) <= 36
    assert abs(fit(436, 1.5) - fit(292, 1.0)) <= 1  # the same sidebar at scale 1.5
    assert fit(436, 1.0) > fit(436, 1.5)  # wider at the same scale: more
    assert fit(202, 1.0) >= len("Out of reach by 2.5 m")
    assert fit(40, 2.0) >= 8  # never zero, however narrow
    sentence = "Pole is on the root-target line: the bend uses the fallback axis"
    for width, scale in ((292, 1.0), (436, 1.5), (202, 1.0)):
        lines = panel.wrap_lines(sentence, fit(width, scale))
        assert all(len(line) <= fit(width, scale) for line in lines)
        assert " ".join(lines) == sentence


# --- Overlay ----------------------------------------------------------------------------------------


def test_overlay_lines_reachable(scene):
    """Reachable: a line from the root to the target and one from the joint to the pole."""
    overlay = package().ui.overlay
    rig()
    lines = overlay.overlay_lines(bpy.context)
    assert [line.color for line in lines] == [overlay.REACH_COLOR, overlay.POLE_COLOR]
    assert_close(lines[0].start, (0, 0, 0), TOLERANCE)
    assert_close(lines[0].end, (1.2, 0, 0.5), TOLERANCE)
    assert_close(lines[1].start, (0.6, 0.7599342, 0.25), TOLERANCE)
    assert_close(lines[1].end, (1.2, 0.5, 0.5), TOLERANCE)


def test_overlay_lines_out_of_reach_stop_at_the_tip(scene):
    """Out of reach: the root line is drawn in the warning colour and ends where the tip stops."""
    overlay = package().ui.overlay
    rig(target=(3, 0, 0), pole=(1, 1, 0))
    line = overlay.overlay_lines(bpy.context)[0]
    assert line.color == overlay.OUT_OF_REACH_COLOR
    assert_close(line.end, (2, 0, 0), TOLERANCE)


@pytest.mark.parametrize("name", ["failed", "disabled"])
def test_overlay_draws_nothing_for_unsolved_chains(scene, name):
    """A chain that did not solve, or is disabled, draws no line."""
    build_state(name)
    assert package().ui.overlay.overlay_lines(bpy.context) == []


def test_overlay_handler_lifecycle(scene):
    """No handler or shader in background; add/remove are idempotent; disabling leaves nothing."""
    overlay = package().ui.overlay
    assert overlay._handle is None
    assert bpy.context.window_manager.two_bone_ik_show_overlay
    rig()
    bpy.context.window_manager.two_bone_ik_show_overlay = False
    overlay._draw()  # toggled off: returns before any gpu call
    assert overlay._shaders == {}
    overlay.add_draw_handler()
    overlay.add_draw_handler()
    assert overlay._handle is not None
    bpy.context.window_manager.two_bone_ik_show_overlay = True
    addon_utils.disable(MODULE, default_set=True)
    assert overlay._handle is None
    assert not hasattr(bpy.types.WindowManager, "two_bone_ik_show_overlay")
    overlay.remove_draw_handler()  # a second remove: no ValueError
    assert addon_utils.enable(MODULE, default_set=True, handle_error=None) is not None
    overlay = package().ui.overlay
    overlay.add_draw_handler()
    bpy.ops.wm.read_homefile(use_empty=True)
    assert overlay._handle is not None  # draw handlers belong to the session, not the file
    addon_utils.disable(MODULE, default_set=True)
    assert overlay._handle is None
    assert addon_utils.enable(MODULE, default_set=True, handle_error=None) is not None
    assert package().ui.overlay._handle is None

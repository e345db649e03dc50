# SPDX-License-Identifier: GPL-3.0-or-later
"""The windowed tests: run by tools/window.sh as ``blender --python`` in a real window on Xvfb.

Each chain state the README names is built, drawn and photographed from the X side; the sidebar's
texts are read back with tesseract (whole, never cut off with "..."), at UI scale 1.0 and 1.5, in
the default sidebar and a narrow one; the overlay's lines are looked for in the pixels around the
projected hip, target, end and joint (and must be absent where the README says); the Pose menu,
Add's redo panel and the Snap and Bake buttons are used through real mouse clicks. The checks
are written to $TWO_BONE_IK_WINDOW_OUT/results.json; tests/window/report.py reads them and
Blender's console and prints the result.
"""

from __future__ import annotations

import difflib
import importlib
import math
import os
import re
import sys
from typing import Literal

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import window_support as ws
from bpy_extras.view3d_utils import location_3d_to_region_2d
from mathutils import Euler, Vector

results = ws.Results()
BUTTONS = ("Snap IK to FK", "Snap FK to IK", "Bake Two-Bone IK")
NO_CHAIN_HINT = "Select a lower bone in Pose Mode and add a chain"


# --- scenes -----------------------------------------------------------------------------------


def clear_scene() -> None:
    if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    for armature in list(bpy.data.armatures):
        bpy.data.armatures.remove(armature)
    for action in list(bpy.data.actions):
        bpy.data.actions.remove(action)


def activate(obj, mode: Literal["OBJECT", "POSE"] = "OBJECT") -> None:
    for other in bpy.context.view_layer.objects:
        other.select_set(False)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    if mode != "OBJECT":
        bpy.ops.object.mode_set(mode=mode)


def leg(**options):
    import blender_rig

    obj, _chain = blender_rig.base_rig(**options)
    bpy.context.view_layer.update()
    activate(obj)
    return obj


def plain_armature(name: str):
    import blender_rig

    obj = blender_rig.make_armature(
        name, blender_rig.leg_bones(blender_rig.BASE_THIGH, blender_rig.BASE_SHIN[1])
    )
    activate(obj)
    return obj


def state_no_chain():
    obj = plain_armature("Leg")
    activate(obj, "POSE")
    return obj


def state_reachable():
    return leg()


def state_out_of_reach():
    return leg(target=(3, 0, 0))


def state_too_close():
    return leg(shin_tail=(0, 1.5, 0), target=(0.2, 0, 0))


def state_pole_on_line():
    return leg(target=(3, 0, 0), pole=(1, 0, 0))


def state_no_pole():
    return leg(pole=None)


def state_disabled():
    obj = leg()
    obj.two_bone_ik.chains[0].enabled = False
    return obj


def state_error_no_target():
    obj = leg()
    obj.two_bone_ik.chains[0].target = None
    return obj


def state_error_target_bone():
    obj = leg()
    chain = obj.two_bone_ik.chains[0]
    chain.target = obj
    chain.target_bone = "IK Target shin"  # no such bone
    return obj


def state_error_cycle():
    obj = leg()
    target = bpy.data.objects["Target"]
    matrix = target.matrix_world.copy()
    target.parent, target.parent_type, target.parent_bone = obj, "BONE", "shin"
    target.matrix_world = matrix
    return obj


def state_target_active():
    leg()
    target = bpy.data.objects["Target"]
    activate(target)
    return target


def state_another_armature():
    leg()
    return plain_armature("Other")


def state_mesh():
    leg()
    mesh = bpy.data.meshes.new("Box")
    mesh.from_pydata([(0, 0, 0), (0.2, 0, 0), (0, 0.2, 0)], [], [(0, 1, 2)])
    obj = bpy.data.objects.new("Box", mesh)
    bpy.context.scene.collection.objects.link(obj)
    activate(obj)
    return obj


# name -> (build, whether the panel shows, overlay: "reach", "miss", "pose" (either, by where the
# end is: a chain in ERROR draws where its end is) or None for no line)
STATES = {
    "no_chain": (state_no_chain, True, None),
    "reachable": (state_reachable, True, "reach"),
    "out_of_reach": (state_out_of_reach, True, "miss"),
    "too_close": (state_too_close, True, "miss"),
    "pole_on_line": (state_pole_on_line, True, "miss"),
    "no_pole": (state_no_pole, True, "reach"),
    "disabled": (state_disabled, True, None),
    "error_no_target": (state_error_no_target, True, None),
    "error_target_bone": (state_error_target_bone, True, None),
    "error_cycle": (state_error_cycle, True, "pose"),
    "target_active": (state_target_active, True, "reach"),
    "another_armature": (state_another_armature, True, "reach"),
    "mesh": (state_mesh, False, "reach"),
}
NARROW_STATES = ("reachable", "out_of_reach", "pole_on_line")


def the_chain():
    for obj in bpy.data.objects:
        if obj.type == "ARMATURE" and len(obj.two_bone_ik.chains):
            return obj, obj.two_bone_ik.chains[0]
    return None, None


def promised_texts(name: str) -> list[str]:
    """What the panel must show whole in state ``name``: the extension's own reach sentence and
    status (ui/status.py), the hint without a chain, and the buttons."""
    status = importlib.import_module(f"{ws.MODULE}.ui.status")
    chains = importlib.import_module(f"{ws.MODULE}.chain.chains")
    armature = chains.owning_armature(bpy.context)
    if armature is None:
        return []
    chain = chains.find_chain(armature)
    if chain is None:
        return [NO_CHAIN_HINT]
    texts = [status.chain_state(bpy.context, chain).text]
    line = status.status_line(chain)
    if line is not None:
        texts.append(line[1])
    return [*texts, *BUTTONS]


# --- reading the sidebar -------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower().replace("\u2019", "'"))


def found_whole(text: str, read: str) -> tuple[bool, float]:
    """Whether ``text`` is in the OCR'd ``read`` with all its words, in order (OCR may misread a
    letter: 90% of the characters of the words must match), and the last word there."""
    want, have = " ".join(tokens(text)), " ".join(tokens(read))
    matcher = difflib.SequenceMatcher(None, want, have, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    ratio = matched / max(1, len(want))
    last = tokens(text)[-1]
    return ratio >= 0.9 and last in have, ratio


ELLIPSIS = re.compile(r"\.\.|…|\u2026")


def cut_lines(read: str) -> list[str]:
    return [line for line in read.splitlines() if ELLIPSIS.search(line)]


def longest_run(line: str, text: str) -> int:
    """The most words ``line`` (before any "...") has in a row with ``text``."""
    a, b = tokens(ELLIPSIS.split(line)[0]), tokens(text)
    match = difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.size


def picture(path: str, sidebar, name: str) -> None:
    """The sidebar down to its last line of text, as a small PNG: picture-<state>.png."""
    x, y, w, h = ws.box_of(sidebar)
    words = ws.ocr_words(path, (x, y, w, h), f"{name}-picture-words")
    bottom = max((word_y for _, _, word_y in words), default=y + h - 20) + 18
    image = ws.crop(path, (x, y, w, int(min(bottom, y + h)) - y), f"picture-{name}")
    ws.shrink(image)


def check_sidebar(label: str, name: str, shows: bool, narrow: bool) -> None:
    _area, _region, sidebar, _ = ws.view3d()
    path = ws.shoot(label)
    read = ws.ocr(path, ws.box_of(sidebar), f"{label}-sidebar")
    if not shows:
        results.check(f"{label}: no Two-Bone IK tab", "bone ik" not in read.lower(), read)
        return
    if label == f"{name}-scale1":  # the picture of this state for the docs (tests/window/pictures.py)
        picture(path, sidebar, name)
    texts = promised_texts(name)
    if narrow:
        texts = [text for text in texts if text != NO_CHAIN_HINT]
    for text in texts:
        ok, ratio = found_whole(text, read)
        results.check(f"{label}: '{text}' whole on screen", ok, f"match {ratio:.2f} in:\n{read}")
    cut = cut_lines(read)
    if narrow:  # the reach line, the status and the buttons at least: a cut line that starts one
        cut = [line for line in cut if any(longest_run(line, text) >= 2 for text in texts)]
    results.check(f"{label}: nothing cut off with '...'", not cut, "\n".join(cut) + f"\nin:\n{read}")


# --- the overlay ---------------------------------------------------------------------------------

BLUE, ORANGE, GREY = "blue", "orange", "grey"


def colour_of(rgb) -> str | None:
    r, g, b = rgb
    if b > 170 and b > r + 60:
        return BLUE
    if r > 170 and r > b + 80 and r > g + 30:
        return ORANGE
    if max(rgb) - min(rgb) < 25 and min(rgb) > 110:
        return GREY
    return None


def project(point):
    area, region, *_ = ws.view3d()
    return ws.to_screen(region, location_3d_to_region_2d(region, area.spaces.active.region_3d, Vector(point)))


def overlay_differs(on: str, off: str, point, colour: str) -> tuple[bool, str]:
    """Whether the overlay drew ``colour`` within 3 px of screen ``point`` (compared with the same
    frame without the overlay)."""
    box = (point[0] - 3, point[1] - 3, 7, 7)
    drawn = [
        colour_of(a)
        for a, b in zip(ws.pixels(on, box), ws.pixels(off, box), strict=True)
        if max(map(abs, (x - y for x, y in zip(a, b, strict=True)))) > 20
    ]
    return colour in drawn, f"changed pixels' colours {drawn} at {point}"


def check_overlay(label: str, kind: str | None) -> None:
    _area, region, *_ = ws.view3d()
    wm = bpy.context.window_manager
    wm.two_bone_ik_show_overlay = False
    ws.redraw()
    off = ws.shoot(f"{label}-overlay-off")
    wm.two_bone_ik_show_overlay = True
    ws.redraw()
    on = ws.shoot(f"{label}-overlay-on")
    if kind is None:
        # The viewport without the regions that overlap it (tools, header, sidebar with the toggle).
        x, y, _w, h = ws.box_of(region)
        view = (x + 60, y + 60, ws.box_of(ws.view3d()[2])[0] - x - 80, h - 80)
        same = ws.pixels(on, view) == ws.pixels(off, view)
        results.check(f"{label}: the overlay draws nothing", same, "the viewport changed with the overlay on")
        return
    obj, chain = the_chain()
    if kind == "pose":  # the overlay reads the pose alone: blue where the end is on the target
        kind = "reach" if chain.shortfall < 1e-4 else "miss"
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    hip = evaluated.matrix_world @ evaluated.pose.bones[chain.upper_bone].head
    end = Vector(chain.end) if kind == "miss" else bpy.data.objects["Target"].matrix_world.translation
    colour = BLUE if kind == "reach" else ORANGE
    for where, fraction in (
        ("near the hip", 0.12),
        ("midway", 0.5),
        ("near the target" if kind == "reach" else "near the end", 0.88),
    ):
        point = project(hip.lerp(end, fraction))
        ok, detail = overlay_differs(on, off, point, colour)
        results.check(f"{label}: {colour} line {where}", ok, detail)
    if chain.pole is not None and "Pole is on" not in chain.status:  # else it lies on the reach line
        joint, pole = Vector(chain.joint), chain.pole.matrix_world.translation
        ok, detail = overlay_differs(on, off, project(joint.lerp(pole, 0.5)), GREY)
        results.check(f"{label}: grey line from the joint to the pole", ok, detail)


# --- the steps -----------------------------------------------------------------------------------


def frame_view() -> None:
    area, *_ = ws.view3d()
    rv3d = area.spaces.active.region_3d
    rv3d.view_perspective = "ORTHO"
    # Tilted, so that no line lies along a grid axis or an empty's axes.
    rv3d.view_rotation = Euler((math.radians(50), 0, math.radians(30))).to_quaternion()
    rv3d.view_location = (1.2, 0.9, 0.0)
    rv3d.view_distance = 6.0


def open_sidebar():
    area, _region, _sidebar, _ = ws.view3d()
    area.spaces.active.show_region_ui = True
    ws.redraw()
    yield 1.0


def drag_sidebar_edge(pixels: int):
    """Drag the sidebar's left edge ``pixels`` to the right (negative: to the left), with the mouse.
    The edge's grip lies a few pixels inside the region (where, Blender's version decides): the
    drag starts a little further in until the width changes."""
    sidebar = ws.view3d()[2]
    before = sidebar.width
    for inset in (2, 5, 8, 12, 16, 22, 30):
        x, y, _w, h = ws.box_of(sidebar)
        yield from ws.drag((x + inset, y + h // 2), (x + inset + pixels, y + h // 2))
        ws.redraw()
        yield 0.3
        _area, _region, sidebar, _ = ws.view3d()
        if abs(sidebar.width - before) > abs(pixels) // 2:
            break
    ws.log(f"sidebar edge grip {inset} px inside the region")
    results.check(
        f"the sidebar dragged to another width ({before} -> {sidebar.width} px)",
        abs(sidebar.width - before) > abs(pixels) // 2,
    )


def states_at(scale: float, narrow: bool, names, overlay: bool):
    bpy.context.preferences.view.ui_scale = scale
    yield 1.0
    for name in names:
        build, shows, kind = STATES[name]
        clear_scene()
        build()
        bpy.context.view_layer.update()
        bpy.context.view_layer.update()
        frame_view()
        ws.redraw()
        yield 0.3
        if shows:
            yield from ws.show_tab()
        label = f"{name}-scale{scale:g}" + ("-narrow" if narrow else "")
        check_sidebar(label, name, shows, narrow)
        if overlay:
            check_overlay(label, kind)
        yield 0.1


def menu_and_redo_panel():
    """Pose ▸ Two-Bone IK ▸ Add Two-Bone IK Chain with the mouse, then Add's redo panel."""
    clear_scene()
    obj = plain_armature("Leg")
    activate(obj, "POSE")
    bpy.ops.pose.select_all(action="DESELECT")
    ws.select_bone(obj.pose.bones["shin"])
    frame_view()
    ws.redraw()
    yield 0.5
    area = ws.view3d()[0]
    header = next(r for r in area.regions if r.type == "HEADER")
    path = ws.shoot("menu-0-header")
    words = ws.ocr_words(path, ws.box_of(header), "menu-0-header-crop")
    # The Pose menu, not the mode menu ("Pose Mode") left of it: the last "Pose".
    poses = [(x, y) for text, x, y in words if re.sub(r"\W", "", text).lower() == "pose"]
    pose = (int(poses[-1][0]), int(poses[-1][1])) if poses else None
    if not results.check("the 3D Viewport's header shows the Pose menu", pose is not None):
        return
    yield from ws.click(pose)
    entry = None
    for _attempt in range(4):  # until the menu is drawn
        yield 1.0
        path = ws.shoot("menu-1-pose")
        box = (max(0, pose[0] - 40), pose[1], 420, 1000 - pose[1])
        words = ws.ocr_words(path, box, "menu-1-pose-crop")
        entry = ws.find_phrase(words, "two", "bone")
        if entry is not None:
            break
    if not results.check("Pose ▸ Two-Bone IK is in the Pose menu", entry is not None, str(words)):
        ws.xdotool("key", "Escape")
        return
    yield from ws.click(entry)  # a click opens a submenu at once (a hover waits for a timer)
    add = None
    for _attempt in range(4):  # until the submenu is drawn
        yield 1.0
        path = ws.shoot("menu-2-two-bone-ik")
        box = (entry[0], max(0, entry[1] - 400), 600, 800)
        words = ws.ocr_words(path, box, "menu-2-two-bone-ik-crop")
        add = ws.find_word(words, "Chain")
        if add is not None:
            break
    if not results.check(
        "Two-Bone IK ▸ Add Two-Bone IK Chain is in the submenu", add is not None, str(words)
    ):
        ws.xdotool("key", "Escape", "Escape")
        return
    yield from ws.click(add)
    yield 1.5
    results.check(
        "the menu entry added a chain", len(obj.two_bone_ik.chains) == 1, str(len(obj.two_bone_ik.chains))
    )
    ws.redraw()
    yield 0.5
    ws.redraw()  # the redo panel takes its size from the draw before
    yield 0.5
    hud = ws.view3d()[3]
    if not results.check("Add's redo panel is shown", hud is not None and hud.width > 1):
        return
    path = ws.shoot("redo-panel")
    read = ws.ocr(path, ws.box_of(hud), "redo-panel-crop")
    if "mirror" not in read.lower():  # collapsed: open it with a click on its title
        words = ws.ocr_words(path, ws.box_of(hud), "redo-panel-title")
        title = ws.find_word(words, "Add") or ws.find_word(words, "Chain")
        if title:
            yield from ws.click(title)
            yield 1.0
            hud = ws.view3d()[3]
            path = ws.shoot("redo-panel")
            read = ws.ocr(path, ws.box_of(hud), "redo-panel-crop")
    for text in ("Mirror", "Controls", "Constraint Position"):
        ok, _ratio = found_whole(text, read)
        results.check(f"redo panel: '{text}' whole on screen", ok, read)
    results.check("redo panel: nothing cut off with '...'", not cut_lines(read), read)
    words = ws.ocr_words(path, ws.box_of(hud), "redo-panel-words")
    mirror = ws.find_word(words, "Mirror")
    if results.check("redo panel: Mirror found", mirror is not None, str(words)):
        yield from ws.click(mirror)
        yield 2.0
        last = bpy.context.window_manager.operators[-1]
        results.check(
            "a click in the redo panel redid Add with Mirror on",
            last.bl_idname == "POSE_OT_two_bone_ik_add" and last.properties.mirror,
            last.bl_idname,
        )


def snap_and_bake():
    """The Snap and Bake buttons of the sidebar, clicked."""
    clear_scene()
    obj = leg()
    activate(obj, "POSE")
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 5
    frame_view()
    ws.redraw()
    yield 0.5
    yield from ws.show_tab()
    _area, _region, sidebar, _ = ws.view3d()
    for label, word_index, idname in (
        ("Snap IK to FK", 0, "snap_ik_to_fk"),
        ("Snap FK to IK", 1, "snap_fk_to_ik"),
    ):
        path = ws.shoot(f"button-{idname}")
        words = ws.ocr_words(path, ws.box_of(sidebar), f"button-{idname}-words")
        snaps = [(x, y) for text, x, y in words if re.sub(r"\W", "", text).lower() == "snap"]
        if not results.check(f"the sidebar shows '{label}'", len(snaps) > word_index, str(words)):
            continue
        snaps.sort()
        yield from ws.click(snaps[word_index])
        yield 1.5
        last = (
            bpy.context.window_manager.operators[-1].bl_idname if bpy.context.window_manager.operators else ""
        )
        results.check(f"a click on '{label}' ran it", last == f"POSE_OT_two_bone_ik_{idname}", last)
    path = ws.shoot("button-bake")
    bake = ws.find_word(ws.ocr_words(path, ws.box_of(sidebar), "button-bake-words"), "Bake")
    if not results.check("the sidebar shows 'Bake Two-Bone IK'", bake is not None):
        return
    yield from ws.click(bake)
    for _ in range(30):
        yield 1.0
        operators = bpy.context.window_manager.operators
        if operators and operators[-1].bl_idname == "POSE_OT_two_bone_ik_bake":
            break
    last = bpy.context.window_manager.operators[-1].bl_idname
    action = obj.animation_data.action if obj.animation_data else None
    results.check(
        "a click on 'Bake Two-Bone IK' baked the chain",
        last == "POSE_OT_two_bone_ik_bake" and action is not None,
        last,
    )


def steps():
    prefs = bpy.context.preferences
    enabled = ws.MODULE in {addon.module for addon in prefs.addons}
    if not results.check("the extension installed from its zip is enabled", enabled):
        return
    yield from open_sidebar()
    _area, region, *_ = ws.view3d()
    ws.xdotool("mousemove", *map(str, ws.to_screen(region, (region.width // 2, region.height // 2))))
    yield from states_at(1.0, False, list(STATES), overlay=True)
    yield from states_at(1.5, False, list(STATES), overlay=False)
    yield from drag_sidebar_edge(90)
    yield from states_at(1.5, True, NARROW_STATES, overlay=False)
    yield from states_at(1.0, True, NARROW_STATES, overlay=False)
    yield from drag_sidebar_edge(-90)
    bpy.context.preferences.view.ui_scale = 1.0
    yield from menu_and_redo_panel()
    yield from snap_and_bake()


def finish(error) -> None:
    results.write(error)


bpy.context.preferences.view.show_splash = False  # here: the splash opens after the script
os.makedirs(ws.OUT, exist_ok=True)
ws.run_steps(steps(), finish)

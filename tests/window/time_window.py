# SPDX-License-Identifier: GPL-3.0-or-later
"""The interface's cost per redraw, in a real window: run by ``bash tools/window.sh --timing``.

A Rigify human generated in this Blender, "Rigify Limbs on Two-Bone IK" (four chains), the left
foot's IK control selected in Pose Mode, the sidebar open on the Two-Bone IK tab, the overlay on.
Before each redraw the foot moves by 2 mm (and back) and the depsgraph is updated, as while an
animator drags it. Timed, per redraw: the panel's ``draw`` plus every chain row's ``draw_item``
(the registered classes' methods, wrapped at run time; a row the panel's ``template_list`` draws
is in the panel's time once), and the overlay's draw callback (the
module's ``_draw``, put in a handler of its own). Three runs of 20 redraws; each run's median,
and the median of the three, in milliseconds. A benchmark, never a test: it prints and writes the
numbers ($TWO_BONE_IK_WINDOW_OUT/timing.txt, timing.json) and fails only when it cannot measure.
"""

from __future__ import annotations

import importlib
import json
import os
import statistics
import sys
import time

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import window_support as ws

RUNS, REDRAWS, STEP = 3, 20, 0.002
FOOT = "foot_ik.L"
spent = {"panel": 0.0, "overlay": 0.0}
calls = {"panel": 0, "overlay": 0}


errors: list[str] = []


running: set[str] = set()


def timed(kind: str, function):
    def wrapper(*arguments, **keywords):
        if kind in running:  # a row drawn by the panel's template_list: in the panel's time already
            return function(*arguments, **keywords)
        running.add(kind)
        start = time.perf_counter()
        try:
            return function(*arguments, **keywords)
        except Exception as error:  # a broken measurement must not pass
            errors.append(f"{kind}: {error!r}")
            raise
        finally:
            spent[kind] += time.perf_counter() - start
            calls[kind] += 1
            running.discard(kind)

    return wrapper


def wrap_interface() -> None:
    """Time the panel, the chain list's rows and the overlay's callback, whatever their code is.
    Blender passes a registered method as many arguments as its own code declares, so the
    wrappers of the methods declare the same ones."""
    panel = bpy.types.VIEW3D_PT_two_bone_ik
    draw = timed("panel", panel.draw)

    def panel_draw(self, context):
        return draw(self, context)

    panel.draw = panel_draw
    chain_list = bpy.types.POSE_UL_two_bone_ik_chains
    draw_item = timed("panel", chain_list.draw_item)

    def list_draw_item(
        self, context, layout, data, item, icon, active_data, active_property, index=0, flt_flag=0
    ):
        return draw_item(
            self, context, layout, data, item, icon, active_data, active_property, index, flt_flag
        )

    chain_list.draw_item = list_draw_item
    overlay = importlib.import_module(f"{ws.MODULE}.ui.overlay")
    overlay.remove_draw_handler()  # the registered handler holds the original function
    bpy.types.SpaceView3D.draw_handler_add(timed("overlay", overlay._draw), (), "WINDOW", "POST_VIEW")


def steps():
    import blender_rig

    bpy.context.preferences.view.ui_scale = 1.0
    area, region, *_ = ws.view3d()
    with ws.override(area, region):  # operators from a timer need the window's context
        rig = blender_rig.generate_rigify_human(in_this_file=True)
    with ws.override(area, region):
        assert bpy.ops.pose.two_bone_ik_rigify_limbs() == {"FINISHED"}
    chains = len(rig.two_bone_ik.chains)
    with ws.override(area, region):
        bpy.ops.object.mode_set(mode="POSE")
        bpy.ops.pose.select_all(action="DESELECT")
    foot = rig.pose.bones[FOOT]
    ws.select_bone(foot)
    bpy.context.window_manager.two_bone_ik_show_overlay = True
    area.spaces.active.show_region_ui = True
    rv3d = area.spaces.active.region_3d
    rv3d.view_location, rv3d.view_distance = (0, 0, 1), 3.5
    ws.redraw()
    yield 1.0
    yield from ws.show_tab()
    wrap_interface()
    ws.redraw()
    ws.shoot("timing-window")
    runs = []
    for _ in range(RUNS):
        per_redraw = []
        for index in range(REDRAWS):
            foot.location.x += STEP if index % 2 == 0 else -STEP
            bpy.context.view_layer.update()
            for kind in spent:
                spent[kind], calls[kind] = 0.0, 0
            ws.redraw()
            per_redraw.append(dict(spent) | {f"{kind} calls": calls[kind] for kind in calls})
        runs.append(per_redraw)
        yield 0.2
    if errors or not all(run[-1]["panel calls"] and run[-1]["overlay calls"] for run in runs):
        raise RuntimeError(f"the interface was not drawn and timed in every redraw: {errors[:3]}")
    medians = {
        kind: [statistics.median(redraw[kind] for redraw in run) * 1000 for run in runs]
        for kind in ("panel", "overlay")
    }
    total = [statistics.median((r["panel"] + r["overlay"]) for r in run) * 1000 for run in runs]
    lines = [
        f"Blender {bpy.app.version_string}: a Rigify human, {chains} chains, {FOOT} selected, sidebar on "
        f"the Two-Bone IK tab, overlay on; {RUNS} runs of {REDRAWS} redraws, the foot moved "
        f"{STEP * 1000:g} mm "
        "and the depsgraph updated before each",
        "per redraw, ms: median of each run (median of the runs)",
    ]
    for kind, values in (*medians.items(), ("panel + overlay", total)):
        lines.append(
            f"  {kind:16s} {', '.join(f'{v:.2f}' for v in values)}  ({statistics.median(values):.2f})"
        )
    floor = yield from layout_alone(rig)
    if floor is not None:
        lines.append(f"  exp: the panel's layout alone, every readout a constant: {floor:.2f}")
    calls_line = {kind: runs[-1][-1][f"{kind} calls"] for kind in spent}
    lines.append(
        f"  calls per redraw: panel draw + list rows {calls_line['panel']}, overlay {calls_line['overlay']}"
    )
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(ws.OUT, "timing.txt"), "w") as file:
        file.write(text)
    with open(os.path.join(ws.OUT, "timing.json"), "w") as file:
        json.dump(
            {"blender": bpy.app.version_string, "chains": chains, "ms": medians, "total_ms": total}, file
        )


def layout_alone(rig):
    """Experiment, after the timed runs: the panel with the active chain's summary and the rows'
    icons constants (the floor: what building its layout costs whatever the readouts cost); the
    median ms of the panel per redraw, or None where this code has no such readouts to replace."""
    try:
        panel = importlib.import_module(f"{ws.MODULE}.ui.panel")
        shortfall = importlib.import_module(f"{ws.MODULE}.chain.shortfall")
    except ImportError:
        return None
    settings = rig.two_bone_ik
    constant = shortfall.summary(settings.chains[settings.active_chain_index])
    summary, row_icon = shortfall.summary, panel.row_icon
    shortfall.summary, panel.row_icon = (lambda chain: constant), (lambda chain: "CHECKMARK")
    foot, per_redraw = rig.pose.bones[FOOT], []
    try:
        for index in range(REDRAWS):
            foot.location.x += STEP if index % 2 == 0 else -STEP
            bpy.context.view_layer.update()
            spent["panel"] = 0.0
            ws.redraw()
            per_redraw.append(spent["panel"])
        yield 0.2
    finally:
        shortfall.summary, panel.row_icon = summary, row_icon
    return statistics.median(per_redraw) * 1000


def finish(error) -> None:
    if error:
        print(error)
        with open(os.path.join(ws.OUT, "timing-error.txt"), "w") as file:
            file.write(error)


bpy.context.preferences.view.show_splash = False
os.makedirs(ws.OUT, exist_ok=True)
ws.run_steps(steps(), finish)

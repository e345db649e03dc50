# SPDX-License-Identifier: GPL-3.0-or-later
"""Interface benchmark: the Python the sidebar panel and the viewport overlay run per redraw, in
real Blender (the bpy module), ours beside an earlier commit's in one process, interleaved.

**Rigs.** ``leg``: a small leg with one chain (tests/support ``base_rig``). ``rigify``: a human
generated from Rigify's Human metarig with the operator Rigify Limbs on Two-Bone IK (four chains),
its left foot control the active bone. Each in a scene of its own.

**What is timed, per redraw.** Before each, the foot control (the leg's target) moves a millimetre
and the view layer is updated, as in a drag; then, each timed alone:
- ``overlay``: the overlay's lines (``ui.overlay.overlay_lines``, all the Python of its draw
  callback but the GPU calls, which the bpy module cannot make);
- ``panel``: the panel's poll and draw into a real ``UILayout`` (a popup's, as tests/blender/test_ui.py
  draws it), whose ``template_list`` draws a row per chain with the registered list, ours. The
  earlier commit's rows are drawn by its own ``draw_item`` too, so its figure also holds our rows
  (about 0.1 ms on the Rigify human);
- ``update``: one ``view_layer.update()`` of the whole rig, for scale.
**Experiment** (``exp: layout alone``): our panel with its readouts replaced by constants, the
floor of what the panel's layout costs in Python whatever the readouts cost.

Medians of ``--repeats`` x ``--redraws`` redraws, in microseconds; the goal is at most 1 ms of the
extension's Python per redraw (panel + overlay) on the Rigify human.

**Before** (``--before REV``, default ``405f180``, the interface as it was before it was made
cheap): that commit's ``ui`` and ``chain`` code imported from its own tree (``git archive``) as a
package beside ours and drawn into the same layouts, interleaved with ours. It reads the chains'
properties registered by ours, whose getters work the status out in full outside a draw, as that
commit's did.

Writes bench/results/interface.json. Run: ``.venv/bin/python bench/interface.py [--repeats R]
[--redraws N] [--before REV|none]`` (after ``bash tools/test.sh`` made the venv).
"""

from __future__ import annotations

import argparse
import importlib
import io
import json
import pathlib
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import types

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))

import bpy  # noqa: E402
from blender_rig import base_rig, enable_extension, generate_rigify_human, package  # noqa: E402

FOOT = "foot_ik.L"
STEP = 0.001
GOAL_MS = 1.0
EXPERIMENT = "exp: layout alone"


def import_before(revision: str):
    """The package of ``revision``'s tree (its ``ui`` and ``chain``), imported under another name
    and not registered; None when the revision is not in this clone."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", revision], check=True, capture_output=True
        ).stdout
    except subprocess.CalledProcessError:
        return None
    folder = pathlib.Path(tempfile.mkdtemp(prefix="two_bone_ik_before_"))
    name = "two_bone_ik_before"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder / name, filter="data")
    sys.path.insert(0, str(folder))
    # The package's __init__ registers nothing at import; its submodules are imported one by one.
    return types.SimpleNamespace(
        overlay=importlib.import_module(f"{name}.ui.overlay"),
        panel=importlib.import_module(f"{name}.ui.panel"),
    )


def rigify_scene():
    """The Rigify human with its four limbs on chains, in Pose Mode, the left foot control active."""
    rig = generate_rigify_human()
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    assert bpy.ops.pose.two_bone_ik_rigify_limbs() == {"FINISHED"}
    bpy.ops.object.mode_set(mode="OBJECT")
    rig.data.bones.active = rig.data.bones[FOOT]
    return bpy.context.scene, rig, rig.pose.bones[FOOT]


def leg_scene():
    """The small leg with one chain, in a scene of its own; its target moves."""
    scene = bpy.data.scenes.new("Leg")
    bpy.context.window.scene = scene
    obj, _ = base_rig()
    return scene, obj, obj.two_bone_ik.chains[0].target


class Drawer:
    """Draws one version's panel and list rows into a popup's real layout (popups are never ended:
    ending one crashes background Blender; the bench leaks one per draw)."""

    def __init__(self, modules, obj) -> None:
        self.modules, self.obj = modules, obj
        window = bpy.context.window_manager.windows[0]
        area = next(area for area in window.screen.areas if area.type == "VIEW_3D")
        region = next(region for region in area.regions if region.type == "UI")
        self.override = {
            "window": window,
            "area": area,
            "region": region,
            "object": obj,
            "active_object": obj,
        }
        self.prepare()

    def prepare(self) -> None:
        """A new popup for the next draw (untimed): one layout drawn into again and again grows,
        and each draw into it costs more."""
        with bpy.context.temp_override(**self.override):
            self.popup = bpy.context.window_manager.popmenu_begin__internal("bench")

    def panel(self) -> None:
        panel, chain_list = (
            self.modules.panel.VIEW3D_PT_two_bone_ik,
            self.modules.panel.POSE_UL_two_bone_ik_chains,
        )
        with bpy.context.temp_override(**self.override):
            context = bpy.context
            if not panel.poll(context):
                raise RuntimeError("the panel does not poll")
            layout = self.popup.layout.column()
            panel.draw(types.SimpleNamespace(layout=layout), context)
            if self.modules.panel is package().ui.panel:
                return  # its template_list drew the rows with the registered list: ours
            settings = self.obj.two_bone_ik
            row_self = types.SimpleNamespace(layout_type="DEFAULT")
            for item in settings.chains:
                chain_list.draw_item(
                    row_self, context, layout.row(), settings, item, 0, settings, "active_chain_index"
                )

    def overlay(self) -> None:
        self.modules.overlay.overlay_lines(bpy.context)


class LayoutAlone(Drawer):
    """Experiment: our panel with every readout a constant (the status, the rows' icons), to show
    the floor, what building its layout costs; and no overlay."""

    def __init__(self, modules, obj) -> None:
        super().__init__(modules, obj)
        settings = obj.two_bone_ik
        self.constant = package().chain.shortfall.summary(settings.chains[settings.active_chain_index])

    def panel(self) -> None:
        shortfall, panel = package().chain.shortfall, package().ui.panel
        summary, row_icon = shortfall.summary, panel.row_icon
        shortfall.summary, panel.row_icon = (lambda chain: self.constant), (lambda chain: "CHECKMARK")
        try:
            super().panel()
        finally:
            shortfall.summary, panel.row_icon = summary, row_icon

    def overlay(self) -> None:
        pass


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return (time.perf_counter() - start) * 1e6


def measure(scene, moved, drawers: dict, repeats: int, redraws: int) -> dict:
    """{version: {part: median microseconds}} over repeats x redraws, versions and parts interleaved."""
    bpy.context.window.scene = scene
    samples: dict = {version: {"panel": [], "overlay": []} for version in drawers}
    samples["update"] = {"update": []}
    sign = 1.0
    for _ in range(repeats):
        for _ in range(redraws):
            for version, drawer in drawers.items():
                for part in ("panel", "overlay"):
                    sign = -sign
                    moved.location.x += sign * STEP
                    samples["update"]["update"].append(timed(bpy.context.view_layer.update))
                    drawer.prepare()
                    samples[version][part].append(timed(getattr(drawer, part)))
    return {
        version: {part: statistics.median(values) for part, values in parts.items()}
        for version, parts in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--redraws", type=int, default=20)
    parser.add_argument(
        "--before", default="405f180", help="an earlier commit to time beside ours, or 'none'"
    )
    args = parser.parse_args(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:])

    enable_extension(REPO)
    ours = types.SimpleNamespace(overlay=package().ui.overlay, panel=package().ui.panel)
    before = None if args.before == "none" else import_before(args.before)
    if args.before != "none" and before is None:
        print(f"--before {args.before}: not in this clone, timed ours alone")
    rigs = {"rigify": rigify_scene(), "leg": leg_scene()}
    results: dict = {}
    for name, (scene, obj, moved) in rigs.items():
        bpy.context.window.scene = scene
        drawers = {"ours": Drawer(ours, obj)}
        if before is not None:
            drawers[args.before] = Drawer(before, obj)
        drawers[EXPERIMENT] = LayoutAlone(ours, obj)
        for drawer in drawers.values():  # warm-up: first draws build caches on both sides
            drawer.panel()
            drawer.overlay()
        results[name] = measure(scene, moved, drawers, args.repeats, args.redraws)

    title = (
        f"Interface per redraw, Blender {bpy.app.version_string}, medians of {args.repeats} x {args.redraws}"
    )
    print(f"\n{title}")
    print(f"{'rig':8} {'version':18} {'panel ms':>9} {'overlay ms':>11} {'both ms':>8}  update ms")
    for name, versions in results.items():
        update = versions["update"]["update"] / 1e3
        for version, parts in versions.items():
            if version == "update":
                continue
            panel, overlay = parts["panel"] / 1e3, parts["overlay"] / 1e3
            print(f"{name:8} {version:18} {panel:9.3f} {overlay:11.3f} {panel + overlay:8.3f}  {update:.3f}")
    both = sum(results["rigify"]["ours"].values()) / 1e3
    verdict = "met" if both <= GOAL_MS else "missed"
    print(f"goal: at most {GOAL_MS} ms per redraw on the Rigify human: {both:.3f} ms, {verdict}")
    out = REPO / "bench" / "results" / "interface.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "blender": bpy.app.version_string,
                "machine": platform.machine(),
                "repeats": args.repeats,
                "redraws": args.redraws,
                "before": args.before,
                "microseconds": results,
            },
            indent=1,
        )
    )
    print(f"wrote {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()

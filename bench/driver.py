# SPDX-License-Identifier: GPL-3.0-or-later
"""Driver benchmark: our chains against Blender's own IK constraint, in real Blender (bpy module).

For N = 1, 10, 100, 500 armatures with one chain each, every target is moved and one
``view_layer.update()`` is timed (median of many), first for N chains driven by this extension,
then for the same N armatures driven by Blender's IK constraint (chain count 2, pole target).
Prints microseconds per chain for both and their ratio, and writes bench/results/driver.json.

Run: ``.venv/bin/python bench/driver.py [--repeats R]`` (after ``bash tools/test.sh`` made the venv).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="two_bone_ik_bench_"))
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(os.environ["BLENDER_USER_RESOURCES"], "cache"))

import bpy  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "blender"))
from blender_rig import enable_extension, package  # noqa: E402

SIZES = (1, 10, 100, 500)


def build_rigs(count: int, native: bool) -> list[bpy.types.Object]:
    """``count`` leg armatures in a grid, each with a target and pole empty; returns the targets."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    data = bpy.data.armatures.new("Leg")
    template = bpy.data.objects.new("Template", data)
    scene.collection.objects.link(template)
    bpy.context.view_layer.objects.active = template
    with bpy.context.temp_override(active_object=template, object=template):
        bpy.ops.object.mode_set(mode="EDIT")
        thigh = data.edit_bones.new("thigh")
        thigh.head, thigh.tail = (0, 0, 1), (0, -0.05, 0.5)
        shin = data.edit_bones.new("shin")
        shin.head, shin.tail, shin.parent, shin.use_connect = (0, -0.05, 0.5), (0, 0, 0), thigh, True
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.data.objects.remove(template)
    targets = []
    for index in range(count):
        offset = (index % 25 * 2.0, index // 25 * 2.0, 0.0)
        obj = bpy.data.objects.new(f"Leg{index}", data)
        obj.location = offset
        scene.collection.objects.link(obj)
        target = bpy.data.objects.new(f"Target{index}", None)
        target.location = (offset[0], offset[1] + 0.2, 0.1)
        pole = bpy.data.objects.new(f"Pole{index}", None)
        pole.location = (offset[0], offset[1] - 1.0, 0.5)
        scene.collection.objects.link(target)
        scene.collection.objects.link(pole)
        targets.append(target)
        bpy.context.view_layer.update()
        if native:
            constraint = obj.pose.bones["shin"].constraints.new("IK")
            constraint.target, constraint.pole_target, constraint.chain_count = target, pole, 2
        else:
            chain = obj.two_bone_ik.chains.add()
            chain.name, chain.upper_bone, chain.lower_bone = "shin", "thigh", "shin"
            chain.target, chain.pole = target, pole
            package().driver.mechanism.build(obj, obj.two_bone_ik.chains)  # shared bones: made once
    bpy.context.view_layer.update()
    return targets


def time_updates(targets, repeats: int) -> float:
    """Median seconds of one view_layer.update() after moving every target."""
    update = bpy.context.view_layer.update
    samples = []
    for step in range(repeats):
        shift = 0.1 if step % 2 else -0.1
        for target in targets:
            target.location.x += shift
        start = time.perf_counter()
        update()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=41, help="timed updates per size (median taken)")
    parser.add_argument("--output", type=pathlib.Path, default=REPO / "bench" / "results" / "driver.json")
    args = parser.parse_args()
    enable_extension(REPO)
    rows = []
    print(f"{'chains':>7} {'native us/chain':>16} {'ours us/chain':>14} {'ratio':>6}")
    for count in SIZES:
        native = time_updates(build_rigs(count, native=True), args.repeats) / count * 1e6
        ours = time_updates(build_rigs(count, native=False), args.repeats) / count * 1e6
        rows.append(
            {
                "chains": count,
                "native_us_per_chain": native,
                "ours_us_per_chain": ours,
                "ratio": ours / native,
            }
        )
        print(f"{count:>7} {native:>16.2f} {ours:>14.2f} {ours / native:>6.2f}")
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), ""
    )
    result = {
        "what": "median time of one view_layer.update() after moving every target, per chain",
        "blender": bpy.app.version_string,
        "python": platform.python_version(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "repeats": args.repeats,
        "rows": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

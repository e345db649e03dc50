# SPDX-License-Identifier: GPL-3.0-or-later
"""Driver benchmark: our chains against Blender's IK constraint and against the cost floor, in real
Blender (the bpy module), measured side by side in one process.

Each size N is built three times, each in a scene of its own, from the same leg (thigh and shin,
a target and a pole empty per chain):

- ``native``: Blender's IK constraint on each shin (chain count 2, pole target).
- ``ours``: the extension's chains with their mechanism (mechanism bones, constraints, drivers).
- ``floor``: the same mechanism with the extension's handlers taken out and a handler that writes
  two constant ``matrix_basis`` per chain into the mechanism bones instead: what Blender spends
  re-evaluating what the driver writes, with no Python reading or solving. No driver of this
  design can be cheaper.

Two layouts: ``separate`` (one armature object and armature per chain) and ``one armature`` (all N
legs in one armature). Each repetition moves every target and times one ``view_layer.update()`` of
each variant's scene, the variants in shuffled order (interleaved, so machine noise hits all
three alike). Reported: the median microseconds per chain and the ratios ours/native, ours/floor,
floor/native.

Two more checks:
- ``character``: one 2,000-bone armature with two leg chains (bound by the floor: the other bones
  are re-evaluated whenever the driver writes the armature).
- ``scene size``: a scene of 10,000 unrelated empties and one rig with two chains; an unrelated
  empty moves and the update is timed with the extension's handlers in and out (ratio; the goal
  is at most 1.05).

Writes bench/results/driver.json. Run: ``.venv/bin/python bench/driver.py [--repeats R] [--sizes ...]``
(after ``bash tools/test.sh`` made the venv).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import random
import statistics
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
os.environ.setdefault("BLENDER_USER_RESOURCES", tempfile.mkdtemp(prefix="two_bone_ik_bench_"))
os.environ.setdefault("XDG_CACHE_HOME", os.path.join(os.environ["BLENDER_USER_RESOURCES"], "cache"))

import bpy  # noqa: E402
from mathutils import Matrix  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "blender"))
from blender_rig import enable_extension, package  # noqa: E402

SIZES = (1, 10, 100, 500, 2000)
VARIANTS = ("native", "ours", "floor")
THIGH = ((0.0, 0.0, 1.0), (0.0, -0.05, 0.5))
SHIN = ((0.0, -0.05, 0.5), (0.0, 0.0, 0.0))
SPACING = 2.0


def edit(obj):
    """Context manager: ``obj`` in Edit Mode (made the active object of the window's scene)."""
    return _Edit(obj)


class _Edit:
    def __init__(self, obj) -> None:
        self.obj = obj

    def __enter__(self):
        bpy.context.window.scene = self.obj.users_scene[0]
        bpy.context.view_layer.objects.active = self.obj
        with bpy.context.temp_override(active_object=self.obj, object=self.obj):
            bpy.ops.object.mode_set(mode="EDIT")
        return self.obj.data.edit_bones

    def __exit__(self, *exc) -> None:
        with bpy.context.temp_override(active_object=self.obj, object=self.obj):
            bpy.ops.object.mode_set(mode="OBJECT")


def add_leg(bones, suffix: str, offset) -> None:
    thigh = bones.new(f"thigh{suffix}")
    thigh.head = [a + b for a, b in zip(THIGH[0], offset, strict=True)]
    thigh.tail = [a + b for a, b in zip(THIGH[1], offset, strict=True)]
    shin = bones.new(f"shin{suffix}")
    shin.head, shin.parent, shin.use_connect = thigh.tail, thigh, True
    shin.tail = [a + b for a, b in zip(SHIN[1], offset, strict=True)]


def grid(index: int) -> tuple[float, float, float]:
    return (index % 40 * SPACING, index // 40 * SPACING, 0.0)


def add_empties(scene, offset, name: str):
    target = bpy.data.objects.new(f"Target {name}", None)
    target.location = (offset[0], offset[1] + 0.2, offset[2] + 0.1)
    pole = bpy.data.objects.new(f"Pole {name}", None)
    pole.location = (offset[0], offset[1] - 1.0, offset[2] + 0.5)
    scene.collection.objects.link(target)
    scene.collection.objects.link(pole)
    return target, pole


def add_chains(obj, chains) -> None:
    """(suffix, target, pole) per chain: native IK constraints, or chains with their mechanism."""
    for suffix, target, pole in chains:
        item = obj.two_bone_ik.chains.add()
        item.name, item.upper_bone, item.lower_bone = f"leg{suffix}", f"thigh{suffix}", f"shin{suffix}"
        item.target, item.pole = target, pole
    package().driver.mechanism.build(obj, obj.two_bone_ik.chains)


def add_native(obj, chains) -> None:
    for suffix, target, pole in chains:
        constraint = obj.pose.bones[f"shin{suffix}"].constraints.new("IK")
        constraint.target, constraint.pole_target, constraint.chain_count = target, pole, 2


class Rigs:
    """One variant's scene: its armatures and the targets each update moves."""

    def __init__(self, variant: str, scene) -> None:
        self.variant, self.scene = variant, scene
        self.armatures: list = []
        self.targets: list = []
        self.mechanism: list[tuple] = []  # floor: (pose bones, two constant bases) per chain


def build(variant: str, count: int, layout: str, extra_bones: int = 0) -> Rigs:
    """``count`` chains of ``variant`` in a new scene, in ``layout`` ("separate" or "one armature");
    ``extra_bones`` more bones in a chain of its own (the character)."""
    scene = bpy.data.scenes.new(f"{variant} {layout} {count}")
    rigs = Rigs(variant, scene)
    if layout == "separate":
        template_obj = bpy.data.objects.new("Template", bpy.data.armatures.new("Leg"))
        scene.collection.objects.link(template_obj)
        with edit(template_obj) as bones:
            add_leg(bones, "", (0.0, 0.0, 0.0))
        if variant != "native":
            add_chains(template_obj, [("", None, None)])  # the mechanism bones, then copied
        data = template_obj.data
        bpy.data.objects.remove(template_obj)
        legs = []
        for index in range(count):
            obj = bpy.data.objects.new(f"Leg {index}", data.copy())
            obj.location = grid(index)
            scene.collection.objects.link(obj)
            legs.append((obj, *add_empties(scene, grid(index), str(index))))
        scene.view_layers[0].update()  # gives the new objects their pose
        for obj, target, pole in legs:
            rigs.armatures.append(obj)
            rigs.targets.append(target)
            (add_native if variant == "native" else add_chains)(obj, [("", target, pole)])
    else:
        obj = bpy.data.objects.new("Legs", bpy.data.armatures.new("Legs"))
        scene.collection.objects.link(obj)
        chains = []
        with edit(obj) as bones:
            for index in range(count):
                add_leg(bones, f".{index}", grid(index))
            parent = None
            for index in range(extra_bones):  # a tree of small bones, as fingers and face
                bone = bones.new(f"extra.{index}")
                bone.head, bone.tail = (-1.0, 0.01 * index, 1.0), (-1.0, 0.01 * index, 1.05)
                bone.parent = parent if index % 20 else None
                parent = bone
        for index in range(count):
            target, pole = add_empties(scene, grid(index), str(index))
            chains.append((f".{index}", target, pole))
            rigs.targets.append(target)
        (add_native if variant == "native" else add_chains)(obj, chains)
        rigs.armatures.append(obj)
    if variant == "floor":
        for obj in rigs.armatures:
            for chain in obj.two_bone_ik.chains:
                names = package().driver.mechanism.mechanism_bones(obj, chain)
                bases = (Matrix.Rotation(0.3, 4, "X"), Matrix.Rotation(-0.6, 4, "X"))
                rigs.mechanism.append((obj, names, bases))
    scene.view_layers[0].update()
    return rigs


def floor_handler(rigs: Rigs):
    def write_constants(scene, depsgraph=None) -> None:
        if scene != rigs.scene:
            return
        for obj, names, bases in rigs.mechanism:
            pose_bones = obj.pose.bones
            for name, basis in zip(names, bases, strict=True):
                pose_bones[name].matrix_basis = basis

    return write_constants


class Handlers:
    """Swap the extension's handlers for a variant's: none for native, the floor's for floor."""

    def __init__(self) -> None:
        handlers = package().driver.handlers
        self.ours: list[tuple[list, object]] = [
            (bpy.app.handlers.depsgraph_update_post, handlers.two_bone_ik_depsgraph_update_post),
            (bpy.app.handlers.frame_change_post, handlers.two_bone_ik_frame_change_post),
        ]

    def use(self, variant: str, floor=None) -> None:
        for handler_list, function in self.ours:
            if function in handler_list:
                handler_list.remove(function)
        for function in list(bpy.app.handlers.depsgraph_update_post):
            if getattr(function, "__name__", "") == "write_constants":
                bpy.app.handlers.depsgraph_update_post.remove(function)
        if variant == "ours":
            for handler_list, function in self.ours:
                handler_list.append(function)
        elif variant == "floor" and floor is not None:
            bpy.app.handlers.depsgraph_update_post.append(floor)


def time_update(rigs: Rigs, step: int) -> float:
    shift = 0.1 if step % 2 else -0.1
    for target in rigs.targets:
        target.location.x += shift
    update = rigs.scene.view_layers[0].update
    start = time.perf_counter()
    update()
    return time.perf_counter() - start


def compare(
    all_rigs: dict[str, Rigs], repeats: int, rng: random.Random, handlers: Handlers
) -> dict[str, float]:
    """Median seconds per update of each variant, interleaved in shuffled order."""
    floors = {name: floor_handler(rigs) for name, rigs in all_rigs.items() if rigs.variant == "floor"}
    samples: dict[str, list[float]] = {name: [] for name in all_rigs}
    for step in range(repeats + 2):
        order = list(all_rigs)
        rng.shuffle(order)
        for name in order:
            handlers.use(all_rigs[name].variant, floors.get(name))
            elapsed = time_update(all_rigs[name], step)
            if step >= 2:  # two warm-up rounds
                samples[name].append(elapsed)
    handlers.use("ours")
    return {name: statistics.median(values) for name, values in samples.items()}


def row(label: str, chains: int, medians: dict[str, float]) -> dict:
    per_chain = {name: medians[name] / chains * 1e6 for name in VARIANTS}
    result = {
        "layout": label,
        "chains": chains,
        **{f"{name}_us_per_chain": value for name, value in per_chain.items()},
        "ours_to_native": per_chain["ours"] / per_chain["native"],
        "ours_to_floor": per_chain["ours"] / per_chain["floor"],
        "floor_to_native": per_chain["floor"] / per_chain["native"],
    }
    print(
        f"{label:>13} {chains:>6}"
        + "".join(f" {per_chain[name]:>9.1f}" for name in VARIANTS)
        + "".join(f" {result[name]:>8.2f}" for name in ("ours_to_native", "ours_to_floor", "floor_to_native"))
    )
    sys.stdout.flush()
    return result


def scene_size_check(repeats: int, rng: random.Random, handlers: Handlers, empties: int = 10_000) -> dict:
    """Median update after moving one unrelated empty, in a scene of ``empties`` empties and one
    two-chain rig, with the extension's handlers in and out."""
    scene = bpy.data.scenes.new("Scene size")
    bpy.context.window.scene = scene
    obj = bpy.data.objects.new("Legs", bpy.data.armatures.new("Legs"))
    scene.collection.objects.link(obj)
    with edit(obj) as bones:
        add_leg(bones, ".L", (0.3, 0.0, 0.0))
        add_leg(bones, ".R", (-0.3, 0.0, 0.0))
    add_chains(
        obj, [(side, *add_empties(scene, (x, 0.0, 0.0), side)) for side, x in ((".L", 0.3), (".R", -0.3))]
    )
    unrelated = []
    for index in range(empties):
        empty = bpy.data.objects.new(f"Unrelated {index}", None)
        empty.location = (index % 100, index // 100, -5.0)
        scene.collection.objects.link(empty)
        unrelated.append(empty)
    update = scene.view_layers[0].update
    update()
    samples: dict[str, list[float]] = {"with": [], "without": []}
    for step in range(repeats + 2):
        order = list(samples)
        rng.shuffle(order)
        for name in order:
            handlers.use("ours" if name == "with" else "native")
            unrelated[step % empties].location.z += 0.01
            start = time.perf_counter()
            update()
            if step >= 2:
                samples[name].append(time.perf_counter() - start)
    handlers.use("ours")
    medians = {name: statistics.median(values) * 1e3 for name, values in samples.items()}
    result = {
        "empties": empties,
        "with_extension_ms": medians["with"],
        "without_extension_ms": medians["without"],
        "ratio": medians["with"] / medians["without"],
    }
    print(
        f"scene size: {empties} unrelated empties, one two-chain rig: update"
        f" {medians['without']:.2f} ms without the extension, {medians['with']:.2f} ms with it:"
        f" {result['ratio']:.3f}x"
    )
    return result


def fresh_file() -> None:
    bpy.ops.wm.read_homefile(use_empty=True)
    package().driver.scope.invalidate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25, help="timed updates per variant (median taken)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--output", type=pathlib.Path, default=REPO / "bench" / "results" / "driver.json")
    args = parser.parse_args()
    enable_extension(REPO)
    rng = random.Random(1)
    handlers = Handlers()
    rows = []
    print(
        f"{'layout':>13} {'chains':>6} {'native':>9} {'ours':>9} {'floor':>9} {'ours/nat':>8} {'ours/flr':>8}"
        f" {'flr/nat':>8}   (us per chain per update, medians)"
    )
    for layout in ("separate", "one armature"):
        for count in args.sizes:
            fresh_file()
            all_rigs = {variant: build(variant, count, layout) for variant in VARIANTS}
            rows.append(row(layout, count, compare(all_rigs, args.repeats, rng, handlers)))
    fresh_file()
    all_rigs = {variant: build(variant, 2, "one armature", extra_bones=2000) for variant in VARIANTS}
    character = row("character", 2, compare(all_rigs, args.repeats, rng, handlers))
    fresh_file()
    size = scene_size_check(args.repeats, rng, handlers)
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
        "character_2000_bones": character,
        "scene_size": size,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

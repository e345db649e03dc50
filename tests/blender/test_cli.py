# SPDX-License-Identifier: GPL-3.0-or-later
"""The headless command ``blender --command two_bone_ik bake|report`` (docs/pipeline.md, "The command line").

There is no ``blender`` executable here, so the registered command's function is called with an
argument list, end to end on a saved .blend, in a second process running real Blender (the PyPI
bpy module with this checkout enabled as the extension).
"""

import csv
import hashlib
import json
import os

import addon_utils
import bpy
import pytest
from blender_rig import (
    BASE_POLE,
    BASE_SHIN,
    BASE_TARGET,
    BASE_THIGH,
    MODULE,
    add_chain,
    add_chain_at,
    assert_close,
    exited_cleanly,
    fcurves,
    leg_bones,
    make_armature,
    package,
    run_blender,
    world_tail,
)

TOLERANCE = 1e-5


def save_base_rig(path, *, animate: bool = False) -> None:
    """Save the base rig (thigh (0,0,0)->(0,1,0), shin ->(0,2,0), target (1.2,0,0.5), pole
    (1.2,0.5,0.5)) to ``path``; with ``animate`` the target goes out of reach from frame 4 and a
    second, disabled chain "spare" is added on an arm of its own (a second chain on the leg's bones
    would be in ERROR: two networks cannot drive one bone)."""
    bones = leg_bones(BASE_THIGH, BASE_SHIN[1])
    if animate:
        bones += [("arm", (3, 0, 0), (3, 1, 0), None, False), ("forearm", (3, 1, 0), (3, 2, 0), "arm", True)]
    obj = make_armature("Leg", bones)
    target = add_chain_at(obj, BASE_TARGET, BASE_POLE).target
    if animate:
        for frame, location in ((1, (1.2, 0, 0.5)), (3, (1.2, 0, 0.5)), (4, (3.0, 0, 0))):
            target.location = location
            target.keyframe_insert("location", frame=frame)
        for fcurve in fcurves(target):
            for point in fcurve.keyframe_points:
                point.interpolation = "CONSTANT"
        spare = add_chain(obj, target, None, "arm", "forearm")
        spare.name, spare.enabled = "spare", False
    bpy.context.view_layer.update()
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)


def result_of(process) -> dict:
    """The JSON the second process printed on its RESULT line (asserting it ran)."""
    lines = [line for line in process.stdout.splitlines() if line.startswith("RESULT ")]
    assert exited_cleanly(process.returncode) and lines, (
        f"stdout:\n{process.stdout}\nstderr:\n{process.stderr}"
    )
    return json.loads(lines[-1][len("RESULT ") :])


def test_command_is_registered_once(scene):
    """The command is registered once while enabled, never twice, and gone when disabled."""
    cli = package().cli
    assert cli.is_registered()
    cli.register()
    assert cli.is_registered()
    for _ in range(2):
        addon_utils.disable(MODULE, default_set=True)
        assert not cli.is_registered()
        assert addon_utils.enable(MODULE, default_set=True, handle_error=None) is not None
        cli = package().cli
        assert cli.is_registered()
    assert cli.COMMAND == "two_bone_ik" and cli.COMMAND.isidentifier()


def test_bake_command_end_to_end(scene, tmp_path):
    """Bake returns 0 with 10 keys per channel, 1 with one line for a bad argument; --output plays
    back."""
    # The base rig: ["bake", "--start", "1", "--end", "10"] leaves 10 keys per channel;
    # ["bake", "--start", "x"] returns 1 with a one-line error and no traceback.
    rig, baked = tmp_path / "rig.blend", tmp_path / "baked.blend"
    save_base_rig(rig)
    process = run_blender(
        f"""
        from blender_rig import fcurves
        execute = package().cli.execute
        result = {{"bad": execute(["bake", "--start", "x"])}}
        result["missing"] = execute(["bake", {str(tmp_path / "none.blend")!r}])
        result["file"] = execute(
            ["bake", {str(rig)!r}, "--start", "1", "--end", "10", "--output", {str(baked)!r}]
        )
        bpy.ops.wm.open_mainfile(filepath={str(rig)!r})
        result["current"] = execute(["bake", "--start", "1", "--end", "10"])
        obj = bpy.data.objects["Leg"]
        result["keys"] = sorted(len(fcurve.keyframe_points) for fcurve in fcurves(obj))
        result["enabled"] = obj.two_bone_ik.chains[0].enabled
        print("RESULT " + json.dumps(result))
        """
    )
    result = result_of(process)
    assert result["bad"] == 1
    errors = [line for line in process.stderr.splitlines() if "two_bone_ik: error" in line]
    assert errors[0] == "two_bone_ik: error: argument --start: invalid int value: 'x'"
    assert "Traceback" not in process.stderr
    assert result["missing"] == 1 and "no such file" in errors[1]
    assert len(errors) == 2
    assert result["file"] == 0 and result["current"] == 0
    assert result["keys"] == [10] * 8  # thigh and shin, four quaternion channels each
    assert result["enabled"] is False

    bpy.ops.wm.open_mainfile(filepath=str(baked))
    obj = bpy.data.objects["Leg"]
    assert not obj.two_bone_ik.chains[0].enabled
    assert [len(fcurve.keyframe_points) for fcurve in fcurves(obj)] == [10] * 8
    bpy.data.objects["Target"].location = (0, 0, 2)  # nothing follows it any more
    for frame in (1, 5, 10):
        bpy.context.scene.frame_set(frame)
        bpy.context.view_layer.update()
        assert_close(world_tail(obj, "thigh"), (0.6, 0.7599342, 0.25), TOLERANCE)
        assert_close(world_tail(obj, "shin"), (1.2, 0, 0.5), TOLERANCE)


def test_report_command_csv_and_json(scene, tmp_path):
    """report writes a row per chain and frame (reach, shortfall, status) as CSV or JSON."""
    rig = tmp_path / "rig.blend"
    save_base_rig(rig, animate=True)
    csv_path, json_path = tmp_path / "reach.csv", tmp_path / "reach.json"
    process = run_blender(
        f"""
        execute = package().cli.execute
        result = {{
            "csv": execute(["report", {str(rig)!r}, "--start", "1", "--end", "5",
                            "--output", {str(csv_path)!r}]),
            "json": execute(["report", {str(rig)!r}, "--start", "2", "--end", "4", "--format", "json",
                             "--chain", "shin", "-o", {str(json_path)!r}]),
            "stdout": execute(["report", "--start", "1", "--end", "1"]),
            "bad_range": execute(["report", "--start", "5", "--end", "1"]),
            "frame": bpy.context.scene.frame_current,
        }}
        print("RESULT " + json.dumps(result))
        """
    )
    result = result_of(process)
    assert (result["csv"], result["json"], result["stdout"], result["bad_range"]) == (0, 0, 0, 1)
    assert result["frame"] == 1
    assert (
        "armature,chain,frame,enabled,state,reachable,too_close,shortfall,shortfall_cause,status"
        in process.stdout
    )
    assert "two_bone_ik: error: --end 1 is before --start 5" in process.stderr

    with open(csv_path, newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [(row["chain"], row["frame"]) for row in rows] == [
        (chain, str(frame)) for frame in range(1, 6) for chain in ("shin", "spare")
    ]
    shin = {int(row["frame"]): row for row in rows if row["chain"] == "shin"}
    assert shin[1]["reachable"] == "True" and shin[1]["status"] == ""
    assert float(shin[1]["shortfall"]) == pytest.approx(0.0, abs=TOLERANCE)  # float32 noise, on target
    assert shin[5]["reachable"] == "False" and shin[5]["too_close"] == "False"
    assert float(shin[5]["shortfall"]) == pytest.approx(1.0, abs=TOLERANCE)  # target 3 m away, chain 2 m long
    spare = [row for row in rows if row["chain"] == "spare"]
    assert all(
        row["enabled"] == "False" and row["reachable"] == "" and row["status"] == "Disabled" for row in spare
    )

    with open(json_path, encoding="utf-8") as file:
        records = json.load(file)
    assert [(record["chain"], record["frame"], record["reachable"]) for record in records] == [
        ("shin", 2, True),
        ("shin", 3, True),
        ("shin", 4, False),
    ]
    assert records[2]["shortfall"] == pytest.approx(1.0, abs=TOLERANCE)
    assert set(records[0]) == set(package().cli.commands.COLUMNS)


def test_report_exits_non_zero_when_a_chain_is_in_error(scene, tmp_path):
    """A chain in ERROR on any frame (it cannot be solved: here its target is the armature itself)
    makes report return 1 with one error line naming the chain, its first such frame and its
    status, after writing the whole report (state ERROR in its rows); a disabled chain is not
    solved, so the same chain disabled reports with 0."""
    rig, disabled = tmp_path / "broken.blend", tmp_path / "disabled.blend"
    save_base_rig(tmp_path / "rig.blend")
    obj = bpy.data.objects["Leg"]
    obj.two_bone_ik.chains[0].target = obj
    bpy.ops.wm.save_as_mainfile(filepath=str(rig), copy=True)
    obj.two_bone_ik.chains[0].enabled = False
    bpy.ops.wm.save_as_mainfile(filepath=str(disabled), copy=True)
    report = tmp_path / "reach.csv"
    process = run_blender(
        f"""
        execute = package().cli.execute
        result = {{"broken": execute(["report", {str(rig)!r}, "--start", "2", "--end", "3",
                                      "-o", {str(report)!r}])}}
        print("CASE disabled", file=sys.stderr, flush=True)
        result["disabled"] = execute(["report", {str(disabled)!r}, "--start", "2", "--end", "3"])
        print("RESULT " + json.dumps(result))
        """
    )
    result = result_of(process)
    assert result == {"broken": 1, "disabled": 0}
    broken, _, rest = process.stderr.partition("CASE disabled")
    errors = [line for line in broken.splitlines() if line.startswith("two_bone_ik:")]
    assert errors == [
        "two_bone_ik: error: chains in ERROR (not solved): 'shin' of 'Leg' from frame 2: "
        "The target is this armature: pick one of its control bones as target bone"
    ]
    assert "Traceback" not in process.stderr and "two_bone_ik:" not in rest
    with open(report, newline="", encoding="utf-8") as file:
        rows = [(row["chain"], row["frame"], row["state"]) for row in csv.DictReader(file)]
    assert rows == [("shin", "2", "ERROR"), ("shin", "3", "ERROR")]


def test_command_help_exits_zero(scene, capfd):
    """--help prints the usage and returns 0 instead of exiting Blender."""
    assert package().cli.execute(["--help"]) == 0
    assert package().cli.execute(["bake", "--help"]) == 0
    assert "blender --command two_bone_ik bake" in capfd.readouterr().out
    assert package().cli.execute([]) == 1


def test_commands_refuse_bad_frames_outputs_and_chains_in_one_line(scene, tmp_path):
    """Frames beyond Blender's range, an output that is the input (however it is spelt), a folder or
    in a missing folder, a chain that cannot be solved, and a misspelt chain or armature (a report
    would otherwise list nothing and succeed): each returns 1 with one error line, no traceback,
    before any bake; the input file is never changed."""
    rig, broken = tmp_path / "rig.blend", tmp_path / "broken.blend"
    save_base_rig(rig)
    obj = bpy.data.objects["Leg"]
    obj.two_bone_ik.chains[0].target = obj  # no target bone: the chain cannot solve it
    bpy.ops.wm.save_as_mainfile(filepath=str(broken), copy=True)
    alias = tmp_path / "alias.blend"
    os.symlink(rig, alias)
    digest = hashlib.sha256(rig.read_bytes()).hexdigest()
    missing = tmp_path / "missing"
    missing_csv, missing_blend, out = missing / "x.csv", missing / "x.blend", tmp_path / "out.blend"
    outside = "is outside Blender's frame range"
    cases = {
        "start above": (
            ["report", str(rig), "--start", "2147483648", "--end", "2147483648"],
            f"argument --start: frame 2147483648 {outside} -1048574 to 1048574",
        ),
        "start below": (
            ["bake", str(rig), "--start", "-2147483649"],
            f"argument --start: frame -2147483649 {outside}",
        ),
        "end past last frame": (
            ["bake", str(rig), "--start", "1048572", "--end", "1048575"],
            f"argument --end: frame 1048575 {outside}",
        ),
        "report into a missing folder": (
            ["report", str(rig), "-o", str(missing_csv)],
            f"--output {missing_csv}: no such directory: {missing}",
        ),
        "report onto a folder": (
            ["report", str(rig), "-o", str(tmp_path)],
            f"--output {tmp_path} is a directory",
        ),
        "bake into a missing folder": (
            ["bake", str(rig), "--start", "1", "--end", "2", "-o", str(missing_blend)],
            "no such directory",
        ),
        "bake onto the input": (
            ["bake", str(rig), "--start", "1", "--end", "2", "-o", str(rig)],
            "is the input file, which is never overwritten",
        ),
        "bake onto a link to the input": (
            ["bake", str(alias), "--start", "1", "--end", "2", "-o", str(rig)],
            "is the input file",
        ),
        "bake onto the input, relative": (
            ["bake", str(rig), "-o", os.path.relpath(rig)],
            "is the input file",
        ),
        "report onto the input": (["report", str(rig), "-o", str(alias)], "is the input file"),
        "bake onto the open file": (
            ["bake", "--start", "1", "--end", "2", "-o", str(rig)],
            "is the input file",
        ),
        "unsolvable chain": (
            ["bake", str(broken), "--start", "1", "--end", "2", "-o", str(out)],
            "Chain 'shin' cannot be baked: The target is this armature",
        ),
        "report a misspelt chain": (
            ["report", str(rig), "--chain", "shni"],
            "no chain named 'shni' in the scene",
        ),
        "bake a misspelt armature": (
            ["bake", str(rig), "--armature", "Lge", "-o", str(out)],
            "no armature named 'Lge' in the scene",
        ),
    }
    process = run_blender(
        f"""
        bpy.ops.wm.open_mainfile(filepath={str(rig)!r})
        execute = package().cli.execute
        cases = {json.dumps({name: argv for name, (argv, _) in cases.items()})}
        result = {{}}
        for name, argv in cases.items():
            print("CASE " + name, file=sys.stderr, flush=True)
            result[name] = execute(argv)
        print("RESULT " + json.dumps(result))
        """
    )
    result = result_of(process)
    assert "Traceback" not in process.stderr
    assert "two_bone_ik: baked" not in process.stdout  # every refusal came before any bake
    blocks = process.stderr.split("CASE ")[1:]
    for block in blocks:
        name, _, rest = block.partition("\n")
        errors = [line for line in rest.splitlines() if line.startswith("two_bone_ik:")]
        assert result[name] == 1, name
        assert len(errors) == 1 and errors[0].startswith("two_bone_ik: error: "), (name, rest)
        assert cases[name][1] in errors[0], (name, errors[0])
    assert len(blocks) == len(cases)
    assert hashlib.sha256(rig.read_bytes()).hexdigest() == digest
    assert not out.exists() and not missing.exists()


def test_command_from_a_checkout_runs_as_the_readme_says(scene, tmp_path):
    """``bash tools/two-bone-ik ...`` (docs/development.md's command for a machine with no Blender) bakes and
    reports a saved file with the command's own output and exit status, on this Blender version."""
    import subprocess
    import sys

    rig, baked, report = tmp_path / "rig.blend", tmp_path / "baked.blend", tmp_path / "reach.csv"
    save_base_rig(rig, animate=True)
    tool = [os.path.join(os.path.dirname(__file__), "..", "..", "tools", "two-bone-ik")]
    environment = {**os.environ, "TWO_BONE_IK_PYTHON": sys.executable}

    def command(*arguments):
        return subprocess.run(
            ["bash", *tool, *map(str, arguments)],
            capture_output=True,
            text=True,
            env=environment,
            timeout=300,
        )

    done = command("bake", rig, "--start", "1", "--end", "3", "--chain", "shin", "--output", baked)
    assert done.returncode == 0, done.stderr
    done = command("report", rig, "--start", "3", "--end", "4", "--output", report)
    assert done.returncode == 0, done.stderr
    with open(report, newline="", encoding="utf-8") as file:
        rows = [(row["chain"], row["frame"], row["reachable"]) for row in csv.DictReader(file)]
    assert rows == [("shin", "3", "True"), ("spare", "3", ""), ("shin", "4", "False"), ("spare", "4", "")]
    # To standard output, the report alone: Blender's own lines (the file it reads) go to stderr.
    shown = command("report", rig, "--start", "3", "--end", "4")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == report.read_text(encoding="utf-8")
    failed = command("bake", rig, "--start", "x")
    assert failed.returncode == 1
    assert (
        failed.stderr.strip().splitlines()[-1]
        == "two_bone_ik: error: argument --start: invalid int value: 'x'"
    )
    bpy.ops.wm.open_mainfile(filepath=str(baked))
    assert [len(fcurve.keyframe_points) for fcurve in fcurves(bpy.data.objects["Leg"])] == [3] * 8


def test_report_to_standard_output_is_the_report_alone_until_exit(scene, tmp_path):
    """A file whose library is gone makes Blender print an unfreed-memory line when the process
    exits, after the command: it goes to standard error, and standard output parses as JSON."""
    import subprocess
    import sys

    library, rig = tmp_path / "library.blend", tmp_path / "rig.blend"
    props = bpy.data.collections.new("Props")
    bpy.context.scene.collection.children.link(props)
    props.objects.link(make_armature("Prop", [("bone", (0, 0, 0), (0, 1, 0), None, False)]))
    bpy.ops.wm.save_as_mainfile(filepath=str(library), copy=True)
    bpy.data.collections.remove(props)
    save_base_rig(rig)
    bpy.ops.wm.open_mainfile(filepath=str(rig))
    with bpy.data.libraries.load(str(library), link=True) as (_, linked):
        linked.collections = ["Props"]
    bpy.context.scene.collection.children.link(linked.collections[0])
    bpy.ops.wm.save_mainfile()
    library.unlink()
    tool = [os.path.join(os.path.dirname(__file__), "..", "..", "tools", "two-bone-ik")]
    done = subprocess.run(
        ["bash", *tool, "report", str(rig), "--start", "1", "--end", "1", "--format", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, "TWO_BONE_IK_PYTHON": sys.executable},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert [row["chain"] for row in json.loads(done.stdout)] == ["shin"]

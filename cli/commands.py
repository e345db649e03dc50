# SPDX-License-Identifier: GPL-3.0-or-later
"""``blender --command two_bone_ik bake|report ...``: bake chains or report their reach, headless.

Examples (run ``blender --command two_bone_ik --help`` for every option)::

    blender --command two_bone_ik bake shot.blend --start 1 --end 120 --output shot_baked.blend
    blender --command two_bone_ik report shot.blend --format json --output reach.json
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import sys

import bpy

from ..animation.bake import FRAME_MAX, FRAME_MIN, BakeError, bake, check_bake
from ..chain.adopt import orphans

COMMAND = "two_bone_ik"
COLUMNS = (
    "armature", "chain", "frame", "enabled", "state",
    "reachable", "too_close", "shortfall", "shortfall_cause", "status",
)  # fmt: skip


class CommandError(Exception):
    """A problem to tell the user in one line; the command then returns 1."""


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting Blender, so a bad argument is one line and status 1."""

    def error(self, message):
        raise CommandError(message)

    def exit(self, status=0, message=None):
        if message:
            print(message, file=sys.stderr, end="")
        raise _Exit(status)


def _frame(text: str) -> int:
    """A frame number in Blender's frame range (``Scene.frame_set`` refuses or clamps any other)."""
    try:
        frame = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not FRAME_MIN <= frame <= FRAME_MAX:
        raise argparse.ArgumentTypeError(
            f"frame {frame} is outside Blender's frame range {FRAME_MIN} to {FRAME_MAX}"
        )
    return frame


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=f"blender --command {COMMAND}", description="Two-Bone IK without the interface.")
    actions = parser.add_subparsers(
        dest="action", required=True, parser_class=_Parser, metavar="{bake,report}"
    )
    for name, text in (
        ("bake", "Key the chain bones' rotations over a frame range, then disable the chains."),
        (
            "report",
            "Per chain and frame: state, reachable, too close, shortfall and its cause, and status, "
            "as CSV or JSON; exits 1 when a chain is in ERROR on any frame.",
        ),
    ):
        action = actions.add_parser(name, help=text, description=text)
        action.add_argument(
            "blend", nargs="?", help="the .blend file to open (default: the file already open)"
        )
        action.add_argument("--start", type=_frame, help="first frame (default: the scene's start frame)")
        action.add_argument("--end", type=_frame, help="last frame (default: the scene's end frame)")
        action.add_argument(
            "--armature", action="append", default=[], help="only this armature object (repeatable)"
        )
        action.add_argument(
            "--chain",
            action="append",
            default=[],
            help="only the chain of this name (repeatable); bake takes it even when disabled, to re-bake",
        )
        action.add_argument(
            "--output",
            "-o",
            help="bake: save the baked file here (nothing is saved without it); report: write it here "
            "(default: standard output)",
        )
    actions.choices["report"].add_argument(
        "--format", choices=("csv", "json"), default="csv", help="(default: csv)"
    )
    return parser


def execute(argv: list[str]) -> int:
    """The command: parse ``argv`` (the arguments after the command id) and run it.

    Returns 0 on success and 1 on failure, after printing a one-line error to standard error
    (never a traceback for a bad argument, a missing file or a chain that cannot be baked). A
    report with a chain in ERROR on any frame is written whole, then fails (a farm check must not
    pass a rig that does not solve).
    """
    try:
        arguments = _parser().parse_args(list(argv))
        return {"bake": _bake, "report": _report}[arguments.action](arguments)
    except _Exit as done:
        return done.status
    except (CommandError, BakeError) as error:
        print(f"{COMMAND}: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # an output that became unwritable after it was checked
        print(f"{COMMAND}: error: {error}", file=sys.stderr)
        return 1


def run(argv: list[str]) -> int:
    """The command as a process runs it (``blender --command``, ``tools/two-bone-ik``):
    :func:`execute`, then what the process prints until it exits (Blender's own lines at exit, such
    as its unfreed-memory count) goes to standard error, so that standard output holds the
    command's output alone."""
    status = execute(argv)
    sys.stdout.flush()
    os.dup2(2, 1)
    return status


def _open(path: str | None) -> None:
    if not path:
        return
    if not os.path.isfile(path):
        raise CommandError(f"no such file: {path}")
    try:
        bpy.ops.wm.open_mainfile(filepath=os.path.abspath(path))
    except RuntimeError as error:
        raise CommandError(f"cannot open {path}: {str(error).strip().splitlines()[-1]}") from None


def _same_file(first: str, second: str) -> bool:
    """Whether two paths name one file: the same real path, or the same file through a hard link."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:  # one of them does not exist
        return False


def _output_path(output: str, input_path: str) -> str:
    """The absolute path to write ``--output`` to, checked before any work is done: its folder
    exists and is writable, it is not a folder, and it is not the input file (never overwritten).
    Raises CommandError."""
    path = os.path.abspath(output)
    if input_path and _same_file(path, input_path):
        raise CommandError(
            f"--output {output} is the input file, which is never overwritten: choose another path"
        )
    if os.path.isdir(path):
        raise CommandError(f"--output {output} is a directory")
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise CommandError(f"--output {output}: no such directory: {folder}")
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise CommandError(f"--output {output}: permission denied")
    return path


def _input_path(arguments) -> str:
    """The .blend the command reads: the one named, else the file already open ('' when unsaved)."""
    return os.path.abspath(arguments.blend) if arguments.blend else bpy.data.filepath


def _frame_range(scene, arguments) -> range:
    start = scene.frame_start if arguments.start is None else arguments.start
    end = scene.frame_end if arguments.end is None else arguments.end
    if end < start:
        raise CommandError(f"--end {end} is before --start {start}")
    return range(start, end + 1)


def _chains(scene, arguments, enabled_only: bool) -> list[tuple[str, list[str]]]:
    """(armature name, chain names) for the armatures and chains the arguments select."""
    selected = []
    for obj in scene.objects:
        if obj.type != "ARMATURE" or (arguments.armature and obj.name not in arguments.armature):
            continue
        # A chain named with --chain is taken even when disabled (re-baking a baked chain).
        names = [
            chain.name
            for chain in obj.two_bone_ik.chains
            if (chain.name in arguments.chain)
            or (not arguments.chain and (chain.enabled or not enabled_only))
        ]
        if names:
            selected.append((obj.name, names))
    # A misspelt name must not pass quietly (a farm check would report nothing and succeed).
    armatures = {obj.name for obj in scene.objects if obj.type == "ARMATURE"}
    chains = {name for _, names in selected for name in names}
    for kind, wanted, found in (
        ("armature", arguments.armature, armatures),
        ("chain", arguments.chain, chains),
    ):
        missing = [name for name in wanted if name not in found]
        if missing:
            raise CommandError(f"no {kind} named {', '.join(repr(name) for name in missing)} in the scene")
    return selected


def _bake(arguments) -> int:
    # Checked before the file is opened and baked: a bad output must not cost a whole bake.
    output = _output_path(arguments.output, _input_path(arguments)) if arguments.output else None
    _open(arguments.blend)
    context = bpy.context
    frames = _frame_range(context.scene, arguments)
    selected = _chains(context.scene, arguments, enabled_only=True)
    if not selected:
        raise CommandError("no enabled chain to bake (check --armature and --chain)")
    for obj_name, names in selected:  # every armature is checked before any is baked
        check_bake(context, context.scene.objects[obj_name], names, frames.start, frames.stop - 1)
    joined = _joined(context.scene, arguments)
    if joined:  # the chains' bake is right; the joined limbs are left as they are
        print(f"{COMMAND}: warning: {joined}", file=sys.stderr)
    for obj_name, names in selected:
        keys = bake(context, context.scene.objects[obj_name], names, frames.start, frames.stop - 1)
        span = f"{frames.start}-{frames.stop - 1}"
        print(f"{COMMAND}: baked {obj_name}: {', '.join(names)} over frames {span} ({keys} keys)")
    if output:
        try:
            bpy.ops.wm.save_as_mainfile(filepath=output, check_existing=False, copy=True)
        except RuntimeError as error:
            raise CommandError(f"cannot save {output}: {str(error).strip().splitlines()[-1]}") from None
        print(f"{COMMAND}: saved {output}")
    else:
        print(f"{COMMAND}: not saved (pass --output to keep the bake)")
    return 0


def report_rows(context, frames, selected) -> list[dict]:
    """One row per chain and frame (see ``COLUMNS``), solving each frame as playback would.

    Disabled chains are not solved: their reach columns are None and their status is "Disabled".
    The scene returns to its frame afterwards.
    """
    scene = context.scene
    frame, subframe = scene.frame_current, scene.frame_subframe
    rows = []
    try:
        for number in frames:
            scene.frame_set(number)
            context.view_layer.update()
            for obj_name, names in selected:
                chains = scene.objects[obj_name].two_bone_ik.chains
                for name in names:
                    chain = chains[name]
                    solved = chain.enabled
                    rows.append(
                        {
                            "armature": obj_name,
                            "chain": name,
                            "frame": number,
                            "enabled": solved,
                            "state": chain.state if solved else None,
                            "reachable": chain.reachable if solved else None,
                            "too_close": chain.too_close if solved else None,
                            "shortfall": round(chain.shortfall, 6) if solved else None,
                            "shortfall_cause": chain.shortfall_cause if solved else None,
                            "status": chain.status if solved else "Disabled",
                        }
                    )
    finally:
        scene.frame_set(frame, subframe=subframe)
    return rows


def _format(rows, kind: str) -> str:
    if kind == "json":
        return json.dumps(rows, indent=1) + "\n"
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: "" if value is None else value for key, value in row.items()} for row in rows)
    return text.getvalue()


@contextlib.contextmanager
def _blender_lines_to_stderr(moved: bool):
    """With ``moved``, what is printed to standard output meanwhile (Blender's own lines: the file it
    reads, its warnings) goes to standard error, so that a report written to standard output after
    it is the report alone."""
    if not moved:
        yield
        return
    sys.stdout.flush()
    kept = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(kept, 1)
        os.close(kept)


def _report(arguments) -> int:
    output = _output_path(arguments.output, _input_path(arguments)) if arguments.output else None
    with _blender_lines_to_stderr(moved=not output):
        _open(arguments.blend)
        context = bpy.context
        frames = _frame_range(context.scene, arguments)
        rows = report_rows(context, frames, _chains(context.scene, arguments, enabled_only=False))
    text = _format(rows, arguments.format)
    if output:
        try:
            with open(output, "w", encoding="utf-8", newline="") as file:
                file.write(text)
        except OSError as error:
            raise CommandError(f"cannot write {output}: {error.strerror or error}") from None
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    failed = _errors(rows)
    if failed:
        # The report is written whole first: it says which frames, and why.
        raise CommandError(f"chains in ERROR (not solved): {failed}")
    joined = _joined(context.scene, arguments)
    if joined:
        raise CommandError(joined)
    return 0


def _joined(scene, arguments) -> str:
    """A sentence naming the networks no chain owns (a Join brought them; the limbs they pose are
    in no row and not solved) on the armatures the arguments select, or '' when there are none."""
    found = [
        f"'{obj.name}': {', '.join(roots)}"
        for obj in scene.objects
        if obj.type == "ARMATURE" and (not arguments.armature or obj.name in arguments.armature)
        for roots in [orphans(obj)]
        if roots
    ]
    if not found:
        return ""
    return (
        f"networks of no chain, from a Join (their limbs are not solved), on {'; '.join(found)}: "
        "run Pose > Two-Bone IK > Update Mechanism to make them chains"
    )


def _errors(rows) -> str:
    """The chains of ``rows`` in ERROR, each once with its first such frame and status ('' when
    none), in one line."""
    first: dict[tuple[str, str], dict] = {}
    for row in rows:
        if row["state"] == "ERROR":
            first.setdefault((row["armature"], row["chain"]), row)
    return "; ".join(
        f"'{chain}' of '{armature}' from frame {row['frame']}: {row['status']}"
        for (armature, chain), row in first.items()
    )

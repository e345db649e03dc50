# SPDX-License-Identifier: GPL-3.0-or-later
"""One Blender session on the installed extension; run by test_install.py in a subprocess.

Installs the built zip into the empty user folder that BLENDER_USER_RESOURCES names, the way a user
does (Install from Disk: ``extensions.package_install_files`` into the "user_default" repository),
runs a smoke scene from the installed copy, toggles, reloads and re-registers it (also outside the
add-on system, and after a registration that stopped half-way), then uninstalls it. Every stage is
recorded, with its error, in a JSON report for the test to assert on. Nothing here imports the
checkout.

Usage: python installed_session.py ZIP REPORT_JSON [lifecycle|partial]
"""

from __future__ import annotations

import gc
import hashlib
import importlib
import json
import os
import pathlib
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any, Literal

ZIP = pathlib.Path(sys.argv[1]).resolve()
REPORT = pathlib.Path(sys.argv[2])
USER = pathlib.Path(os.environ["BLENDER_USER_RESOURCES"]).resolve()
REPOSITORY = "user_default"
PACKAGE_ID = "two_bone_ik"
MODULE = f"bl_ext.{REPOSITORY}.{PACKAGE_ID}"
HANDLER_LISTS = (
    "depsgraph_update_post",
    "depsgraph_update_pre",
    "frame_change_post",
    "frame_change_pre",
    "load_post",
    "load_pre",
    "save_pre",
    "save_post",
    "undo_post",
    "redo_post",
)

# Blender reads BLENDER_USER_RESOURCES when bpy is imported; addon_utils exists only after that.
import bpy  # noqa: E402, I001
import addon_utils  # noqa: E402

report: dict[str, Any] = {"stages": {}, "blender": bpy.app.version_string}


def names(operator_result: Any) -> list[str]:
    """An operator's result set ({'FINISHED'}) as a sorted list (JSON has no sets)."""
    return sorted(operator_result)


def ours(function) -> bool:
    """Whether a callback comes from the installed extension (any module inside it)."""
    module = getattr(function, "__module__", None) or ""
    return module == MODULE or module.startswith(MODULE + ".")


class Registrations:
    """Counts the draw callbacks, CLI commands and timers the extension holds.

    Blender cannot list these, so the functions that add and remove them are wrapped before the
    extension is installed; the extension looks them up at call time, so it calls the wrappers.
    """

    def __init__(self) -> None:
        self.draw: dict[int, object] = {}
        self.cli: dict[int, str] = {}
        self.timers: list[Callable] = []
        space = bpy.types.SpaceView3D
        draw_add, draw_remove = space.draw_handler_add, space.draw_handler_remove
        cli_add, cli_remove = bpy.utils.register_cli_command, bpy.utils.unregister_cli_command
        timer_add = bpy.app.timers.register
        # Put back at the end: wrappers left on Blender's types would keep this script's globals,
        # and so bpy, alive past Python's shutdown (docs/blender-4.2-exit-crash.md).
        self.originals = (
            (space, "draw_handler_add", draw_add),
            (space, "draw_handler_remove", draw_remove),
            (bpy.utils, "register_cli_command", cli_add),
            (bpy.utils, "unregister_cli_command", cli_remove),
            (bpy.app.timers, "register", timer_add),
        )

        def draw_handler_add(callback, *args, **kwargs):
            handle = draw_add(callback, *args, **kwargs)
            if ours(callback):
                self.draw[id(handle)] = handle
            return handle

        def draw_handler_remove(handle, *args, **kwargs):
            self.draw.pop(id(handle), None)
            return draw_remove(handle, *args, **kwargs)

        def register_cli_command(command_id, execute):
            handle = cli_add(command_id, execute)
            if ours(execute):
                self.cli[id(handle)] = command_id
            return handle

        def unregister_cli_command(handle):
            self.cli.pop(id(handle), None)
            return cli_remove(handle)

        def register_timer(function, *args, **kwargs):
            if ours(function):
                self.timers.append(function)
            return timer_add(function, *args, **kwargs)

        setattr(space, "draw_handler_add", staticmethod(draw_handler_add))  # noqa: B010
        setattr(space, "draw_handler_remove", staticmethod(draw_handler_remove))  # noqa: B010
        setattr(bpy.utils, "register_cli_command", register_cli_command)  # noqa: B010
        setattr(bpy.utils, "unregister_cli_command", unregister_cli_command)  # noqa: B010
        setattr(bpy.app.timers, "register", register_timer)  # noqa: B010

    def live_timers(self) -> int:
        return sum(bpy.app.timers.is_registered(function) for function in self.timers)

    def restore(self) -> None:
        for owner, name, original in self.originals:
            setattr(owner, name, original)


registrations = Registrations()


def rna_leftovers() -> list[str]:
    """Registered classes and RNA properties of ours, by name (empty when nothing is registered)."""
    found: list[str] = []
    for name in dir(bpy.types):
        if "two_bone_ik" in name.lower() or "twoboneik" in name.lower():
            found.append(f"class {name}")
            continue
        cls = getattr(bpy.types, name, None)
        rna = getattr(cls, "bl_rna", None)
        if rna is None:
            continue
        try:
            identifiers = rna.properties.keys()
        except Exception:
            continue
        found += [f"{name}.{key}" for key in identifiers if "two_bone_ik" in key]
    return found


def ui_leftovers() -> list[str]:
    """Draw functions of ours appended to Blender's menus, panels and headers."""
    found: list[str] = []
    for name in dir(bpy.types):
        cls = getattr(bpy.types, name, None)
        if not isinstance(cls, type) or not issubclass(
            cls, (bpy.types.Menu, bpy.types.Panel, bpy.types.Header)
        ):
            continue
        if getattr(cls, "draw", None) is not None and cls.is_extended():
            found += [f"{name}: {f.__module__}.{f.__name__}" for f in cls._dyn_ui_initialize() if ours(f)]
    return found


def state() -> dict[str, Any]:
    """Everything of ours that Blender holds right now."""
    handlers = {}
    for list_name in HANDLER_LISTS:
        handler_list = getattr(bpy.app.handlers, list_name, None)
        if handler_list is not None:
            names = [f.__name__ for f in handler_list if ours(f)]
            if names:
                handlers[list_name] = names
    keymap_items = []
    addon_keyconfig = bpy.context.window_manager.keyconfigs.addon
    if addon_keyconfig is not None:
        for keymap in addon_keyconfig.keymaps:
            keymap_items += [item.idname for item in keymap.keymap_items if "two_bone_ik" in item.idname]
    return {
        "enabled": bpy.context.preferences.addons.get(MODULE) is not None,
        "handlers": handlers,
        "draw_handlers": len(registrations.draw),
        "cli_commands": sorted(registrations.cli.values()),
        "timers": registrations.live_timers(),
        "rna": rna_leftovers(),
        "ui": ui_leftovers(),
        "keymap_items": keymap_items,
    }


def stage(name: str):
    """Run the decorated function now as a stage; record its result or its traceback."""

    def run(function: Callable[[], Any]) -> Callable[[], Any]:
        print(f"installed_session: stage {name}", flush=True)
        try:
            result = function()
            report["stages"][name] = {"ok": True, "result": result}
        except Exception:
            report["stages"][name] = {"ok": False, "error": traceback.format_exc()}
        return function

    return run


def installed_folder() -> pathlib.Path:
    module = importlib.import_module(MODULE)
    return pathlib.Path(str(module.__file__)).resolve().parent


def files_of(folder: pathlib.Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``folder``, caches left out."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def set_mode(obj, mode: Literal["OBJECT", "EDIT", "POSE"]) -> None:
    bpy.context.view_layer.objects.active = obj
    with bpy.context.temp_override(active_object=obj, object=obj):
        bpy.ops.object.mode_set(mode=mode)


def smoke() -> dict[str, Any]:
    """The leg of the scene cases, a chain added with the operator, the target moved: the shin's
    tail reaches it. Uses only the installed operator and the chain's stored target."""
    bpy.ops.wm.read_homefile(use_empty=True)
    data = bpy.data.armatures.new("Leg")
    obj = bpy.data.objects.new("Leg", data)
    bpy.context.scene.collection.objects.link(obj)
    set_mode(obj, "EDIT")
    thigh = data.edit_bones.new("thigh")
    thigh.head, thigh.tail = (0, 0, 1), (0, 0.05, 0.5)
    shin = data.edit_bones.new("shin")
    shin.head, shin.tail = (0, 0.05, 0.5), (0, 0, 0)
    shin.parent, shin.use_connect = thigh, True
    set_mode(obj, "OBJECT")
    bpy.context.view_layer.update()
    set_mode(obj, "POSE")
    pose_bone = obj.pose.bones["shin"]
    # Selection moved from Bone to PoseBone in 5.0: feature-test, never compare versions.
    holder = pose_bone if "select" in bpy.types.PoseBone.bl_rna.properties else pose_bone.bone
    holder.select = True
    with bpy.context.temp_override(
        active_object=obj, object=obj, active_pose_bone=pose_bone, selected_pose_bones=[pose_bone]
    ):
        result = bpy.ops.pose.two_bone_ik_add()
    assert result == {"FINISHED"}, f"pose.two_bone_ik_add returned {result}"
    set_mode(obj, "OBJECT")
    chain = obj.two_bone_ik.chains[-1]
    target = chain.target
    assert target is not None, "the add operator made no target"
    target.location = (0.25, -0.1, 0.35)
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    tail = evaluated.matrix_world @ evaluated.pose.bones["shin"].tail
    goal = target.matrix_world.translation
    bones = obj.data.bones
    length = (bones["shin"].head_local - bones["thigh"].head_local).length + bones["shin"].length
    miss = (tail - goal).length
    assert miss <= 1e-5 * length, f"shin tail {tail} misses the target {goal} by {miss:.3g}"
    return {"miss": miss, "status": chain.status}


def enable() -> None:
    errors: list[str] = []
    module = addon_utils.enable(MODULE, default_set=True, handle_error=lambda ex: errors.append(repr(ex)))
    assert module is not None, f"addon_utils.enable({MODULE!r}) failed: {errors}"


def disable() -> None:
    errors: list[str] = []
    addon_utils.disable(MODULE, default_set=True, handle_error=lambda ex: errors.append(repr(ex)))
    assert not errors, f"addon_utils.disable({MODULE!r}) failed: {errors}"


# --- the session ----------------------------------------------------------------------------------
# Scenario "lifecycle": smoke, toggle, reload, direct registration, factory settings, uninstall.
# Scenario "partial": an enable that fails half-way, then a normal enable, then uninstall. It runs in
# a Blender of its own, so a failure there cannot spoil the lifecycle stages.
SCENARIO = sys.argv[3] if len(sys.argv) > 3 else "lifecycle"

report["scenario"] = SCENARIO
report["before_install"] = state()
result = bpy.ops.extensions.package_install_files(filepath=str(ZIP), repo=REPOSITORY, enable_on_install=True)
report["install_result"] = names(result)
installed = importlib.import_module(MODULE) if result == {"FINISHED"} else None
report["module_file"] = str(pathlib.Path(str(installed.__file__)).resolve()) if installed else None
report["user_folder"] = str(USER)
report["installed_files"] = files_of(installed_folder()) if installed else {}
report["after_install"] = state()

if report["after_install"]["enabled"] and SCENARIO == "lifecycle":

    @stage("smoke")
    def _smoke():
        return smoke()

    @stage("toggle")
    def _toggle():
        """Disable and enable three times; after each, exactly what the first enable made."""
        seen = []
        for _ in range(3):
            disable()
            seen.append(("disabled", state()))
            enable()
            seen.append(("enabled", state()))
        return seen

    @stage("script_reload")
    def _reload():
        """Reload Scripts, then File > New."""
        result = names(bpy.ops.script.reload())
        after_reload = state()
        bpy.ops.wm.read_homefile(use_empty=True)
        return {"result": result, "after_reload": after_reload, "after_new_file": state()}

    @stage("smoke_after_reload")
    def _smoke_again():
        return smoke()

    @stage("register_outside_addon_utils")
    def _direct():
        """The module registered directly (not through the add-on system, so it has no entry in
        preferences.addons), a scene solved, factory settings loaded and a scene solved again, then
        unregistered and enabled again."""
        disable()
        module = importlib.import_module(MODULE)
        module.register()
        try:
            smoke()
            bpy.ops.wm.read_factory_settings(use_empty=True)
            smoke()
        finally:
            module.unregister()
        after = state()
        enable()
        return {"after_unregister": after, "after_enable": state()}

    @stage("factory_settings")
    def _factory():
        """read_factory_settings() with the extension enabled disables it cleanly."""
        bpy.ops.wm.read_factory_settings(use_empty=True)
        return state()


if report["after_install"]["enabled"] and SCENARIO == "partial":

    @stage("partial_registration")
    def _partial() -> dict:
        """An enable whose register() fails half-way (here: the first panel is refused), then a
        normal enable: it does not raise, and leaves exactly what a clean enable makes."""
        disable()
        register_class = bpy.utils.register_class

        def refuse_panels(cls):
            if issubclass(cls, bpy.types.Panel) and cls.__module__.startswith(MODULE):
                raise RuntimeError(f"simulated failure registering {cls.__name__}")
            return register_class(cls)

        setattr(bpy.utils, "register_class", refuse_panels)  # noqa: B010
        errors: list[str] = []
        try:
            failed = addon_utils.enable(
                MODULE, default_set=True, handle_error=lambda ex: errors.append(repr(ex))
            )
        finally:
            setattr(bpy.utils, "register_class", register_class)  # noqa: B010
        after_failure = state()
        enable()
        after_enable = state()
        smoke()
        return {
            "failed_enable_returned_module": failed is not None,
            "failure_errors": errors,
            "after_failure": after_failure,
            "after_enable": after_enable,
        }


if installed is not None:
    report["files_before_uninstall"] = files_of(installed_folder())

    @stage("uninstall")
    def _uninstall():
        """Enabled first, so the uninstall goes through disabling too."""
        if bpy.context.preferences.addons.get(MODULE) is None:
            enable()
        repository = next(r for r in bpy.context.preferences.extensions.repos if r.module == REPOSITORY)
        return names(
            bpy.ops.extensions.package_uninstall(repo_directory=repository.directory, pkg_id=PACKAGE_ID)
        )


report["after_uninstall"] = state()
report["user_files_of_ours"] = sorted(
    path.relative_to(USER).as_posix() for path in USER.rglob("*") if PACKAGE_ID in path.name
)
REPORT.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
print("installed_session: report written", flush=True)
# The session ends normally on every version, and a crash or hang at exit fails the test. What this
# script itself leaves in Blender would keep bpy alive past Python's shutdown, where 4.2 crashes and
# 4.5 hangs (docs/blender-4.2-exit-crash.md): its wrappers, and the timer Reload Scripts registers
# (a function from a "<blender string>" that a headless session never runs).
BLENDER_STRING = "<blender string>"
registrations.restore()
for leftover in gc.get_objects():
    if (
        isinstance(leftover, types.FunctionType)
        and leftover.__globals__.get("__file__") == "<blender string>"
    ):
        if bpy.app.timers.is_registered(leftover):
            bpy.app.timers.unregister(leftover)
        leftover.__globals__.clear()
print("installed_session: exiting normally", flush=True)

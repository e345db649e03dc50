# SPDX-License-Identifier: GPL-3.0-or-later
"""Installing the built zip the way a user does, in a fresh Blender with an empty user folder.

Each scenario of installed_session.py runs in its own Blender (a subprocess, so it cannot clash
with the in-process test session) whose BLENDER_USER_RESOURCES is a new temp folder; the tests
below assert on the JSON report it writes.
"""

import json
import os
import pathlib
import subprocess
import sys
import zipfile

import pytest
from blender_process import exited_cleanly

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
MODULE = "bl_ext.user_default.two_bone_ik"
# Output that must never appear: an exception of ours reached Blender (it prints these itself).
CONSOLE_ERRORS = ("Traceback", "KeyError", "Error in handler", "Two-Bone IK:")


def run_session(zip_path: pathlib.Path, folder: pathlib.Path, scenario: str) -> dict:
    user = folder / "user"
    user.mkdir()
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(user), XDG_CACHE_HOME=str(folder / "cache"))
    report_path = folder / "report.json"
    completed = subprocess.run(
        [sys.executable, str(HERE / "installed_session.py"), str(zip_path), str(report_path), scenario],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,  # not the checkout: nothing may be importable from it
        timeout=300,  # a session takes a few seconds; a hang must not eat CI's 90 minutes
        check=False,
    )
    output = completed.stdout + completed.stderr
    assert exited_cleanly(completed.returncode) and report_path.is_file(), (
        f"the Blender session failed:\n{output}"
    )
    report = json.loads(report_path.read_text(encoding="utf-8"))
    report["output"] = output
    report["user"] = user
    return report


@pytest.fixture(scope="module")
def lifecycle(extension_zip, tmp_path_factory) -> dict:
    """Install, smoke, toggle x3, reload, direct registration, factory settings, uninstall."""
    return run_session(extension_zip, tmp_path_factory.mktemp("lifecycle"), "lifecycle")


@pytest.fixture(scope="module")
def partial(extension_zip, tmp_path_factory) -> dict:
    """Install, an enable that fails half-way, a normal enable, uninstall."""
    return run_session(extension_zip, tmp_path_factory.mktemp("partial"), "partial")


def assert_stage(report: dict, name: str):
    stage = report["stages"].get(name)
    assert stage is not None, f"stage {name!r} did not run (did the install fail?)"
    assert stage["ok"], f"stage {name!r} raised:\n{stage['error']}"
    return stage["result"]


def registered(state: dict) -> dict:
    """What a registration leaves in Blender, without the enabled flag."""
    return {key: value for key, value in state.items() if key != "enabled"}


def nothing(state: dict) -> bool:
    return not any(registered(state).values())


def test_install_from_disk_enables_the_installed_copy(lifecycle, extension_zip):
    """package_install_files(repo="user_default", enable_on_install=True) installs and enables
    bl_ext.user_default.two_bone_ik, imported from the user folder, never from the checkout."""
    assert lifecycle["install_result"] == ["FINISHED"]
    assert nothing(lifecycle["before_install"])
    assert lifecycle["after_install"]["enabled"]
    module_file = pathlib.Path(lifecycle["module_file"])
    assert module_file.is_relative_to(pathlib.Path(lifecycle["user_folder"])), module_file
    assert not module_file.resolve().is_relative_to(REPO)
    assert module_file.parent.as_posix().endswith("extensions/user_default/two_bone_ik")
    with zipfile.ZipFile(extension_zip) as archive:
        packed = {name for name in archive.namelist() if not name.endswith("/")}
    assert set(lifecycle["installed_files"]) == packed


def test_enabled_extension_registers_each_thing_once(lifecycle):
    """After the install: one callback of ours per handler list it uses, one CLI command, at most
    one overlay draw handler (none headless), no timers."""
    state = lifecycle["after_install"]
    assert state["handlers"], "no handler of ours: the driver is not hooked"
    assert all(len(names) == 1 for names in state["handlers"].values()), state["handlers"]
    assert state["cli_commands"] == ["two_bone_ik"]
    assert state["draw_handlers"] <= 1
    assert state["timers"] == 0


def test_smoke_scene_solves_from_the_installed_copy(lifecycle):
    """A leg, a chain added with the installed operator, the target moved: the shin's tail reaches it."""
    result = assert_stage(lifecycle, "smoke")
    assert result["status"] == ""


def test_toggling_three_times_leaves_one_of_each(lifecycle):
    """Disable/enable three times: nothing of ours while disabled, and after each enable
    exactly what the first enable made."""
    seen = assert_stage(lifecycle, "toggle")
    first = registered(lifecycle["after_install"])
    for what, state in seen:
        if what == "disabled":
            assert not state["enabled"] and nothing(state), state
        else:
            assert state["enabled"] and registered(state) == first, state


def test_script_reload_and_new_file_leave_one_of_each(lifecycle):
    """Reload Scripts (it runs headless), then File > New: still exactly one of each, and the
    chain solves after the reload."""
    result = assert_stage(lifecycle, "script_reload")
    first = registered(lifecycle["after_install"])
    assert result["result"] == ["FINISHED"]
    assert registered(result["after_reload"]) == first
    assert registered(result["after_new_file"]) == first
    assert_stage(lifecycle, "smoke_after_reload")


def test_registered_outside_the_addon_system_needs_no_preferences_entry(lifecycle):
    """register() called directly (so preferences.addons has no entry for the module), a solve,
    read_factory_settings() and another solve raise no KeyError; unregister() leaves nothing."""
    result = assert_stage(lifecycle, "register_outside_addon_utils")
    assert nothing(result["after_unregister"]), result["after_unregister"]
    assert registered(result["after_enable"]) == registered(lifecycle["after_install"])


def test_factory_settings_disable_the_extension_cleanly(lifecycle):
    """read_factory_settings() with the extension enabled: disabled, nothing of ours left."""
    state = assert_stage(lifecycle, "factory_settings")
    assert not state["enabled"] and nothing(state), state


def test_uninstall_leaves_nothing_behind(lifecycle):
    """package_uninstall: no handler, class, property, menu entry, command or timer of ours, and no
    file or folder of ours in the user folder."""
    assert assert_stage(lifecycle, "uninstall") == ["FINISHED"]
    state = lifecycle["after_uninstall"]
    assert not state["enabled"] and nothing(state), state
    assert lifecycle["user_files_of_ours"] == []
    leftovers = [p for p in pathlib.Path(lifecycle["user"]).rglob("*") if "two_bone_ik" in p.name]
    assert leftovers == []


def test_extension_writes_nothing_into_its_own_folder(lifecycle):
    """After install, solving, toggling, reloading and factory settings, the installed folder holds
    exactly the zip's files, unchanged (caches aside): the extension writes nothing next to itself."""
    assert lifecycle["files_before_uninstall"] == lifecycle["installed_files"]


def test_session_printed_no_error_of_ours(lifecycle):
    """No traceback, KeyError or driver error reached Blender's console during the whole session."""
    for text in CONSOLE_ERRORS:
        assert text not in lifecycle["output"], f"{text!r} in the output:\n{lifecycle['output']}"


def test_enable_after_a_failed_half_registration_works(partial):
    """When an enable failed half-way through register() (a panel refused), the next enable
    does not raise and registers exactly one of each, and the chain solves."""
    result = assert_stage(partial, "partial_registration")
    assert not result["failed_enable_returned_module"]
    assert registered(result["after_enable"]) == registered(partial["after_install"])
    assert assert_stage(partial, "uninstall") == ["FINISHED"]
    assert nothing(partial["after_uninstall"]) and partial["user_files_of_ours"] == []

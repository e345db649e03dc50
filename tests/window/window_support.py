# SPDX-License-Identifier: GPL-3.0-or-later
"""What the windowed scripts share: stepping a script from ``bpy.app.timers``, the screen's
geometry, screenshots (ImageMagick from the X side: ``bpy.ops.screen.screenshot`` is black under
Xvfb), reading text off them (tesseract) and real input (xdotool).

Runs inside a Blender with a window, started by tools/window.sh; results go to
``$TWO_BONE_IK_WINDOW_OUT``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import traceback

import bpy

OUT = os.environ.get("TWO_BONE_IK_WINDOW_OUT", "/tmp/two-bone-ik-window")
MODULE = "bl_ext.user_default.two_bone_ik"
TAB = "Two-Bone IK"

# The support folder of the in-Blender tests: the same rig builders.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))


def log(*parts) -> None:
    print("[window]", *parts, flush=True)


def run_steps(steps, finish) -> None:
    """Run generator ``steps`` from a timer: each ``yield seconds`` gives the window that long to
    redraw and take events. ``finish(error)`` runs at the end (error: a traceback or None); Blender
    quits after it."""

    def tick():
        try:
            delay = next(steps)
        except StopIteration:
            finish(None)
            _quit()
            return None
        except Exception:  # any failure of the driver itself is a failed run
            finish(traceback.format_exc())
            _quit()
            return None
        return float(delay)

    bpy.app.timers.register(tick, first_interval=1.0)


def _quit() -> None:
    """Quit Blender as a user does, so that a crash or hang at exit shows in its exit status: no
    save prompt (the file is a throw-away one), then Blender's own quit."""
    sys.stdout.flush()
    bpy.context.preferences.view.use_save_prompt = False
    window = bpy.context.window_manager.windows[0]
    with bpy.context.temp_override(window=window):
        bpy.ops.wm.quit_blender()


# --- geometry -------------------------------------------------------------------------------


def window():
    return bpy.context.window_manager.windows[0]


def view3d():
    """(area, its main region, its sidebar region, its HUD region or None) of the biggest 3D Viewport."""
    areas = [a for a in window().screen.areas if a.type == "VIEW_3D"]
    area = max(areas, key=lambda a: a.width * a.height)
    regions = {region.type: region for region in area.regions}
    return area, regions["WINDOW"], regions["UI"], regions.get("HUD")


def box_of(region) -> tuple[int, int, int, int]:
    """A region on screen: (x, y, width, height), y from the top as X counts it."""
    return region.x, window().height - region.y - region.height, region.width, region.height


def to_screen(region, point) -> tuple[int, int] | None:
    """A region-space 2D point (x right, y up) on screen."""
    if point is None:
        return None
    return round(region.x + point[0]), round(window().height - region.y - point[1])


def override(area, region):
    return bpy.context.temp_override(window=window(), screen=window().screen, area=area, region=region)


def redraw() -> None:
    """Draw the whole window now (the screenshot then shows this state)."""
    area, region, *_ = view3d()
    for each in window().screen.areas:
        each.tag_redraw()
    with override(area, region):
        bpy.ops.wm.redraw_timer(type="DRAW_WIN_SWAP", iterations=1)


def select_bone(pose_bone) -> None:
    """Select a pose bone and make it active: PoseBone.select from 5.2 (Bone.select is gone),
    Bone.select before."""
    pose_bone.id_data.data.bones.active = pose_bone.bone
    if hasattr(pose_bone, "select"):
        pose_bone.select = True
    else:
        pose_bone.bone.select = True


def show_tab():
    """Steps: make the sidebar show the extension's tab (it takes only a tab drawn in the last
    redraw)."""
    sidebar = view3d()[2]
    if sidebar.active_panel_category != TAB:
        redraw()
        yield 0.3
        sidebar = view3d()[2]
        sidebar.active_panel_category = TAB
    redraw()
    yield 0.3


# --- screenshots, text, input ----------------------------------------------------------------


def shoot(name: str) -> str:
    path = os.path.join(OUT, f"{name}.png")
    subprocess.run(["import", "-window", "root", path], check=True)
    return path


def crop(path: str, box, name: str, scale: int = 1, for_ocr: bool = False) -> str:
    x, y, w, h = box
    out = os.path.join(OUT, f"{name}.png")
    command = ["convert", path, "-crop", f"{w}x{h}+{x}+{y}", "+repage"]
    if scale != 1:
        command += ["-resize", f"{scale * 100}%"]
    if for_ocr:  # dark text on white, greyed-out text (an inactive button) as dark as the rest
        command += ["-colorspace", "Gray", "-negate", "-level", "0%,70%"]
    subprocess.run([*command, out], check=True)
    return out


def shrink(image: str) -> None:
    """Fewer colours, the same look: a picture small enough to commit."""
    subprocess.run(
        ["convert", image, "-dither", "None", "-colors", "64", "-strip", f"PNG8:{image}"], check=True
    )


def ocr(path: str, box, name: str) -> str:
    """The text in ``box`` of screenshot ``path``, read off a 2x crop."""
    image = crop(path, box, name, scale=2, for_ocr=True)
    result = subprocess.run(
        ["tesseract", image, "-", "--psm", "6"], capture_output=True, text=True, check=True
    )
    with open(os.path.join(OUT, f"{name}.txt"), "w") as file:
        file.write(result.stdout)
    return result.stdout


def ocr_words(path: str, box, name: str) -> list[tuple[str, int, int]]:
    """The words in ``box`` with their centres on screen: [(word, x, y)]."""
    image = crop(path, box, name, scale=2, for_ocr=True)
    result = subprocess.run(["tesseract", image, "-", "--psm", "11", "tsv"], capture_output=True, text=True)
    words = []
    for line in result.stdout.splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) == 12 and fields[11].strip():
            left, top, width, height = (int(v) for v in fields[6:10])
            words.append(
                (fields[11].strip(), box[0] + (left + width / 2) / 2, box[1] + (top + height / 2) / 2)
            )
    return words


def find_word(words, word: str):
    """The screen point of the first OCR word equal to ``word`` (punctuation ignored), or None."""
    for text, x, y in words:
        if re.sub(r"\W", "", text).lower() == word.lower():
            return int(x), int(y)
    return None


def find_phrase(words, first: str, second: str):
    """The screen point of ``second`` right after ``first`` (or of the two read as one word, as
    OCR reads "Two-Bone"), punctuation and case ignored; None when not there. Blender underlines
    a menu entry's accelerator letter, which OCR may read as a break in the word."""
    normal = [(re.sub(r"\W", "", text).lower(), x, y) for text, x, y in words]
    for index, (text, x, y) in enumerate(normal):
        if text == first + second or (text == second and index and normal[index - 1][0] == first):
            return int(x), int(y)
    return None


def xdotool(*arguments: str) -> None:
    subprocess.run(["xdotool", *arguments], check=True)


def click(point):
    """Steps: move the mouse to ``point``, let Blender see it there (a button or menu takes a press
    only where the pointer already is), then press and release."""
    xdotool("mousemove", str(point[0]), str(point[1]))
    yield 0.4
    xdotool("mousemove", str(point[0] + 1), str(point[1]))
    yield 0.3
    xdotool("click", "1")
    yield 0.3


def drag(start, end):
    """Steps: press at ``start``, move to ``end`` in a few steps, release."""
    xdotool("mousemove", str(start[0]), str(start[1]))
    yield 0.4
    xdotool("mousedown", "1")
    yield 0.3
    for fraction in (0.25, 0.5, 0.75, 1.0):
        x = start[0] + (end[0] - start[0]) * fraction
        y = start[1] + (end[1] - start[1]) * fraction
        xdotool("mousemove", str(int(x)), str(int(y)))
        yield 0.2
    xdotool("mouseup", "1")
    yield 0.5


def pixels(path: str, box) -> list[tuple[int, int, int]]:
    """The RGB (0-255) of every pixel in ``box`` of screenshot ``path``."""
    x, y, w, h = box
    result = subprocess.run(
        ["convert", path, "-crop", f"{w}x{h}+{x}+{y}", "+repage", "-depth", "8", "txt:-"],
        capture_output=True,
        text=True,
        check=True,
    )
    found = []
    for line in result.stdout.splitlines()[1:]:
        match = re.search(r"\((\d+),(\d+),(\d+)", line)
        if match:
            red, green, blue = (int(v) for v in match.groups())
            found.append((red, green, blue))
    return found


# --- results ---------------------------------------------------------------------------------


class Results:
    """Checks by name, written to $OUT/results.json for tests/window/report.py."""

    def __init__(self) -> None:
        self.checks: list[dict] = []

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append({"name": name, "ok": bool(ok), "detail": detail})
        log("PASS" if ok else "FAIL", name, "" if ok else detail)
        return ok

    def write(self, error: str | None, extra: dict | None = None) -> None:
        if error:
            self.checks.append({"name": "the driver ran to its end", "ok": False, "detail": error})
            log(error)
        data = {"blender": bpy.app.version_string, "checks": self.checks, **(extra or {})}
        with open(os.path.join(OUT, "results.json"), "w") as file:
            json.dump(data, file, indent=1)

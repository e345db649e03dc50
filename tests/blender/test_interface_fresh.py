# SPDX-License-Identifier: GPL-3.0-or-later
"""The panel and the overlay are right after every change, though the panel keeps what depends on
the rig's relations between redraws (chain/memo.py, docs/design.md "The interface's cost").

Each test draws as the panel does (``memo.drawing()`` around the readouts the panel shows), makes a
change a user makes (a target move, a frame change, a rig edit, an undo, a file load), updates as
Blender does before it redraws, and draws again: the readouts must be what a fresh read gives.
"""

import pathlib
import tempfile

import bpy
import pytest
from blender_rig import base_rig, make_empty, package

BENT_TARGET = (1.2, 0.0, 0.5)  # the base rig's target: reachable
FAR = (3.0, 0.0, 0.0)


def drawn(chain):
    """(kind, status line, row icon) as the panel draws them, within one draw."""
    status = package().ui.status
    with package().chain.memo.drawing():
        summary = package().chain.shortfall.summary(chain)
        state = status.chain_state(bpy.context, chain, summary)
        line = status.status_line(chain, summary)
        return state.kind, line[1] if line else "", status.row_icon(chain)


def fresh(chain):
    """The same, worked out with nothing kept."""
    status = package().ui.status
    state = status.chain_state(bpy.context, chain)
    line = status.status_line(chain)
    return state.kind, line[1] if line else "", status.row_icon(chain)


def overlay_colors():
    overlay = package().ui.overlay
    return [line.color for line in overlay.overlay_lines(bpy.context)][:1]


def chain_of(obj):
    return obj.two_bone_ik.chains[0]


@pytest.fixture
def leg(scene):
    obj, _ = base_rig()
    bpy.context.view_layer.update()
    assert drawn(chain_of(obj))[0] == "REACHABLE"
    yield obj
    package().chain.memo.forget()


def test_a_target_move_shows_at_once(leg):
    """Out of reach right after the target moves, in the panel, its row and the overlay."""
    overlay = package().ui.overlay
    assert overlay_colors() == [overlay.REACH_COLOR]
    bpy.data.objects["Target"].location = FAR
    bpy.context.view_layer.update()
    assert drawn(chain_of(leg)) == fresh(chain_of(leg)) == ("TOO_FAR", "", "CANCEL")
    assert overlay_colors() == [overlay.OUT_OF_REACH_COLOR]


def test_a_frame_change_shows_at_once(leg):
    """A keyed target: the panel follows the frame."""
    target = bpy.data.objects["Target"]
    target.keyframe_insert("location", frame=1)
    target.location = FAR
    target.keyframe_insert("location", frame=10)
    bpy.context.scene.frame_set(1)
    assert drawn(chain_of(leg))[0] == "REACHABLE"
    bpy.context.scene.frame_set(10)
    assert drawn(chain_of(leg)) == fresh(chain_of(leg)) == ("TOO_FAR", "", "CANCEL")


@pytest.mark.parametrize("edit", ["constraint", "driver", "parent"])
def test_a_rig_edit_that_makes_a_cycle_shows_at_once(leg, edit):
    """The target made to follow the thigh (a constraint, a driver or a parent): the kept answer
    "the target does not move with the chain" is forgotten, and the panel says it is a cycle."""
    target = bpy.data.objects["Target"]
    if edit == "constraint":
        constraint = target.constraints.new("COPY_LOCATION")
        constraint.target, constraint.subtarget = leg, "thigh"
        constraint.use_offset = True
    elif edit == "driver":
        driver = target.driver_add("location", 2).driver
        driver.type = "SCRIPTED"
        variable = driver.variables.new()
        variable.type = "TRANSFORMS"
        variable.targets[0].id, variable.targets[0].bone_target = leg, "thigh"
        variable.targets[0].transform_type = "ROT_X"
        driver.expression = "0.5 + var * 0"
    else:
        target.parent, target.parent_type, target.parent_bone = leg, "BONE", "thigh"
    bpy.context.view_layer.update()
    kind, _, _ = drawn(chain_of(leg))
    assert kind == fresh(chain_of(leg))[0] == "FAILED"
    assert "moves with the chain's own bones" in chain_of(leg).status


def test_a_constraint_added_to_the_network_shows_at_once(leg):
    """A constraint added by hand to a network bone: the kept list of what was added is forgotten."""
    names = package().network.naming.parts("thigh", "shin")
    leg.pose.bones[names.target].constraints.new("LIMIT_LOCATION")
    bpy.context.view_layer.update()
    _, line, _ = drawn(chain_of(leg))
    assert "was added to the chain's network" in line
    assert drawn(chain_of(leg)) == fresh(chain_of(leg))


def test_an_undo_shows_at_once(leg):
    """A cycle made and undone: the panel reads the undone rig."""
    bpy.ops.ed.undo_push(message="Before")
    bpy.ops.ed.undo_push(message="Before")
    target = bpy.data.objects["Target"]
    constraint = target.constraints.new("COPY_LOCATION")
    constraint.target, constraint.subtarget, constraint.use_offset = leg, "thigh", True
    bpy.ops.ed.undo_push(message="Cycle")
    bpy.context.view_layer.update()
    assert drawn(chain_of(bpy.data.objects[leg.name]))[0] == "FAILED"
    bpy.ops.ed.undo()
    bpy.context.view_layer.update()
    obj = bpy.data.objects["Leg"]
    assert drawn(chain_of(obj)) == fresh(chain_of(obj)) == ("REACHABLE", "", "CHECKMARK")
    bpy.ops.ed.redo()
    bpy.context.view_layer.update()
    assert drawn(chain_of(bpy.data.objects["Leg"]))[0] == "FAILED"


def test_a_file_load_shows_at_once(leg):
    """A file saved with a cycle, loaded after the panel kept "no cycle": the panel says cycle."""
    target = bpy.data.objects["Target"]
    constraint = target.constraints.new("COPY_LOCATION")
    constraint.target, constraint.subtarget, constraint.use_offset = leg, "thigh", True
    path = pathlib.Path(tempfile.mkdtemp(prefix="two_bone_ik_fresh_")) / "cycle.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path), copy=True)
    target.constraints.remove(constraint)
    bpy.context.view_layer.update()
    assert drawn(chain_of(leg))[0] == "REACHABLE"
    bpy.ops.wm.open_mainfile(filepath=str(path))
    bpy.context.view_layer.update()
    obj = bpy.data.objects["Leg"]
    assert drawn(chain_of(obj))[0] == fresh(chain_of(obj))[0] == "FAILED"


def test_nothing_runs_per_update_until_the_panel_draws(scene):
    """No handler of the kept readouts until a draw keeps one; scripts never keep any."""
    memo = package().chain.memo
    memo.forget()
    handlers = bpy.app.handlers.depsgraph_update_post
    obj, chain = base_rig()
    for frame in range(1, 4):
        bpy.context.scene.frame_set(frame)
        assert chain.state == "OK" and not memo._kept  # a script's read keeps nothing
    assert memo.two_bone_ik_forget_relations not in handlers
    drawn(chain_of(obj))
    assert memo._kept and memo.two_bone_ik_forget_relations in handlers
    # A pose change keeps the relations' answers; a relations change forgets them.
    bpy.data.objects["Target"].location.x += 0.01
    bpy.context.view_layer.update()
    assert memo._kept
    make_empty("Other", (0, 0, 0)).constraints.new("COPY_LOCATION").target = obj
    bpy.context.view_layer.update()
    assert not memo._kept
    memo.forget()
    assert memo.two_bone_ik_forget_relations not in handlers


def test_the_overlay_reads_no_status(scene):
    """The overlay's lines come from the pose alone: no status is worked out per redraw."""
    base_rig()
    reading = package().chain.reading
    read = reading.read
    calls = []
    reading.read = lambda chain: calls.append(chain) or read(chain)
    try:
        assert package().ui.overlay.overlay_lines(bpy.context)
    finally:
        reading.read = read
    assert calls == []

# SPDX-License-Identifier: GPL-3.0-or-later
"""A chain solves a leg in real Blender: evaluated bone tails land on the solver's joint and end."""

import bpy
from blender_rig import add_chain, assert_close, make_empty, make_leg, world_tail

from solver import solve_two_bone_ik


def test_leg_reaches_target(scene):
    """Moving the target and updating puts the shin tail on the target and the knee toward the pole."""
    obj = make_leg(thigh=((0, 0, 0), (0, 1, 0)), shin=((0, 1, 0), (0, 2, 0)))
    target = make_empty("Target", (1.2, 0, 0.5))
    pole = make_empty("Pole", (1.2, 0.5, 0.5))
    chain = add_chain(obj, target, pole)
    bpy.context.view_layer.update()
    assert chain.status == ""
    assert_close(world_tail(obj, "thigh"), (0.6, 0.7599342, 0.25), 2e-5)
    assert_close(world_tail(obj, "shin"), (1.2, 0, 0.5), 2e-5)
    assert chain.reachable
    target.location = (0.3, 1.0, -0.4)
    bpy.context.view_layer.update()
    expected = solve_two_bone_ik((0, 0, 0), (0.3, 1.0, -0.4), (1.2, 0.5, 0.5), 1.0, 1.0)
    assert_close(world_tail(obj, "thigh"), expected.joint, 2e-5)
    assert_close(world_tail(obj, "shin"), expected.end, 2e-5)

# SPDX-License-Identifier: GPL-3.0-or-later
"""Two-Bone IK: analytic two-bone IK chains for Blender (extension entry point; wiring only)."""

from . import driver, operators, ui

_modules = (driver, operators, ui)


def register() -> None:
    for module in _modules:
        module.register()


def unregister() -> None:
    for module in reversed(_modules):
        module.unregister()

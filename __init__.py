# SPDX-License-Identifier: GPL-3.0-or-later
"""Two-Bone IK: analytic two-bone IK chains for Blender (extension entry point; wiring only).

The Blender-facing modules are imported in register(), not at import time, so importing this
package (pytest collects the repository root as a package) needs neither bpy nor mathutils: the
solver tests run on any Python.
"""


def _modules():
    from . import driver, operators, ui

    return (driver, operators, ui)


def register() -> None:
    for module in _modules():
        module.register()


def unregister() -> None:
    for module in reversed(_modules()):
        module.unregister()

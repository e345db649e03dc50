# SPDX-License-Identifier: GPL-3.0-or-later
"""Two-Bone IK: analytic two-bone IK chains for Blender (extension entry point; wiring only).

Every module that registers something has a ``register``/``unregister`` pair (its classes through
``bpy.utils.register_classes_factory``); this file calls them in order and in reverse. They are
imported in register(), not at import time, so importing this package (pytest collects the
repository root as a package) needs neither bpy nor mathutils: the solver tests run on any Python.
"""


def _modules():
    from . import cli, operators
    from .driver import handlers, properties
    from .ui import menu, overlay, panel

    # The chain properties before the handlers that read them; the overlay's toggle before the
    # panel that shows it; the command line last.
    return (properties, handlers, operators, overlay, panel, menu, cli)


def register() -> None:
    """Register every module; when one fails, take back what was registered (its own classes
    included) so the next enable starts clean, and raise."""
    import bpy

    done: list = []
    for module in _modules():
        try:
            module.register()
        except Exception:
            for cls in reversed(getattr(module, "classes", ())):
                if cls.is_registered:
                    bpy.utils.unregister_class(cls)
            for registered in reversed(done):
                registered.unregister()
            raise
        done.append(module)


def unregister() -> None:
    for module in reversed(_modules()):
        module.unregister()

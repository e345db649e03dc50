# SPDX-License-Identifier: GPL-3.0-or-later
"""Two-Bone IK: analytic two-bone IK chains for Blender (extension entry point; wiring only).

Every module that registers something has a ``register``/``unregister`` pair (its classes through
``bpy.utils.register_classes_factory``); this file calls them in order and in reverse. They are
imported in register(), not at import time, so importing this package (pytest collects the
repository root as a package) needs neither bpy nor mathutils: the solver tests run on any Python.
"""

import atexit


def _release_bpy_at_exit(root: str) -> None:
    """Let Blender shut down before Python does: the bpy 4.2 exit crash and 4.5 exit hang.

    Blender keeps objects of ours past Python's shutdown (4.2 keeps each unregistered
    PropertyGroup class, and with it its update and get callbacks), and through their globals the
    ``bpy`` module, whose release is what shuts Blender down: without it a C++ static destructor
    later crashes (4.2) or waits for ever (4.5). Python empties the globals of each module still
    alive and in ``sys.modules`` at shutdown, so ours are kept alive until then, and the globals of
    copies already unloaded (reload, uninstall) are emptied now. Reads no module globals: they may
    be emptied already. docs/blender-4.2-exit-crash.md has the measurements.
    """
    import gc
    import sys

    def ours(name) -> bool:
        return isinstance(name, str) and (name == root or name.startswith(root + "."))

    loaded = set()
    for name, module in list(sys.modules.items()):
        if ours(name):
            vars(module)["_module_until_exit"] = module
            loaded.add(id(vars(module)))
    for found in gc.get_objects():
        if type(found) is dict and "__builtins__" in found and ours(found.get("__name__")):
            if id(found) not in loaded:
                found.clear()


def _modules():
    from . import cli, operators
    from .chain import handlers, properties
    from .ui import menu, overlay, panel

    # The chain properties before the handlers that read them; the overlay's toggle before the
    # panel that shows it; the command line last.
    return (properties, handlers, operators, overlay, panel, menu, cli)


def register() -> None:
    """Register every module; when one fails, take back what was registered (its own classes
    included) so the next enable starts clean, and raise."""
    import bpy

    # After Blender's own exit callback is registered, so this one runs first (last in, first out);
    # kept after unregister, since 4.2 keeps our classes after a disable too.
    atexit.unregister(_release_bpy_at_exit)
    atexit.register(_release_bpy_at_exit, __name__)
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

# SPDX-License-Identifier: GPL-3.0-or-later
"""The constraint-like evaluator: chain storage, handlers, armature-space solve and pose write-back."""

from . import handlers, properties

_modules = (properties, handlers)


def register() -> None:
    for module in _modules:
        module.register()


def unregister() -> None:
    for module in reversed(_modules):
        module.unregister()

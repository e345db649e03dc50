# SPDX-License-Identifier: GPL-3.0-or-later
"""The constraint-like evaluator: chain storage, handlers, armature-space solve and pose write-back.

Its modules that register something (properties, handlers) are wired by the package root.
"""

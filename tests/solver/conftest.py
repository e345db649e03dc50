# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure-solver tests: no Blender. Makes this folder's helper modules importable
(solver_reference, solver_rigs) under pytest's importlib import mode."""

import pathlib
import sys

_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

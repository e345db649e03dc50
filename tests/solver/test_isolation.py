# SPDX-License-Identifier: GPL-3.0-or-later
"""The solver stands alone: no bpy, no mathutils, and numpy only for the batch form."""

import ast
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
SOLVER = REPO / "solver"


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )


def test_importable_without_blender_and_numpy_loaded_lazily():
    """`import solver` with bpy and mathutils blocked works and loads no numpy; the batch form
    loads it on first use."""
    result = _run(
        "import sys\n"
        "sys.modules['bpy'] = None\n"
        "sys.modules['mathutils'] = None\n"
        "import solver\n"
        "print(solver.solve_two_bone_ik((0, 0, 0), (6, 0, 0), (0, 1, 0), 5, 5))\n"
        "assert 'numpy' not in sys.modules, 'import solver loaded numpy'\n"
        "print(solver.solve_two_bone_ik_batch([[0, 0, 0]], [[6, 0, 0]], [[0, 1, 0]], 5, 5).joints.tolist())\n"
        "assert 'numpy' in sys.modules\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "TwoBoneIKResult(joint=(3.0, 4.0, 0.0), end=(6.0, 0.0, 0.0), reachable=True)",
        "[[3.0, 4.0, 0.0]]",
    ]


def test_scalar_form_works_without_numpy():
    """With numpy unimportable the scalar form still works; only the batch form needs it."""
    result = _run(
        "import sys\n"
        "sys.modules['numpy'] = None\n"
        "sys.modules['bpy'] = None\n"
        "sys.modules['mathutils'] = None\n"
        "import solver\n"
        "print(solver.solve_two_bone_ik((0, 0, 0), (5, 0, 0), (0, 1, 0), 1, 1).reachable)\n"
        "try:\n"
        "    solver.solve_two_bone_ik_batch\n"
        "except ImportError:\n"
        "    print('batch needs numpy')\n"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["False", "batch needs numpy"]


def _imports(path: pathlib.Path) -> set:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_solver_modules_import_no_blender_and_numpy_only_in_the_batch_modules():
    numpy_users = {"batch.py", "_batch_core.py"}
    for path in sorted(SOLVER.glob("*.py")):
        imports = _imports(path)
        assert not imports & {"bpy", "mathutils"}, path.name
        if path.name not in numpy_users:
            assert "numpy" not in imports, path.name


def test_every_file_starts_with_the_spdx_line():
    files = [*SOLVER.glob("*.py"), *(REPO / "tests" / "solver").glob("*.py"), REPO / "bench" / "solver.py"]
    for path in files:
        assert path.read_text().startswith("# SPDX-License-Identifier: GPL-3.0-or-later\n"), path

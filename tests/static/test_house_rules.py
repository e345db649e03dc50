# SPDX-License-Identifier: GPL-3.0-or-later
"""The house's layout, checked on the shipped source (no Blender needed).

- The layers import one way (docs/development.md): ``solver`` < the root modules
  (``compat``) and ``network`` < ``chain`` < ``animation`` and ``ui`` < ``operators`` and ``cli``;
  nothing imports a layer above its own.
- Every shipped function and class has a caller: a name that appears nowhere but in its own
  definition is dead code (Blender's hooks, which Blender calls, excepted).
- The network is written once (network/spec.py): the documented table is the spec's.
"""

import ast
import collections
import pathlib

import network_table
from shipped import REPO, network_spec, parsed

# A package's rank: a module may import its own rank and below.
RANKS = {"solver": 0, "": 1, "network": 1, "chain": 2, "animation": 3, "ui": 3, "operators": 4, "cli": 4}
# Methods Blender (or Python) calls by name.
HOOKS = {
    "register",
    "unregister",
    "poll",
    "execute",
    "invoke",
    "modal",
    "draw",
    "draw_item",
    "draw_header",
    "cancel",
    "check",
    "__enter__",
    "__exit__",
    "__getitem__",
    "__getattr__",
    # argparse.ArgumentParser's, which the command line's parser overrides and argparse calls.
    "exit",
    "error",
}


def package_of(name: str) -> str:
    """'network' for network/build.py, '' for a module at the root."""
    parts = pathlib.PurePosixPath(name).parts
    return parts[0] if len(parts) > 1 else ""


def imported_packages(name: str, tree: ast.Module) -> list[tuple[int, str]]:
    """(line, package) of each relative import of ``name`` that leaves its own package."""
    own = package_of(name)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        depth = len(pathlib.PurePosixPath(name).parts) - 1  # folders below the root
        if node.level <= depth:
            continue  # within its own package
        module = node.module or ""
        if module:
            found.append((node.lineno, module.split(".")[0]))
        else:  # "from .. import compat"
            found += [(node.lineno, alias.name if alias.name in RANKS else "") for alias in node.names]
    return [(line, package) for line, package in found if package != own]


def layer_violations(files: list[tuple[str, ast.Module]]) -> list[str]:
    """Imports of ``files`` that go up; the root ``__init__.py`` is wiring and registers every layer."""
    return [
        f"{name}:{line} imports {package or 'the root'}"
        for name, tree in files
        if name != "__init__.py"
        for line, package in imported_packages(name, tree)
        if RANKS.get(package, 0) > RANKS.get(package_of(name), 0)
    ]


def test_layers_import_one_way():
    assert layer_violations(parsed()) == []


def test_network_imports_no_layer_above_it():
    """The issue's own check: nothing under network/ imports chain/, animation/, operators/, ui/."""
    assert [
        found
        for name, tree in parsed()
        if package_of(name) == "network"
        for found in imported_packages(name, tree)
        if found[1] in {"chain", "animation", "operators", "ui", "cli"}
    ] == []


class _References(ast.NodeVisitor):
    """How often each name is read (a Name loaded, an attribute), a function's own local
    variables aside: a local ``solved = {}`` is not a call of a function ``solved``."""

    def __init__(self) -> None:
        self.count: collections.Counter = collections.Counter()
        self.scopes: list[set[str]] = [set()]

    def visit_FunctionDef(self, node) -> None:
        local = {argument.arg for argument in ast.walk(node.args) if isinstance(argument, ast.arg)}
        local |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        self.scopes.append(local)
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_Name(self, node) -> None:
        if isinstance(node.ctx, ast.Load) and node.id not in self.scopes[-1]:
            self.count[node.id] += 1

    def visit_Attribute(self, node) -> None:
        self.count[node.attr] += 1
        self.generic_visit(node)


def references(node) -> collections.Counter:
    found = _References()
    found.visit(node)
    return found.count


def public(trees) -> set[str]:
    """Names a package offers to scripts in its ``__all__`` (the solver's scalar and batch forms)."""
    names = set()
    for _, tree in trees:
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
                names |= {element.value for element in node.value.elts}  # type: ignore[attr-defined]
    return names


def dead_code(trees) -> list[str]:
    """Each shipped function or class read by no shipped code but its own body (recursion), by its
    definition's place: Blender's hooks, Python's (dunders, argparse's), and the public names
    aside."""
    everywhere: collections.Counter = collections.Counter()
    for _, tree in trees:
        everywhere += references(tree)
    spared = HOOKS | public(trees)
    dead = []
    for name, tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.ClassDef) or node.name in spared:
                continue
            if node.name.startswith("__"):  # Python calls these
                continue
            if everywhere[node.name] - references(node)[node.name] <= 0:
                dead.append(f"{name}:{node.lineno} {node.name}")
    return dead


def test_every_function_has_a_caller():
    """No shipped function or class that shipped code never reads (a test or a doc alone is no
    caller): read from the syntax trees, so a word in a comment or a local variable of the same
    name does not count."""
    assert dead_code(parsed()) == []


def test_the_dead_code_rule_finds_what_it_should():
    source = """
def used(): return helper()
def helper(): return 1
def recursive(n): return recursive(n - 1) if n else 0
def shadowed():
    solved = {}
    return solved, helper
def solved(): return 2
"""
    found = dead_code([("m.py", ast.parse(source))])
    assert found == ["m.py:2 used", "m.py:4 recursive", "m.py:5 shadowed", "m.py:8 solved"]


def test_the_documented_network_is_the_spec():
    """docs/how-it-works.md shows the network's table as network/spec.py generates it."""
    text = (REPO / "docs" / "how-it-works.md").read_text(encoding="utf-8")
    shown = text.split("<!-- network table: begin -->\n")[1].split("\n<!-- network table: end -->")[0]
    table = network_table.table(network_spec())
    assert shown == table, f"paste the table network/spec.py makes into docs/how-it-works.md:\n{table}"


def test_every_driver_rule_is_an_expression():
    """Each rule the spec names is a function of solver/expressions.py (or a roll offset)."""
    from solver import expressions

    spec = network_spec()
    drivers = [spec.INFLUENCE] + [
        driver
        for bone in spec.NETWORK
        for driver in (*bone.drivers, *(c.influence for c in bone.constraints if c.influence))
    ]
    for driver in drivers:
        assert driver.rule in {"upper_roll", "lower_roll"} or callable(
            getattr(expressions, driver.rule, None)
        )

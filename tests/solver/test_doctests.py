# SPDX-License-Identifier: GPL-3.0-or-later
"""The examples in the solver's docstrings run and print what they say."""

import doctest
import importlib

import pytest

MODULES = ["solver", "solver.scalar", "solver.batch"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, attempted = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert attempted > 0, f"{name} has no examples to run"
    assert failures == 0

"""The docstring examples of the public algorithms run (published optima: Zipkin 2008, Zheng & Federgruen 1991).

Run here rather than by `--doctest-modules` on the command line so that `make test` and `make test-latest`
(which run `pytest tests`) cover them; a failing example prints doctest's own report.
"""

import doctest

import pytest

from inventory import dp, dynamics, montecarlo, policies, search

MODULES = [dp, search, montecarlo, dynamics, policies]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=True)
    assert result.failed == 0
    assert result.attempted > 0  # each module documents at least one worked example

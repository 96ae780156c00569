"""The examples in the docstrings of the pure donation pairing run as tests."""

from __future__ import annotations

import doctest

from aotc.passes.donation import pairing


def test_pairing_doctests():
    results = doctest.testmod(pairing, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0
    assert results.failed == 0

"""numpy's functions that write into an array (``copyto``, ``putmask``, ``place``),
against numpy: each writes into a copy of the input, and the written array is returned.
(Item assignment, augmented assignment and views are in tests/test_mutation.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import assert_same, jit_call

X = np.linspace(-2.0, 3.0, 12).reshape(3, 4)

WRITES = {
    "copyto": lambda m, a: m.copyto(a, a[::-1] * 2.0),
    "copyto where": lambda m, a: m.copyto(a, 0.0, where=a > 1.0),
    "copyto broadcast": lambda m, a: m.copyto(a, np.arange(4.0)),
    "putmask": lambda m, a: m.putmask(a, a < 0, np.array([7.0, 8.0, 9.0])),
    "place": lambda m, a: m.place(a, a > 0.5, [1.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writes_into_the_array(name):
    def run(m, a):
        WRITES[name](m, a)
        return a

    import aotc.numpy as anp

    want = run(np, X.copy())
    got = jit_call(lambda a: run(anp, a) * 1.0, X.copy())
    assert_same(got, want, name=name)


def test_copyto_follows_its_casting_rule():
    import aotc

    with pytest.raises(TypeError, match="according to the rule 'same_kind'"):
        aotc.jit(lambda a, b: np.copyto(a, b)).lower(np.zeros(3, np.int32), np.ones(3))

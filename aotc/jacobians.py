"""``aotc.jacrev``, ``jacfwd`` and ``hessian``: Jacobians as ``vmap`` of ``vjp`` (one
pullback per output element) or of ``jvp`` (one tangent per input element) over a basis,
with JAX's semantics (result shape ``out.shape + arg.shape``, ``argnums``, ``has_aux``)."""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from . import tree_util
from .autodiff import (DifferentiationError, _argnums, _jit, _tracing, check_complex, jvp,
                       vjp)


def jacrev(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian by reverse mode (``jax.jacrev``): one pullback per output element,
    batched with ``vmap``; result shape ``out.shape + arg.shape``. Complex outputs need
    ``holomorphic`` (and complex arguments), as JAX's."""
    return _jacobian(fun, argnums, has_aux, "jacrev", holomorphic)


def jacfwd(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """The Jacobian by forward mode (``jax.jacfwd``): one tangent per input element,
    batched with ``vmap``; result shape ``out.shape + arg.shape``. Complex arguments need
    ``holomorphic`` (and complex outputs), as JAX's."""
    return _jacobian(fun, argnums, has_aux, "jacfwd", holomorphic)


def hessian(fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False):
    """``jacfwd(jacrev(fun))`` (``jax.hessian``)."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


def _check_dtypes(name: str, kind: str, holomorphic: bool, inputs, outputs) -> None:
    """JAX's rules: holomorphic Jacobians of complex functions of complex arguments;
    otherwise jacrev's outputs and jacfwd's inputs are real (a complex one's Jacobian as
    a real-linear map is not one complex matrix)."""
    if holomorphic:
        check_complex(name, "inputs", inputs)
        check_complex(name, "outputs", outputs)
        return
    what, values = ("outputs", outputs) if kind == "jacrev" else ("inputs", inputs)
    for v in tree_util.tree_leaves(values):
        if np.dtype(getattr(v, "dtype", None) or np.result_type(v)).kind == "c":
            raise DifferentiationError(
                f"{name} requires real-valued {what} ({what[:-1]} dtype that is a sub-dtype "
                f"of np.floating), but got {np.dtype(v.dtype).name}. For holomorphic "
                f"differentiation, pass holomorphic=True; for a non-holomorphic function, "
                f"use {'vjp' if kind == 'jacrev' else 'jvp'} directly")


def _basis(x):
    """The unit vectors of ``x``'s elements, each shaped as ``x``: ``(x.size, *x.shape)``."""
    from . import numpy as anp

    size = int(np.prod(np.shape(x)))
    return anp.eye(size, dtype=x.dtype).reshape((size,) + tuple(np.shape(x)))


def _one_hot(leaves: list, k: int, value) -> list:
    """``value`` at position ``k``, zeros shaped as the other leaves."""
    from . import numpy as anp

    return [value if j == k else anp.zeros(np.shape(q), q.dtype) for j, q in enumerate(leaves)]


def _jacobian(fun, argnums, has_aux, kind, holomorphic):
    from .vmapping import vmap

    @functools.wraps(fun)
    def jacobian(*args):
        if not _tracing():
            return _jit(jacobian)(*args)
        from . import numpy as anp

        name = f"{kind}({getattr(fun, '__name__', 'function')})"
        nums = _argnums(argnums, len(args), name)

        def partial_fun(*selected):
            full = list(args)
            for n, v in zip(nums, selected):
                full[n] = v
            return fun(*full)

        selected = tuple(args[n] for n in nums)
        if has_aux:
            out, aux = fun(*args)
        else:
            out, aux = fun(*args), None
        out_flat, out_tree = tree_util.tree_flatten(out)
        in_flat, in_tree = tree_util.tree_flatten(selected)
        _check_dtypes(name, kind, holomorphic, in_flat, out_flat)
        differentiated = (lambda *s: partial_fun(*s)[0]) if has_aux else partial_fun
        if kind == "jacrev":  # one pullback per output element
            per_out = []
            for k, o in enumerate(out_flat):
                def row(sel, ct, k=k):
                    cts = out_tree.unflatten(_one_hot(out_flat, k, ct))
                    return vjp(differentiated, *sel)[1](cts)

                rows = tree_util.tree_leaves(vmap(row, in_axes=(None, 0))(selected, _basis(o)))
                per_out.append([anp.reshape(r, np.shape(o) + np.shape(x))
                                for r, x in zip(rows, in_flat)])
        else:  # one tangent per input element
            per_in = []
            for i, x in enumerate(in_flat):
                def column(sel, t, i=i):
                    ts = tuple(in_tree.unflatten(_one_hot(in_flat, i, t)))
                    return jvp(differentiated, sel, ts)[1]

                cols = tree_util.tree_leaves(vmap(column, in_axes=(None, 0))(selected,
                                                                             _basis(x)))
                per_in.append([anp.moveaxis(anp.reshape(c, (c.shape[0],) + np.shape(o)), 0, -1)
                               .reshape(np.shape(o) + np.shape(x))
                               for c, o in zip(cols, out_flat)])
            per_out = [[per_in[i][k] for i in range(len(in_flat))]
                       for k in range(len(out_flat))]
        trees = [in_tree.unflatten(row) for row in per_out]
        jac = out_tree.unflatten([t if not isinstance(argnums, int) else t[0] for t in trees])
        return (jac, aux) if has_aux else jac

    return jacobian


__all__ = ["jacrev", "jacfwd", "hessian"]

"""A fuzzer of whole programs: random numpy programs compiled by aotc, compared with numpy.

A program is Python source (``programs.Program.source``): a function of arrays, Python
scalars and static ints that applies ops from the table in ``ops.py`` (elementwise,
transcendental, integer division, bitwise, reductions, contractions, convolutions, ``.at``
updates and scatters, gathers, shape ops, casts between every dtype, ``lax.cond``,
``fori_loop``, ``scan`` and ``while_loop``) and returns one to three of its values. It
runs with ``m = numpy`` (the reference) and with ``m = aotc.numpy`` under ``aotc.jit``,
under ``vmap`` (against a loop), with donated arguments, and exported and loaded by the
runtime on local-sync and local-task (``execute.py``).

Inputs mix the dtypes' edge values (NaN, infinities, -0.0, integer extremes, huge and
tiny normal floats) with random ones, in shapes up to 256 per dimension. Results are
compared against a forward error bound carried with every value (``bounds.py``): zero,
so bit for bit, for chains of correctly rounded ops; otherwise grown op by op from the
op's kind (ulps of a math function, the summation error of a reduction) and from how
the op amplifies its inputs' bounds, measured on the reference by perturbing them. A
step whose result the bounds cannot pin down (a comparison, rounding or integer cast of
an inexact value that perturbation flips, a float-to-int cast numpy leaves undefined, a
subnormal result, which IREE's CPU runtime flushes) is redrawn while generating.

``tests/test_fuzz.py`` runs a fixed-seed slice in CI; ``python -m tests.fuzz --programs
10000`` is the long run (see ``__main__.py``).
"""

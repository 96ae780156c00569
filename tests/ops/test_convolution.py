"""lax.conv_general_dilated, lax.conv, nn.max_pool and nn.avg_pool against direct numpy
references (a loop over window offsets with one np.einsum each), and against JAX when it
is installed.

Tolerances: float32 results rtol 1e-5, atol 1e-5 against a float64 reference (sums of at
most 108 products of values in [-1, 1]); float64 rtol 1e-12, atol 1e-12; integers exact.
Many configurations share one compiled function per dimensionality (compiles dominate
the time).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import aotc
import aotc.lax as alax
import aotc.nn as ann
from aotc.errors import TracingError, UnsupportedDtypeError, UnsupportedOpError

from .conftest import jit_call, raises_match

TOL = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}


# ---- numpy references -------------------------------------------------------------------

def same_pads(sizes, windows, strides, lower=False):
    pads = []
    for n, k, s in zip(sizes, windows, strides):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total - total // 2, total // 2) if lower else (total // 2, total - total // 2))
    return pads


def pad_and_dilate(x, pads, dilation, value):
    """x: (N, spatial..., C). Dilates the spatial axes, pads (negative pads crop)."""
    spatial = [(n - 1) * d + 1 if n else 0 for n, d in zip(x.shape[1:-1], dilation)]
    shape = [x.shape[0]] + spatial + [x.shape[-1]]
    dilated = np.full(shape, value, x.dtype)
    dilated[(slice(None),) + tuple(slice(None, None, d) for d in dilation)] = x
    grown = np.pad(dilated, [(0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in pads] + [(0, 0)],
                   constant_values=value)
    crop = tuple(slice(max(-lo, 0), grown.shape[i + 1] - max(-hi, 0))
                 for i, (lo, hi) in enumerate(pads))
    return grown[(slice(None),) + crop]


def window_slices(offset, dilation, out_sizes, strides):
    return tuple(slice(o * r, o * r + (m - 1) * s + 1, s)
                 for o, r, m, s in zip(offset, dilation, out_sizes, strides))


def conv_reference(x, w, strides, padding, lhs_dilation, rhs_dilation, specs, groups, dtype):
    """The convolution computed in ``dtype`` by summing one einsum per kernel offset."""
    lhs_spec, rhs_spec, out_spec = specs
    spatial = [c for c in rhs_spec if c not in "OI"]
    rank = len(spatial)
    xc = np.transpose(x, [lhs_spec.index(c) for c in ["N", *spatial, "C"]]).astype(dtype)
    wc = np.transpose(w, [rhs_spec.index(c) for c in [*spatial, "I", "O"]]).astype(dtype)
    lhs_dilation = lhs_dilation or (1,) * rank
    rhs_dilation = rhs_dilation or (1,) * rank
    windows = wc.shape[:rank]
    if isinstance(padding, str):
        if padding == "VALID":
            padding = [(0, 0)] * rank
        else:
            dilated = [(k - 1) * r + 1 for k, r in zip(windows, rhs_dilation)]
            padding = same_pads(xc.shape[1:-1], dilated, strides, lower=padding == "SAME_LOWER")
    xp = pad_and_dilate(xc, padding, lhs_dilation, 0)
    out_sizes = [max((n - ((k - 1) * r + 1)) // s + 1, 0)
                 for n, k, r, s in zip(xp.shape[1:-1], windows, rhs_dilation, strides)]
    channels, features = xc.shape[-1], wc.shape[-1]
    xg = xp.reshape(xp.shape[:-1] + (groups, channels // groups))
    wg = wc.reshape(windows + (channels // groups, groups, features // groups))
    out = np.zeros([xp.shape[0], *out_sizes, groups, features // groups], dtype)
    if 0 not in out_sizes:
        for offset in np.ndindex(*windows):
            patch = xg[(slice(None),) + window_slices(offset, rhs_dilation, out_sizes, strides)]
            out += np.einsum("n...gc,cgf->n...gf", patch, wg[offset])
    out = out.reshape(out.shape[:-2] + (features,))
    return np.transpose(out, [["N", *spatial, "C"].index(c) for c in out_spec])


def pool_reference(x, window, strides, padding, kind, count_include_pad=True):
    """flax.linen-style pooling of (batch..., spatial..., C) with numpy loops."""
    rank = len(window)
    strides = strides or (1,) * rank
    batch_shape = x.shape[: x.ndim - rank - 1]
    xc = x.reshape((-1,) + x.shape[len(batch_shape):]).astype(np.float64)
    if isinstance(padding, str):
        padding = ([(0, 0)] * rank if padding == "VALID"
                   else same_pads(xc.shape[1:-1], window, strides))
    fill = -np.inf if kind == "max" else 0.0
    xp = pad_and_dilate(xc, padding, (1,) * rank, fill)
    ones = pad_and_dilate(np.ones((1,) + xc.shape[1:-1] + (1,)), padding, (1,) * rank, 0.0)
    out_sizes = [max((n - k) // s + 1, 0) for n, k, s in zip(xp.shape[1:-1], window, strides)]
    out = np.full([xp.shape[0], *out_sizes, xp.shape[-1]], fill)
    count = np.zeros([1, *out_sizes, 1])
    for offset in np.ndindex(*window):
        sl = (slice(None),) + window_slices(offset, (1,) * rank, out_sizes, strides)
        out = np.maximum(out, xp[sl]) if kind == "max" else out + xp[sl]
        count += ones[sl]
    if kind == "avg":
        out = out / (np.prod(window) if count_include_pad else count)
    return out.reshape(batch_shape + out.shape[1:]).astype(x.dtype)


# ---- the configurations -------------------------------------------------------------------

LAYOUTS = {
    1: [("NWC", "WIO", "NWC"), ("NCW", "OIW", "NCW")],
    2: [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW")],
    3: [("NDHWC", "DHWIO", "NDHWC"), ("NCDHW", "OIDHW", "NCDHW")],
}
SPATIAL = {1: (9,), 2: (7, 6), 3: (5, 4, 5)}
WINDOW = {1: (3,), 2: (3, 2), 3: (2, 3, 2)}
BATCH, CHANNELS = 2, 4
# feature groups: (feature_group_count, kernel input features I, output features O)
GROUPS = {"g1": (1, 4, 6), "g2": (2, 2, 6), "depthwise": (4, 1, 8), "depthwise1": (4, 1, 4)}
GRID_GROUPS = ("g1", "g2", "depthwise")
PADDINGS = {1: ["SAME", "VALID", [(2, 1)]], 2: ["SAME", "VALID", [(1, 2), (0, 1)]],
            3: ["SAME", "VALID", [(1, 0), (0, 2), (1, 1)]]}


def layout_shape(spec, sizes: dict) -> tuple:
    return tuple(sizes[c] for c in spec)


def operand_shapes(rank, specs, group):
    _, i, o = GROUPS[group]
    spatial_letters = [c for c in specs[1] if c not in "OI"]
    lhs = dict(zip(spatial_letters, SPATIAL[rank]), N=BATCH, C=CHANNELS)
    rhs = dict(zip(spatial_letters, WINDOW[rank]), I=i, O=o)
    return layout_shape(specs[0], lhs), layout_shape(specs[1], rhs)


def grid(rank):
    """Every layout x stride x padding x rhs dilation x feature grouping; 3-D keeps the
    grouping product only for its first layout (compile time)."""
    cases = []
    for specs, stride, padding, dilation, group in itertools.product(
            LAYOUTS[rank], (1, 2), PADDINGS[rank], (1, 2), GRID_GROUPS):
        if rank == 3 and specs != LAYOUTS[3][0] and group != "g1":
            continue
        cases.append(dict(specs=specs, strides=(stride,) * rank, padding=padding,
                          rhs_dilation=(dilation,) * rank, group=group))
    return cases


EXTRA = [  # 2-D cases outside the grid
    dict(specs=("NHWC", "HWIO", "NHWC"), strides=(1, 2), padding=[(2, 1), (1, 2)],
         lhs_dilation=(2, 3), rhs_dilation=(1, 1), group="g1"),
    dict(specs=("NCHW", "OIHW", "NCHW"), strides=(2, 1), padding=[(-1, 2), (1, -1)],
         lhs_dilation=(1, 2), rhs_dilation=(2, 1), group="g2"),
    dict(specs=("NHWC", "HWIO", "NHWC"), strides=(2, 2), padding="SAME_LOWER", group="g1"),
    dict(specs=("NCHW", "HWIO", "NHWC"), strides=(1, 1), padding="SAME", group="g2"),
    dict(specs=("NHWC", "OIHW", "NCHW"), strides=(2, 1), padding="VALID", group="depthwise"),
    dict(specs=("HWCN", "IOHW", "CNWH"), strides=(1, 2), padding=[(1, 1), (2, 0)], group="g1"),
    dict(specs=("NHWC", "HWIO", "NHWC"), strides=(1, 2), padding="SAME", rhs_dilation=(2, 1),
         group="depthwise1"),
]
# One depthwise convolution without a channel multiplier per dimensionality.
DEPTHWISE1 = {rank: dict(specs=LAYOUTS[rank][1], strides=(2,) * rank, padding="SAME",
                         group="depthwise1")
              for rank in (1, 3)}


def make_operands(rank, cases, dtype, seed):
    rng = np.random.default_rng(seed)
    arrays = []
    for case in cases:
        lhs_shape, rhs_shape = operand_shapes(rank, case["specs"], case["group"])
        arrays.append(rng.uniform(-1, 1, lhs_shape).astype(dtype))
        arrays.append(rng.uniform(-1, 1, rhs_shape).astype(dtype))
    return arrays


def conv_of(lax, case, x, w, **kw):
    return lax.conv_general_dilated(
        x, w, case["strides"], case["padding"], lhs_dilation=case.get("lhs_dilation"),
        rhs_dilation=case.get("rhs_dilation"), dimension_numbers=case["specs"],
        feature_group_count=GROUPS[case["group"]][0], **kw)


def run_cases(lax, cases, arrays, **kw):
    return [conv_of(lax, c, x, w, **kw) for c, x, w in zip(cases, arrays[0::2], arrays[1::2])]


def case_id(case) -> str:
    pad = case["padding"] if isinstance(case["padding"], str) else "explicit"
    return (f"{case['specs'][0]}-{case['specs'][1]} stride {case['strides']} {pad} "
            f"lhs_dilation {case.get('lhs_dilation')} rhs_dilation {case.get('rhs_dilation')} "
            f"{case['group']}")


ALL = {1: grid(1) + [DEPTHWISE1[1]], 2: grid(2) + EXTRA, 3: grid(3) + [DEPTHWISE1[3]]}


@pytest.fixture(scope="module")
def float32_results():
    """aotc's results for every configuration, one compiled function per dimensionality."""
    out = {}
    for rank, cases in ALL.items():
        arrays = make_operands(rank, cases, np.float32, seed=rank)
        out[rank] = (arrays, jit_call(lambda *a, c=cases: run_cases(alax, c, a), *arrays))
    return out


def check(got, want, dtype, where):
    rtol, atol = TOL[np.dtype(dtype).name]
    assert got.dtype == np.dtype(dtype), f"{where}: dtype {got.dtype}, expected {dtype}"
    assert got.shape == want.shape, f"{where}: shape {got.shape}, numpy gives {want.shape}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_conv_float32_matches_numpy(float32_results, rank):
    arrays, got = float32_results[rank]
    failures = []
    for case, x, w, g in zip(ALL[rank], arrays[0::2], arrays[1::2], got):
        want = conv_reference(x, w, case["strides"], case["padding"], case.get("lhs_dilation"),
                              case.get("rhs_dilation"), case["specs"], GROUPS[case["group"]][0],
                              np.float64)
        try:
            check(g, want, np.float32, case_id(case))
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, (f"{len(failures)} of {len(got)} convolutions differ:\n"
                          + "\n".join(failures))


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_conv_float32_matches_jax(float32_results, rank):
    jax = pytest.importorskip("jax")
    arrays, got = float32_results[rank]
    want = jax.jit(lambda *a: run_cases(jax.lax, ALL[rank], a))(*arrays)
    for case, g, w in zip(ALL[rank], got, want):
        check(g, np.asarray(w), np.float32, case_id(case))


def test_conv_float64_int32_and_preferred_type():
    cases = ([c for c in ALL[2] if c["group"] == "depthwise" and c["strides"] == (2, 2)][:3]
             + EXTRA[:2])
    f64 = make_operands(2, cases, np.float64, seed=7)
    ints = [(a * 8).astype(np.int32) for a in make_operands(2, cases[:2], np.float64, seed=8)]
    f32 = make_operands(2, cases[:1], np.float32, seed=9)

    def fn(f64, ints, f32):
        return (run_cases(alax, cases, f64), run_cases(alax, cases[:2], ints),
                run_cases(alax, cases[:1], f32, preferred_element_type=np.float64))

    got64, got_int, got_pref = jit_call(fn, f64, ints, f32)
    for group, arrays, dtype in ((got64, f64, np.float64), (got_int, ints, np.int32),
                                 (got_pref, f32, np.float64)):
        for case, x, w, g in zip(cases, arrays[0::2], arrays[1::2], group):
            want = conv_reference(x, w, case["strides"], case["padding"], case.get("lhs_dilation"),
                                  case.get("rhs_dilation"), case["specs"], GROUPS[case["group"]][0],
                                  np.float64 if dtype != np.int32 else np.int64)
            if dtype == np.int32:
                assert g.dtype == np.int32
                np.testing.assert_array_equal(g, want.astype(np.int32), err_msg=case_id(case))
            else:
                check(g, want, dtype, case_id(case))


def test_conv_conveniences_and_empty_sizes():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 3, 6, 5)).astype(np.float32)   # NCHW
    w = rng.uniform(-1, 1, (4, 3, 2, 2)).astype(np.float32)   # OIHW
    empty_batch = np.zeros((0, 3, 6, 5), np.float32)
    small = np.ones((1, 3, 1, 1), np.float32)                 # smaller than the window
    x4 = rng.uniform(-1, 1, (2, 2, 4, 3, 3, 4)).astype(np.float32)  # 4 spatial dims: a generic
    w4 = rng.uniform(-1, 1, (3, 2, 2, 1, 2, 2)).astype(np.float32)

    def fn(x, w, empty_batch, small, x4, w4):
        return {
            "4 spatial dims": alax.conv(x4, w4, (1, 2, 1, 1), "SAME"),
            "conv": alax.conv(x, w, (1, 2), "SAME"),
            "general padding": alax.conv_with_general_padding(x, w, (1, 1), [(1, 0), (0, 1)],
                                                              (2, 1), (1, 2)),
            "empty batch": alax.conv(empty_batch, w, (1, 1), "VALID"),
            "window larger than input": alax.conv(small, w, (1, 1), "VALID"),
        }

    got = jit_call(fn, x, w, empty_batch, small, x4, w4)
    nchw = ("NCHW", "OIHW", "NCHW")
    want = {
        "4 spatial dims": conv_reference(x4, w4, (1, 2, 1, 1), "SAME", None, None,
                                         ("NCabcd", "OIabcd", "NCabcd"), 1, np.float64),
        "conv": conv_reference(x, w, (1, 2), "SAME", None, None, nchw, 1, np.float64),
        "general padding": conv_reference(x, w, (1, 1), [(1, 0), (0, 1)], (2, 1), (1, 2), nchw, 1,
                                          np.float64),
        "empty batch": np.zeros((0, 4, 5, 4)),
        "window larger than input": np.zeros((1, 4, 0, 0)),
    }
    for name in want:
        check(got[name], want[name], np.float32, name)


ONE_CHANNEL = [  # (input, kernel, strides, padding, rhs dilation, dimension numbers)
    ((3, 9, 8, 1), (3, 3, 1, 5), (1, 1), "SAME", (1, 1), ("NHWC", "HWIO", "NHWC")),
    ((3, 1, 9, 8), (5, 1, 3, 2), (2, 1), [(1, 2), (0, 1)], (1, 2), ("NCHW", "OIHW", "NCHW")),
    ((2, 17, 1), (4, 1, 3), (2,), "VALID", (2,), ("NWC", "WIO", "NWC")),
    ((2, 5, 4, 6, 1), (2, 3, 2, 1, 4), (1, 2, 1), "SAME", (1, 1, 1),
     ("NDHWC", "DHWIO", "NDHWC")),
]


def test_conv_of_one_input_channel_matches_numpy():
    """One input channel runs with a zero second channel in both operands (IREE's code for
    a unit channel is 15-20x slower); values, integer results and vmap are unchanged."""
    rng = np.random.default_rng(12)
    xs = [rng.uniform(-1, 1, x).astype(np.float32) for x, *_ in ONE_CHANNEL]
    ws = [rng.uniform(-1, 1, w).astype(np.float32) for _, w, *_ in ONE_CHANNEL]
    ints = (xs[0] * 9).astype(np.int32), (ws[0] * 9).astype(np.int32)

    def conv(case, x, w):
        _, _, strides, padding, dilation, specs = case
        return alax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dilation,
                                         dimension_numbers=specs)

    def fn(xs, ws, ints):
        return ([conv(c, x, w) for c, x, w in zip(ONE_CHANNEL, xs, ws)],
                conv(ONE_CHANNEL[0], *ints),
                aotc.vmap(lambda x: conv(ONE_CHANNEL[0], x[None], ws[0])[0])(xs[0]))

    lowered = aotc.jit(lambda x, w: conv(ONE_CHANNEL[0], x, w)).lower(xs[0], ws[0]).as_text()
    assert "tensor<3x3x2x5xf32>" in lowered, lowered  # the kernel with its zero channel
    got, got_int, batched = jit_call(fn, xs, ws, ints)
    for case, x, w, g in zip(ONE_CHANNEL, xs, ws, got):
        _, _, strides, padding, dilation, specs = case
        want = conv_reference(x, w, strides, padding, None, dilation, specs, 1, np.float64)
        check(g, want, np.float32, f"{specs[0]} {x.shape}")
    want_int = conv_reference(*ints, (1, 1), "SAME", None, (1, 1), ONE_CHANNEL[0][-1], 1,
                              np.int64)
    np.testing.assert_array_equal(got_int, want_int.astype(np.int32))
    check(batched, np.asarray(got[0]), np.float32, "vmap over the batch")


# ---- pooling --------------------------------------------------------------------------

POOLS = [  # (input shape, window, strides, padding)
    ((2, 9, 3), (3,), (2,), "VALID"),
    ((2, 9, 3), (2,), None, "SAME"),
    ((2, 7, 6, 3), (2, 2), (2, 2), "VALID"),
    ((2, 7, 6, 3), (3, 3), (2, 1), "SAME"),
    ((2, 7, 6, 3), (3, 2), (1, 2), [(1, 1), (0, 1)]),
    ((7, 6, 3), (2, 2), (2, 2), "SAME"),                # no batch dimension
    ((2, 2, 5, 6, 3), (2, 3), (1, 2), "SAME"),          # two batch dimensions
    ((1, 5, 4, 5, 2), (2, 3, 2), (2, 1, 2), "SAME"),
    ((1, 5, 4, 5, 2), (3, 2, 2), None, "VALID"),
    ((1, 3, 4, 3, 3, 2), (2, 2, 2, 2), (1, 2, 1, 1), "SAME"),   # no named op: a generic
]


def test_pooling_matches_numpy():
    rng = np.random.default_rng(11)
    xs = [rng.uniform(-1, 1, shape).astype(np.float32) for shape, *_ in POOLS]
    xs[3][0, 0, 0, 0] = np.inf
    xs[4][1, 2, 3, 1] = -np.inf
    ints = (xs[3] * 10).clip(-50, 50).astype(np.int32)

    def fn(xs, ints):
        out = {}
        for i, ((_, window, strides, padding), x) in enumerate(zip(POOLS, xs)):
            out[f"max {i}"] = ann.max_pool(x, window, strides, padding)
            out[f"avg {i}"] = ann.avg_pool(x, window, strides, padding)
            out[f"avg {i} no pad"] = ann.avg_pool(x, window, strides, padding,
                                                  count_include_pad=False)
        out["max int32"] = ann.max_pool(ints, (3, 3), (2, 1), "SAME")
        return out

    got = jit_call(fn, xs, ints)
    for i, ((_, window, strides, padding), x) in enumerate(zip(POOLS, xs)):
        for name, kind, include in ((f"max {i}", "max", True), (f"avg {i}", "avg", True),
                                    (f"avg {i} no pad", "avg", False)):
            want = pool_reference(x, window, strides, padding, kind, include)
            assert got[name].shape == want.shape, f"{name}: {got[name].shape} vs {want.shape}"
            np.testing.assert_allclose(got[name], want, rtol=1e-6, atol=1e-6, err_msg=name)
    want = pool_reference(ints, (3, 3), (2, 1), "SAME", "max")
    assert got["max int32"].dtype == np.int32
    np.testing.assert_array_equal(got["max int32"], want)


# ---- errors ---------------------------------------------------------------------------

S = aotc.ShapeDtypeStruct


def lower(fn, *specs):
    return aotc.jit(fn).lower(*specs)


def test_conv_errors_name_the_problem():
    x, w = S((2, 8, 8, 4), "float32"), S((3, 3, 4, 6), "float32")
    nhwc = ("NHWC", "HWIO", "NHWC")

    def with_specs(*specs):
        return lambda x, w: alax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=specs)

    with raises_match(TracingError, "dimension_numbers[1]", "'HWIIO'", "5 dimensions", "4"):
        lower(with_specs("NHWC", "HWIIO", "NHWC"), x, w)
    with raises_match(TracingError, "dimension_numbers[0]", "'NHWW'", "exactly once"):
        lower(with_specs("NHWW", "HWIO", "NHWC"), x, w)
    with raises_match(TracingError, "same spatial dimensions"):
        lower(with_specs("NHWC", "HXIO", "NHWC"), x, w)
    with raises_match(TracingError, "4 features", "must have size 4", "has size 5"):
        lower(lambda x, w: alax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc),
              x, S((3, 3, 5, 6), "float32"))
    with raises_match(TracingError, "feature_group_count=3", "input's feature dimension", "size 4"):
        lower(lambda x, w: alax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc,
                                                      feature_group_count=3), x, w)
    with raises_match(TracingError, "feature_group_count=4", "output feature dimension", "size 6"):
        lower(lambda x, w: alax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc,
                                                      feature_group_count=4),
              x, S((3, 3, 1, 6), "float32"))
    with raises_match(UnsupportedOpError, "batch_group_count=2"):
        lower(lambda x, w: alax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc,
                                                      batch_group_count=2), x, w)
    with raises_match(TracingError, "window_strides", "2 positive ints", "(1, 1, 1)"):
        lower(lambda x, w: alax.conv_general_dilated(x, w, (1, 1, 1), "SAME",
                                                      dimension_numbers=nhwc), x, w)
    with raises_match(TracingError, "padding", "'FULL'"):
        lower(lambda x, w: alax.conv_general_dilated(x, w, (1, 1), "FULL",
                                                      dimension_numbers=nhwc), x, w)
    with raises_match(UnsupportedDtypeError, "same dtype", "float32", "float64"):
        lower(lambda x, w: alax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=nhwc),
              x, S((3, 3, 4, 6), "float64"))
    with raises_match(TracingError, "same number of dimensions", "(2, 8, 8, 4)", "(3, 4, 6)"):
        lower(lambda x, w: alax.conv_general_dilated(x, w, (1,), "SAME"),
              x, S((3, 4, 6), "float32"))
    with raises_match(TracingError, "string padding", "lhs_dilation"):
        lower(lambda x, w: alax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 2),
                                                      dimension_numbers=nhwc), x, w)


def test_pool_errors_name_the_problem():
    x = S((2, 8, 8, 3), "float32")
    with raises_match(TracingError, "max_pool", "window_shape", "3"):
        lower(lambda x: ann.max_pool(x, 3), x)
    with raises_match(TracingError, "avg_pool", "(4, 3)", "too few dimensions", "(2, 2, 2, 2)"):
        lower(lambda x: ann.avg_pool(x, (2, 2, 2, 2)), S((4, 3), "float32"))
    with raises_match(TracingError, "strides", "2 positive ints"):
        lower(lambda x: ann.max_pool(x, (2, 2), strides=(1,)), x)


REDUCE_WINDOW_CASES = [
    ("max", -np.inf, (1, 3, 2, 1), (1, 2, 2, 1), "VALID"),
    ("max", -np.inf, (1, 2, 2, 1), (1, 2, 2, 1), "SAME"),
    ("add", 0.0, (1, 3, 3, 1), (1, 1, 2, 1), ((0, 0), (1, 2), (0, 1), (0, 0))),
    ("min", np.inf, (2, 2, 1, 1), (1, 1, 1, 1), "VALID"),
    ("mul", 1.0, (1, 2, 1, 2), (1, 1, 1, 1), "VALID"),
]


@pytest.mark.parametrize("case", REDUCE_WINDOW_CASES, ids=lambda c: f"{c[0]}-{c[4]!s:.6}")
def test_reduce_window_matches_jax(case):
    jax = pytest.importorskip("jax")
    import aotc.lax as alax

    name, init, window, strides, padding = case
    x = np.random.default_rng(1).uniform(0.5, 1.5, (2, 7, 6, 3)).astype(np.float32)
    got = aotc.jit(lambda v: alax.reduce_window(v, init, getattr(alax, name), window, strides,
                                                padding))(x)
    want = jax.lax.reduce_window(x, init, getattr(jax.lax, name), window, strides, padding)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)
    if window[0] != 1:
        return  # the window spans the batch: no per-example form
    batched = aotc.vmap(lambda v: alax.reduce_window(v, init, getattr(alax, name), window[1:],
                                                     strides[1:], padding if isinstance(
                                                         padding, str) else padding[1:]))(x)
    np.testing.assert_allclose(np.asarray(batched), np.asarray(want), rtol=1e-5)


def test_reduce_window_refuses_other_computations():
    import aotc.lax as alax

    with pytest.raises(aotc.UnsupportedOpError,
                       match="computation .* is not supported; use lax.max"):
        aotc.jit(lambda v: alax.reduce_window(v, 0.0, lambda a, b: a - b, (2,), (1,), "VALID"))(
            np.ones(4, np.float32))

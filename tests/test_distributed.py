"""Artifacts shipped to worker processes: ``runtime.Module`` and ``Function`` pickle as
their ``.vmfb`` bytes and device URI, each worker process loads a module once, and the
workers need only the runtime. Real workers: a spawn-context process pool, and a
``dask.distributed`` cluster (the reference engine) running an artifact over the blocks
of a ``dask.array``."""

from __future__ import annotations

import concurrent.futures
import copy
import multiprocessing
import pickle

import distributed_tasks
import numpy as np
import pytest

import aotc
import aotc.numpy as anp
from aotc import runtime
from aotc.runtime import module as runtime_module

BLOCK = (64, 128)
HIDDEN = 1024
_rng = np.random.default_rng(0)
# Captured: the artifact holds them as constants (1 MiB), which makes it large enough that
# a copy of its bytes too many would show in the pickle's size.
W1 = (_rng.standard_normal((BLOCK[1], HIDDEN)) / np.sqrt(BLOCK[1])).astype(np.float32)
W2 = (_rng.standard_normal((HIDDEN, BLOCK[1])) / np.sqrt(HIDDEN)).astype(np.float32)


def mlp(x):
    """Normalizes each row, then a two-layer MLP with tanh: float32[64,128] -> same."""
    mu = anp.mean(x, axis=1, keepdims=True)
    sd = anp.std(x, axis=1, keepdims=True)
    h = anp.maximum(((x - mu) / (sd + 1e-5)) @ W1, 0.0)
    return anp.tanh(h @ W2)


def mlp_numpy(x: np.ndarray) -> np.ndarray:
    mu = x.mean(axis=1, keepdims=True)
    sd = x.std(axis=1, keepdims=True)
    return np.tanh(np.maximum(((x - mu) / (sd + 1e-5)) @ W1, 0.0) @ W2)


def check(got, x) -> None:
    np.testing.assert_allclose(got, mlp_numpy(x), rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def vmfb() -> bytes:
    return aotc.export(mlp, aotc.ShapeDtypeStruct(BLOCK, "float32"), name="mlp").vmfb


@pytest.fixture(scope="module")
def path(vmfb, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("shipped") / "mlp.vmfb"
    path.write_bytes(vmfb)
    return str(path)


@pytest.fixture(params=["path", "bytes"])
def module(request, vmfb, path) -> runtime.Module:
    """The artifact loaded from its file, and from its bytes (local-sync: small workers)."""
    return runtime.load(path if request.param == "path" else vmfb, device="local-sync")


@pytest.fixture
def fresh_cache():
    runtime.clear_unpickle_cache()
    yield
    runtime.clear_unpickle_cache()


def block(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(BLOCK).astype(np.float32)


@pytest.mark.parametrize("protocol", [4, 5])
def test_pickles_to_about_its_vmfb_size(module, vmfb, protocol):
    """The pickle is the bytes once, plus a few hundred bytes: not a second copy, not one
    per function pickled with the module."""
    alone = len(pickle.dumps(module, protocol=protocol))
    together = len(pickle.dumps([module, module.mlp, module["mlp"]], protocol=protocol))
    function = len(pickle.dumps(module.mlp, protocol=protocol))
    assert len(vmfb) > 1 << 20
    for size in (alone, together, function):
        assert len(vmfb) < size < len(vmfb) + 1024, (size, len(vmfb))


def test_unpickled_module_runs_and_is_loaded_once(module, fresh_cache):
    x = block()
    again = pickle.loads(pickle.dumps(module))
    function = pickle.loads(pickle.dumps(module.mlp))
    assert again is not module  # load() modules are the caller's; unpickles are shared
    assert again["mlp"] is function
    assert again.device.uri == "local-sync" and again.where == module.where
    check(np.asarray(again.mlp(x)), x)
    check(np.asarray(function(x)), x)
    assert runtime.unpickle_cache_info() == (1, 1, 1, runtime_module.UNPICKLE_CACHE_SIZE)
    # Pickled again from the unpickled module: the same key, still one load.
    assert pickle.loads(pickle.dumps(again)) is again
    assert runtime.unpickle_cache_info().loads == 1


def test_a_module_and_its_functions_unpickle_together(module, fresh_cache):
    m, f, g = pickle.loads(pickle.dumps([module, module.mlp, module["mlp"]]))
    assert m["mlp"] is f is g
    assert runtime.unpickle_cache_info().loads == 1


def test_the_cache_is_keyed_by_device_and_bounded(vmfb, fresh_cache, monkeypatch):
    monkeypatch.setattr(runtime_module, "UNPICKLE_CACHE_SIZE", 1)
    on_sync = pickle.dumps(runtime.load(vmfb, device="local-sync"))
    on_task = pickle.dumps(runtime.load(vmfb, device="local-task"))
    first = pickle.loads(on_sync)
    assert pickle.loads(on_task).device.uri == "local-task"  # another key; first evicted
    assert runtime.unpickle_cache_info() == (0, 2, 1, 1)
    assert pickle.loads(on_sync) is not first
    assert runtime.unpickle_cache_info().loads == 3


def test_copies_are_the_module_itself(module):
    assert copy.copy(module) is module and copy.deepcopy(module) is module
    assert copy.copy(module.mlp) is module.mlp
    assert copy.deepcopy({"f": module.mlp})["f"] is module.mlp


def test_unpickling_without_the_device_names_it_and_the_fix(vmfb, fresh_cache):
    data = pickle.dumps(runtime.load(vmfb, device="local-sync"), protocol=4)
    assert data.count(b"local-sync") == 1
    elsewhere = data.replace(b"local-sync", b"nodevice:9")  # same length: a valid pickle
    with pytest.raises(runtime.DeviceError) as info:
        pickle.loads(elsewhere)
    message = str(info.value)
    assert "expected device 'nodevice:9' in this process" in message
    assert "device='local-task'" in message
    assert runtime.unpickle_cache_info().size == 0


def test_damaged_bytes_are_refused(vmfb, fresh_cache):
    data = bytearray(pickle.dumps(runtime.load(vmfb, device="local-sync"), protocol=4))
    data[len(data) // 2] ^= 0xFF  # inside the constants
    with pytest.raises(runtime.LoadError, match="the pickle was changed on its way"):
        pickle.loads(bytes(data))


def test_process_pool_workers_without_the_compiler(module):
    """Module, Function and Array through a spawn-context pool whose workers cannot import
    the compiler: each worker loads the module once, whatever the number of tasks."""
    x = block()
    array = runtime.device_put(x, "local-sync")
    seeds = range(6)
    with concurrent.futures.ProcessPoolExecutor(
            max_workers=2, mp_context=multiprocessing.get_context("spawn"),
            initializer=distributed_tasks.block_compiler) as pool:
        results = list(pool.map(distributed_tasks.run_shipped, [module] * len(seeds),
                                [module.mlp] * len(seeds), [array] * len(seeds),
                                [block(seed) for seed in seeds]))
    for seed, result in enumerate(results):
        for key in ("by_module", "by_function"):
            check(result[key], block(seed))
        check(result["on_array"], x)
        assert result["same_module"]
        assert result["devices"] == ("local-sync",) * 3
        assert result["where"] == module.where
        assert not result["compiler_imported"]
        # Each task's arguments are pickled apart, and unpickled: at most one load per
        # worker, the other unpickles of the module (and the function's) are hits.
        assert result["cache"].loads == 1 and result["cache"].size == 1


def test_dask_map_blocks_on_two_worker_processes(vmfb):
    """The reference engine: the Module is an argument of every block's task (dask ships
    it with each task: measured, one unpickle per block), and each worker process
    loads it once."""
    pytest.importorskip("dask.distributed")
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    module = runtime.load(vmfb, device="local-sync")
    data = np.random.default_rng(2).standard_normal((BLOCK[0] * 12, BLOCK[1]))
    data = data.astype(np.float32)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(runtime.clear_unpickle_cache)
        x = da.from_array(data, chunks=BLOCK)
        y = x.map_blocks(distributed_tasks.run_block, module, dtype=np.float32)
        out = y.compute()
        infos = client.run(runtime.unpickle_cache_info)
        imported = client.run(distributed_tasks.compiler_imported)
    check(out, data)
    assert len(infos) == 2
    for info in infos.values():
        assert info.loads <= 1, infos
    assert sum(info.loads for info in infos.values()) >= 1
    assert not any(imported.values())

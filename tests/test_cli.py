"""The ``aotc`` command line: compile, run and inspect as a user runs them (subprocesses),
and the error paths with their messages and exit statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from aotc import __version__ as aotc_version

MODEL = textwrap.dedent(
    """
    import numpy as np
    import aotc.numpy as anp

    W = np.arange(12, dtype=np.float32).reshape(4, 3) / 10

    def affine(x, s):
        return anp.tanh(x @ W) * s, x.sum()

    def helper(x):
        return x + 1

    if __name__ == "__main__":
        raise SystemExit("the script part must not run on import")
    """
)


def aotc(*args: str, cwd=None, check: bool = False) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "aotc.cli", *map(str, args)],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"aotc {' '.join(map(str, args))} failed:\n{proc.stderr}")
    return proc


def reference(x: np.ndarray, s: float):
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    return np.tanh(x @ w) * np.float32(s), x.sum()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "model.py").write_text(MODEL)
    return d


@pytest.fixture(scope="module")
def compiled(workdir):
    """One compile shared by the tests: model.py:affine for f32[2,4], f32[]."""
    proc = aotc("compile", "model.py:affine", "--arg", "f32[2,4]", "--arg", "float32[]",
                "-o", "affine.vmfb", cwd=workdir, check=True)
    return workdir / "affine.vmfb", proc


def test_compile_writes_artifact_and_prints_summary(compiled):
    path, proc = compiled
    assert path.stat().st_size > 0
    line = proc.stdout.strip()
    assert "affine(x: float32[2,4], s: float32[])" in line
    assert "target cpu" in line and "affine.vmfb" in line and "KiB" in line


def test_run_saves_outputs_matching_numpy(compiled, workdir):
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.save(workdir / "x.npy", x)
    proc = aotc("run", "affine.vmfb", "affine", "--input", "x.npy", "--input", "2.5",
                "--output", "y.npy", "--output", "total.npy", cwd=workdir, check=True)
    assert "y.npy" in proc.stdout and "total.npy" in proc.stdout
    want_y, want_total = reference(x, 2.5)
    y, total = np.load(workdir / "y.npy"), np.load(workdir / "total.npy")
    assert y.dtype == np.float32 and y.shape == (2, 3)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(total, want_total, rtol=1e-5)


def test_run_placeholder_output_and_printing(compiled, workdir):
    np.save(workdir / "ones.npy", np.ones((2, 4), np.float32))
    proc = aotc("run", "affine.vmfb", "--input", "ones.npy", "--input", "1",
                "--output", "r{}.npy", cwd=workdir, check=True)
    assert (workdir / "r0.npy").exists() and (workdir / "r1.npy").exists()
    assert float(np.load(workdir / "r1.npy")) == 8.0
    # Without --output the results are printed: name, dtype and shape, then values.
    proc = aotc("run", "affine.vmfb", "affine", "--input", "ones.npy", "--input", "1",
                cwd=workdir, check=True)
    assert "out[0]: float32[2,3]" in proc.stdout
    assert "out[1]: float32[]" in proc.stdout and "8." in proc.stdout


def test_run_imports_no_compiler(compiled, workdir):
    code = textwrap.dedent(
        """
        import sys
        from aotc.cli import main
        assert main(["run", "affine.vmfb", "--input", "ones.npy", "--input", "1"]) == 0
        assert main(["inspect", "affine.vmfb"]) == 0
        compiler = ("iree.compiler", "aotc.core", "aotc.api")
        leaked = sorted(m for m in sys.modules if m.startswith(compiler))
        assert not leaked, leaked
        """
    )
    np.save(workdir / "ones.npy", np.ones((2, 4), np.float32))
    proc = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_inspect_text(compiled, workdir):
    proc = aotc("inspect", "affine.vmfb", cwd=workdir, check=True)
    out = proc.stdout
    assert ("affine(x: float32[2,4], s: float32[]) -> (out[0]: float32[2,3], out[1]: float32[])"
            in out)
    assert "target: cpu" in out and f"aotc: {aotc_version}" in out and "IREE: 3." in out
    assert "source hash:" in out and "bytes" in out


def test_inspect_json(compiled, workdir):
    path, _ = compiled
    proc = aotc("inspect", "affine.vmfb", "--json", cwd=workdir, check=True)
    data = json.loads(proc.stdout)
    assert data["size_bytes"] == path.stat().st_size
    fn = data["functions"]["affine"]
    assert fn["target"] == "cpu"
    assert [a["shape"] for a in fn["args"]] == [[2, 4], []]
    assert [r["dtype"] for r in fn["results"]] == ["float32", "float32"]
    assert fn["signature"].startswith("affine(x: float32[2,4]")
    assert fn["iree_version"] and fn["aotc_version"] and fn["source_hash"]


# ---- error paths: a message on stderr, no traceback, exit 2 (usage) or 1 (failure) --------

def _assert_user_error(proc, code: int, *fragments: str):
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


@pytest.mark.parametrize("spec, fragment", [
    ("f32[64,x]", "dimension 'x' is not a non-negative integer"),
    ("q32[3]", "unknown dtype 'q32'"),
    ("f32", "a scalar is written f32[]"),
])
def test_compile_bad_arg_spec(workdir, spec, fragment):
    proc = aotc("compile", "model.py:helper", "--arg", spec, cwd=workdir)
    _assert_user_error(proc, 2, f"--arg '{spec}'", fragment)


def test_compile_missing_file(workdir):
    proc = aotc("compile", "nothere.py:f", "--arg", "f32[2]", cwd=workdir)
    _assert_user_error(proc, 1, "nothere.py: no such file")


def test_compile_unknown_function(workdir):
    proc = aotc("compile", "model.py:nope", "--arg", "f32[2]", cwd=workdir)
    _assert_user_error(proc, 1, "model.py has no function 'nope'", "affine, helper")


def test_compile_wrong_argument_count(workdir):
    proc = aotc("compile", "model.py:affine", "--arg", "f32[2,4]", cwd=workdir)
    _assert_user_error(proc, 2, "takes 2 arguments (x, s) but 1 --arg was given")


def test_compile_tracing_error_is_reported(workdir):
    proc = aotc("compile", "model.py:affine", "--arg", "f32[2,5]", "--arg", "f32[]", cwd=workdir)
    _assert_user_error(proc, 1, "cannot compile model.py:affine", "matmul")


def test_run_missing_vmfb(workdir):
    proc = aotc("run", "missing.vmfb", "f", "--input", "x.npy", cwd=workdir)
    _assert_user_error(proc, 1, "missing.vmfb: no such file")


def test_inspect_missing_vmfb(workdir):
    proc = aotc("inspect", "missing.vmfb", cwd=workdir)
    _assert_user_error(proc, 1, "missing.vmfb: no such file")


def test_inspect_not_a_vmfb(workdir):
    proc = aotc("inspect", "model.py", cwd=workdir)
    _assert_user_error(proc, 1, "model.py: not a .vmfb file")


def test_run_unknown_function(compiled, workdir):
    proc = aotc("run", "affine.vmfb", "nope", "--input", "x.npy", cwd=workdir)
    _assert_user_error(proc, 1, "affine.vmfb has no function 'nope'; it has: affine")


def test_run_wrong_input_count_and_dtype(compiled, workdir):
    np.save(workdir / "ones.npy", np.ones((2, 4), np.float32))
    np.save(workdir / "ones64.npy", np.ones((2, 4), np.float64))
    proc = aotc("run", "affine.vmfb", "--input", "ones.npy", cwd=workdir)
    _assert_user_error(proc, 2, "affine takes 2 arguments", "but 1 --input was given")
    proc = aotc("run", "affine.vmfb", "--input", "ones64.npy", "--input", "1", cwd=workdir)
    _assert_user_error(proc, 1, "float64", "float32")
    proc = aotc("run", "affine.vmfb", "--input", "missing.npy", "--input", "1", cwd=workdir)
    _assert_user_error(proc, 1, "--input 'missing.npy': no such file")


def test_run_wrong_output_count(compiled, workdir):
    np.save(workdir / "ones.npy", np.ones((2, 4), np.float32))
    proc = aotc("run", "affine.vmfb", "--input", "ones.npy", "--input", "1", "-o", "a.npy",
                cwd=workdir)
    _assert_user_error(proc, 2, "returns 2 results but 1 --output path was given")


def test_help_has_examples():
    proc = aotc("--help", check=True)
    assert "aotc compile model.py:predict --arg f32[64,784]" in proc.stdout
    for command in ("compile", "run", "inspect"):
        assert command in proc.stdout
    proc = aotc("compile", "--help", check=True)
    assert "bool i8 i16 i32 i64 u8 u16 u32 u64 f16 f32 f64 c64 c128" in proc.stdout
    proc = aotc()
    assert proc.returncode == 2 and "usage: aotc" in proc.stderr


def test_argument_dtype_names_cover_every_dtype():
    # The compiler and command-line tables derive from the runtime's: they must agree.
    from aotc import dtypes
    from aotc.cli import FULL_DTYPES, SHORT_DTYPES, parse_arg_spec
    from aotc.runtime import dtypes as runtime_dtypes

    assert sorted(FULL_DTYPES) == sorted(dtypes.DTYPES) == sorted(runtime_dtypes.DTYPES)
    for short, full in SHORT_DTYPES.items():
        assert parse_arg_spec(f"{short}[2]") == parse_arg_spec(f"{full}[2]") == ((2,), full)


# ---- a closed output pipe: no traceback, exit 141 as other Unix tools ------------------------

CLOSED_PIPE_COMMANDS = {
    "targets": ("targets",),
    "targets --json": ("targets", "--json"),
    "inspect": ("inspect", "affine.vmfb"),
    "inspect --json": ("inspect", "affine.vmfb", "--json"),
    "run": ("run", "affine.vmfb", "--input", "ones.npy", "--input", "2"),
    "compile": ("compile", "model.py:affine", "--arg", "f32[2,4]", "--arg", "f32[]",
                "-o", "piped.vmfb"),
    "--help": ("--help",),
}


@pytest.mark.parametrize("args", CLOSED_PIPE_COMMANDS.values(), ids=CLOSED_PIPE_COMMANDS)
def test_closed_stdout_pipe_ends_quietly(compiled, workdir, args):
    """The reader of stdout is gone before the command writes (``aotc ... | head -0``): the
    command stops without a traceback, with status 141 (128 + SIGPIPE; argparse's help
    ignores the failed write and exits 0)."""
    np.save(workdir / "ones.npy", np.ones((2, 4), np.float32))
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([sys.executable, "-m", "aotc.cli", *args], cwd=workdir,
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)
    assert proc.returncode == (0 if args == ("--help",) else 141), proc.stderr
    assert proc.stderr == ""


@pytest.mark.parametrize("command", ["targets", "inspect affine.vmfb"])
def test_head_of_the_output(compiled, workdir, command):
    """``aotc <command> | head -1`` in a shell: one line, nothing on stderr, status 0 (all
    written before head left) or 141."""
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m aotc.cli "
                                         f"{command} | head -1"],
                          cwd=workdir, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 141), proc.stderr
    assert len(proc.stdout.splitlines()) == 1 and proc.stderr == ""

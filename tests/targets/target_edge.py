"""What running aotc's code for other machines here needs, set up once and cached.

- qemu user mode (``qemu-aarch64``) and the aarch64 C/C++ libraries (Debian's
  ``libc6-arm64-cross`` ...): they run ``iree-run-module`` from the aarch64 wheel;
- the aarch64 wheels of the runtime's dependencies (``iree-base-runtime``, ``numpy``,
  ``ml_dtypes``) from PyPI;
- an aarch64 Python: Debian's arm64 packages of python3.11 and the libraries it loads,
  unpacked into a sysroot. They are fetched with apt-get into a private apt state
  (``APT::Architectures=arm64``, lists and archives in the cache): the system's dpkg
  architectures and apt lists are never touched;
- a wheel of aotc itself, installed without dependencies: the runtime-only install that
  README.md documents for devices.

Everything is cached under ``AOTC_EDGE_CACHE`` (default ``/tmp/aotc-edge-cache``).
Downloads come from PyPI and Debian only.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("AOTC_EDGE_CACHE") or "/tmp/aotc-edge-cache")
CROSS_LIBS = Path("/usr/aarch64-linux-gnu")  # libc6-arm64-cross & co.
SYSROOT_PYTHON = "python3.11"  # Debian 12's; the wheels are fetched for it
# Debian arm64 packages an aarch64 python3.11 needs to import numpy and iree.runtime.
DEBS = ("python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib", "libc6",
        "libexpat1", "zlib1g", "libffi8", "libgcc-s1", "libstdc++6")
CI_APT = ("apt-get install -y mesa-vulkan-drivers libvulkan1 qemu-user libc6-arm64-cross "
          "libstdc++6-arm64-cross libgcc-s1-arm64-cross unzip (as .ci/run does)")


def require(condition, reason: str) -> None:
    """Skips the test when ``condition`` is false, except in CI (``CI`` set), where a
    missing tool is a failure: these tests must run there."""
    if condition:
        return
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{reason} (CI must run this test)")
    pytest.skip(reason)


def run(cmd, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False,
                          **kwargs)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n"
                           f"{done.stdout}\n{done.stderr}")
    return done


@contextmanager
def _locked(name: str):
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def versions() -> dict[str, str]:
    """The runtime's dependencies at the versions this machine uses (the compiler and
    runtime must be the same IREE release)."""
    import ml_dtypes
    import numpy

    return {"iree-base-runtime": importlib.metadata.version("iree-base-runtime"),
            "numpy": numpy.__version__, "ml_dtypes": ml_dtypes.__version__}


def qemu() -> str | None:
    return shutil.which("qemu-aarch64")


def aarch64_site() -> Path:
    """The aarch64 wheels of iree-base-runtime, numpy and ml_dtypes, unpacked (a
    site-packages directory); downloaded once."""
    v = versions()
    site = CACHE / "aarch64-site-{}".format("-".join(f"{k}{x}" for k, x in sorted(v.items())))
    with _locked("aarch64-site"):
        if (site / ".complete").exists():
            return site
        wheels = CACHE / "aarch64-wheels"
        run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q",
             "--no-deps", "--only-binary=:all:", "--platform", "manylinux_2_28_aarch64",
             "--python-version", "3.11", "--implementation", "cp", "-d", wheels,
             *(f"{name}=={version}" for name, version in v.items())])
        shutil.rmtree(site, ignore_errors=True)
        site.mkdir(parents=True)
        for name in v:
            (wheel,) = wheels.glob(f"{name.replace('-', '_')}-{v[name]}-*.whl")
            unzip(wheel, site)
        (site / ".complete").touch()
    return site


def unzip(archive: Path, into: Path) -> None:
    """Unpacks with the unzip tool: Python's zipfile drops the run bit of executables."""
    run(["unzip", "-q", "-o", archive, "-d", into])


def aarch64_sysroot() -> Path:
    """A directory holding Debian's aarch64 python3.11 and the libraries it loads."""
    root = CACHE / "aarch64-sysroot"
    with _locked("aarch64-sysroot"):
        if (root / ".complete").exists():
            return root
        apt = CACHE / "apt-arm64"
        for d in ("lists/partial", "cache/archives/partial", "debs"):
            (apt / d).mkdir(parents=True, exist_ok=True)
        options = []
        for option in ("APT::Architecture=arm64", "APT::Architectures::=arm64",
                       f"Dir::State::Lists={apt / 'lists'}", f"Dir::Cache={apt / 'cache'}",
                       "APT::Sandbox::User=root"):
            options += ["-o", option]
        run(["apt-get", *options, "-q", "update"])
        run(["apt-get", *options, "-q", "download", *DEBS], cwd=apt / "debs")
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for deb in sorted((apt / "debs").glob("*.deb")):
            run(["dpkg-deb", "-x", deb, root])
        (root / ".complete").touch()
    return root


def aotc_wheel(into: Path) -> Path:
    """Builds aotc's wheel from this checkout (pure Python: it installs on any machine)."""
    src = into / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", "*.egg-info", "build", "dist", "out", "tests", "benchmarks",
        ".pytest_cache", ".hypothesis", ".ruff_cache", "*.vmfb", ".cache"))
    run([sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "-q",
         "--no-deps", src, "-w", into / "dist"])
    (wheel,) = (into / "dist").glob("aotc-*.whl")
    return wheel


def _source_key() -> str:
    """A hash of what aotc's wheel is built from (the package's sources and pyproject)."""
    h = hashlib.sha256()
    for path in sorted([REPO / "pyproject.toml"] + [p for d in ("aotc", "passes", "runtime")
                                                    for p in (REPO / d).rglob("*.py")]):
        h.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def install_aotc(venv: Path, scratch: Path) -> None:
    """Installs aotc's wheel from this checkout into ``venv`` (no dependencies), once
    per source state: test workers sharing the venv do not reinstall it under each
    other's running tests."""
    key = _source_key()
    marker = venv / ".aotc-source"
    with _locked("runtime-venv"):
        if marker.exists() and marker.read_text() == key:
            return
        wheel = aotc_wheel(scratch)
        run([venv / "bin" / "python", "-m", "pip", "install", "--disable-pip-version-check",
             "-q", "--no-deps", "--force-reinstall", wheel])
        marker.write_text(key)


def host_runtime_venv() -> Path:
    """A virtual environment holding only what the runtime needs (numpy,
    iree-base-runtime and its ml_dtypes): no iree-base-compiler. Made once."""
    v = versions()
    tag = "-".join(f"{k}{x}" for k, x in sorted(v.items()))
    venv = CACHE / f"runtime-venv-py{sys.version_info.major}{sys.version_info.minor}-{tag}"
    with _locked("runtime-venv"):
        if (venv / ".complete").exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        run([sys.executable, "-m", "venv", venv])
        run([venv / "bin" / "python", "-m", "pip", "install", "--disable-pip-version-check",
             "-q", f"numpy=={v['numpy']}", f"iree-base-runtime=={v['iree-base-runtime']}"])
        (venv / ".complete").touch()
    return venv

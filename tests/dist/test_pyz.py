"""kseg.pyz from the tree, run by a fresh venv's python that has nothing installed (docs/dist.md).

The archive is built once per digest of its inputs (tools/dist, kseg/, the installed dependencies'
versions) and cached under the system's temporary directory, so reruns cost only the runs.
Each command's stdout, stderr and exit code must equal the installed kseg's (``python -m kseg``).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from support import FIXTURES, REPO

LOGS = FIXTURES / "real" / "kafka-logs"
DEPS = ("click", "rich", "crc32c", "lz4", "python-snappy", "zstandard", "cramjam", "markdown-it-py",
        "mdurl", "pygments")


def _inputs_digest() -> str:
    digest = hashlib.sha256(sys.version.encode())
    for root in (REPO / "tools" / "dist", REPO / "kseg"):
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(REPO).as_posix().encode() + path.read_bytes())
    for dep in DEPS:
        digest.update(f"{dep}={metadata.version(dep)}".encode())
    return digest.hexdigest()[:20]


@pytest.fixture(scope="module")
def pyz() -> Path:
    out = Path(os.environ.get("TMPDIR", "/tmp")) / "kseg-test-pyz" / _inputs_digest() / "kseg.pyz"
    if not out.is_file():
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        subprocess.run([sys.executable, "-m", "tools.dist", "pyz", "--deps-from-site", "--out", str(out)],
                       cwd=REPO, env=env, check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A venv made with --without-pip: its python sees the standard library and nothing else."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


def _bare_env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["KSEG_PYZ_CACHE"] = str(cache)
    return env


def _installed(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "kseg", *args], env=env, capture_output=True, text=True)


def test_bare_python_has_nothing_installed(bare_python, tmp_path) -> None:
    for module in ("kseg", "click", "zstandard"):
        run = subprocess.run([bare_python, "-c", f"import {module}"], env=_bare_env(tmp_path),
                             cwd=tmp_path, capture_output=True, text=True)
        assert run.returncode == 1 and "ModuleNotFoundError" in run.stderr


@pytest.mark.parametrize("args", [
    ["verify", str(LOGS)],
    ["verify", "--format", "json", str(LOGS / "foo-0")],
    ["dump", "--deep-iteration", "--print-data-log", str(LOGS / "foo-0" / "00000000000000000000.log")],
    ["dump", str(LOGS / "__consumer_offsets-12" / "00000000000000000000.log")],
], ids=["verify-logdir", "verify-json", "dump-deep", "dump-offsets"])
def test_pyz_output_equals_installed_kseg(pyz, bare_python, tmp_path, args) -> None:
    want = _installed(args)
    got = subprocess.run([bare_python, str(pyz), *args], env=_bare_env(tmp_path / "cache"),
                         cwd=tmp_path, capture_output=True, text=True)
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)
    assert want.stdout  # the comparison is of real output


def test_first_run_extracts_once_then_reuses(pyz, bare_python, tmp_path) -> None:
    cache = tmp_path / "cache"
    manifest = json.loads(zipfile.ZipFile(pyz).read("kseg-pyz.json"))
    tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    for _ in range(2):
        run = subprocess.run([bare_python, str(pyz), "--version"], env=_bare_env(cache),
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert sorted(p.name for p in cache.iterdir()) == [f"pyz-{manifest['digest'][:16]}-{tag}"]
    core = (REPO / "kseg" / "_core.abi3.so").is_file() and os.environ.get("KSEG_PURE", "") in ("", "0")
    assert manifest["core"] == (REPO / "kseg" / "_core.abi3.so").is_file()
    assert run.stdout == _installed(["--version"]).stdout
    assert ("compiled core" in run.stdout) == core
    assert oct((cache).stat().st_mode & 0o777) == oct(0o700)


def test_cache_planted_by_another_mode_is_refused(pyz, bare_python, tmp_path) -> None:
    cache = tmp_path / "shared-cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    run = subprocess.run([bare_python, str(pyz), "--version"], env=_bare_env(cache),
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr == f"kseg.pyz: cache directory {cache} is not this user's own; set KSEG_PYZ_CACHE\n"
    assert list(cache.iterdir()) == []


def test_python_without_wheels_in_the_archive_gets_one_line(pyz, bare_python, tmp_path) -> None:
    """An archive built for other CPython versions refuses this one before unpacking anything."""
    other = tmp_path / "other.pyz"
    with zipfile.ZipFile(pyz) as src, zipfile.ZipFile(other, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "kseg-pyz.json":
                manifest = json.loads(data)
                manifest["pythons"] = ["cp398", "cp399"]
                data = json.dumps(manifest).encode()
            dst.writestr(info, data)
    cache = tmp_path / "cache"
    run = subprocess.run([bare_python, str(other), "--version"], env=_bare_env(cache), cwd=tmp_path,
                         capture_output=True, text=True)
    version = subprocess.run([bare_python, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True).stdout.strip()
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == f"kseg.pyz: this kseg.pyz holds dependencies for CPython cp398, cp399; this is {version}\n"
    assert not cache.exists()

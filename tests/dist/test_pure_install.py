"""The install without a core (docs/dist.md): no cargo on PATH, no index, and kseg still runs.

``pip install --no-index .`` with cargo absent goes through tools/dist/backend.py's pure branch:
nothing is fetched, the wheel is written from the standard library, and the installed kseg runs
its pure-Python path with output equal to the tree's kseg.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

from support import FIXTURES, REPO

LOGS = FIXTURES / "real" / "kafka-logs"


def test_pure_wheel_holds_the_sources_and_honest_metadata(tmp_path) -> None:
    run = subprocess.run([sys.executable, "-m", "tools.dist", "pure", "--out", str(tmp_path)], cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    wheel = tmp_path / "kseg-0.1.0-py3-none-any.whl"
    assert run.stdout == f"{wheel}\n"
    sources = sorted(
        p.relative_to(REPO).as_posix() for p in (REPO / "kseg").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".so")
    )
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        assert sorted(n for n in names if n.startswith("kseg/")) == sources
        assert not [n for n in names if n.endswith(".so")]
        record = zf.read("kseg-0.1.0.dist-info/RECORD").decode().splitlines()
        for line in record[:-1]:
            name, hashed, size = line.rsplit(",", 2)
            data = zf.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (hashed, int(size)) == (f"sha256={digest}", len(data))
        assert record[-1] == "kseg-0.1.0.dist-info/RECORD,,"
        meta = zf.read("kseg-0.1.0.dist-info/METADATA").decode()
        assert zf.read("kseg-0.1.0.dist-info/entry_points.txt") == b"[console_scripts]\nkseg = kseg.cli:main\n"
    with (REPO / "pyproject.toml").open("rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    assert [line[len("Requires-Dist: "):] for line in meta.splitlines()
            if line.startswith("Requires-Dist: ") and "extra ==" not in line] == deps


def test_pip_install_without_cargo_or_index_runs_pure(tmp_path) -> None:
    target = tmp_path / "site"
    no_cargo = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k not in ("KSEG_BUILD_PURE", "KSEG_PURE")}
    no_cargo["PATH"] = "/usr/bin:/bin"
    assert subprocess.run(["sh", "-c", "command -v cargo"], env=no_cargo).returncode != 0
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(target), "."],
        cwd=REPO, env=no_cargo, capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stderr
    assert (target / "kseg" / "cli.py").read_bytes() == (REPO / "kseg" / "cli.py").read_bytes()
    assert not list(target.rglob("*.so"))
    # the dependencies from this interpreter's site-packages (not its kseg: .pth files are not read
    # from PYTHONPATH entries), kseg from the install
    env = {**no_cargo, "PYTHONPATH": f"{target}{os.pathsep}{sysconfig.get_paths()['purelib']}"}
    version = subprocess.run([sys.executable, "-m", "kseg", "--version"], cwd=tmp_path, env=env,
                             capture_output=True, text=True)
    assert version.stdout == ("kseg, version 0.1.0 (pure Python: the compiled core did not load "
                              "(No module named 'kseg._core'))\n")
    args = ["verify", str(LOGS)]
    got = subprocess.run([sys.executable, "-m", "kseg", *args], cwd=tmp_path, env=env, capture_output=True, text=True)
    want = subprocess.run([sys.executable, "-m", "kseg", *args], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True)
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr)
    assert want.stdout

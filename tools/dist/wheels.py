"""kseg's two wheels: the abi3 one with the compiled core (maturin) and a pure one without it.

The pure wheel is written here, byte for byte, from the tree's ``kseg/`` and pyproject's metadata:
no cargo, no maturin, no build backend, so it can be made (and installed with ``pip install
--no-index``) on a host that has nothing but Python. kseg runs its pure-Python path when
``kseg._core`` is absent (docs/core.md), so this wheel is the same tool, slower.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tools.dist.pyz import DistError, read_project

DATE = (1980, 1, 1, 0, 0, 0)


def build_abi3_wheel(root: Path, out: Path, *, manylinux2014: bool = False) -> Path:
    """``maturin build --release``: a ``cp310-abi3`` wheel for this platform (Linux x86-64 here).

    Linked against this machine's glibc the wheel is tagged with its version (``manylinux_2_34``
    here), which an older broker host (glibc 2.28, 2.31) cannot install. ``manylinux2014`` links
    through zig (``pip install ziglang``) against glibc 2.17 instead, in its own target directory
    so the editable build's artefacts stay valid.
    """
    maturin = [sys.executable, "-m", "maturin"] if _importable("maturin") else [shutil.which("maturin") or "maturin"]
    if shutil.which("cargo") is None:
        raise DistError("cargo is not on PATH: the abi3 wheel needs Rust (docs/core.md); `pure` needs none")
    before = set(out.glob("kseg-*.whl")) if out.is_dir() else set()
    command = [*maturin, "build", "--release", "--out", str(out), "--manifest-path",
               str(root / "rust/kseg-py/Cargo.toml")]
    env = None
    if manylinux2014:
        if not _importable("ziglang"):
            raise DistError("--manylinux2014 links through zig: pip install ziglang")
        command += ["--zig", "--compatibility", "manylinux2014"]
        bindir = str(Path(sys.executable).parent)
        env = {**os.environ, "CARGO_TARGET_DIR": str(root / "rust/target/zig"),
               "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    result = subprocess.run(command, cwd=root, env=env, check=False)
    if result.returncode != 0:
        raise DistError(f"{' '.join(command)} exited {result.returncode}")
    made = [w for w in out.glob("kseg-*-abi3-*.whl") if w not in before] or sorted(
        out.glob("kseg-*-abi3-*.whl"), key=lambda w: w.stat().st_mtime)[-1:]
    if not made:
        raise DistError(f"maturin wrote no abi3 wheel into {out}")
    return made[0]


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def build_pure_wheel(root: Path, out: Path, *, editable: bool = False) -> Path:
    """``kseg-<version>-py3-none-any.whl``: the tree's Python sources and data, no core.

    ``editable``: instead of the sources, a ``kseg.pth`` naming the tree (``pip install -e``).
    """
    project = read_project(root)
    name, version = project["name"], project["version"]
    dist_info = f"{name}-{version}.dist-info"
    files: dict[str, bytes] = {"kseg.pth": f"{root}\n".encode()} if editable else {}
    for path in [] if editable else sorted((root / "kseg").rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix in (".pyc", ".so"):
            continue
        files[path.relative_to(root).as_posix()] = path.read_bytes()
    files[f"{dist_info}/METADATA"] = _metadata(project, (root / "README.md").read_text()).encode()
    files[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: kseg tools.dist\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ).encode()
    scripts = project.get("scripts", {})
    files[f"{dist_info}/entry_points.txt"] = (
        "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())
    ).encode()
    record = "".join(f"{n},sha256={_b64(hashlib.sha256(d).digest())},{len(d)}\n" for n, d in files.items())
    files[f"{dist_info}/RECORD"] = (record + f"{dist_info}/RECORD,,\n").encode()
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for entry, data in files.items():
            info = zipfile.ZipInfo(entry, date_time=DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    out.mkdir(parents=True, exist_ok=True)
    wheel.write_bytes(buffer.getvalue())
    return wheel


def _b64(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _metadata(project: dict, readme: str) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3.10')}",
        f"License: {project.get('license', {}).get('text', '')}",
    ]
    lines += [f"Requires-Dist: {r}" for r in project.get("dependencies", [])]
    for extra, requirements in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in requirements]
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme

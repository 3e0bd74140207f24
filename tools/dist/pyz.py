"""Build ``kseg.pyz``: one file holding kseg, its compiled core and its dependencies (docs/dist.md).

Layout of the archive: ``__main__.py`` (tools/dist/pyz_main.py), ``kseg-pyz.json`` (the payload's
digest and the CPython versions it serves), ``payload/common/`` (kseg and every pure or abi3 wheel)
and ``payload/cpXY/`` (the wheels built for one CPython version). The dependencies come from PyPI
(``pip download`` for each version), from a local wheelhouse (``--wheelhouse``, no index), or from
the running interpreter's own installed copies (``--deps-from-site``: a pyz for that version only,
which is what the test suite builds: no network).
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

DEFAULT_PYTHONS = ("3.10", "3.11", "3.12", "3.13")
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")
MAIN = Path(__file__).with_name("pyz_main.py")


class DistError(Exception):
    """A build step failed; the message says which."""


Payload = dict[str, bytes]  # archive name -> content


def build_pyz(
    root: Path, out: Path, *, kseg_wheel: Path | None, deps_from_site: bool,
    wheelhouse: Path | None, pythons: tuple[str, ...],
) -> Path:
    """Write ``out`` and return it. ``root`` is the checkout (its pyproject names the dependencies)."""
    payload: Payload = {}
    kseg_files = _kseg_from_wheel(kseg_wheel) if kseg_wheel else _kseg_from_tree(root / "kseg")
    payload.update({f"payload/common/{name}": data for name, data in kseg_files.items()})
    requirements = _requirements(root)
    if deps_from_site:
        tags = (_tag(f"{sys.version_info[0]}.{sys.version_info[1]}"),)
        payload.update(_site_deps(requirements, tags[0]))
    else:
        tags = tuple(_tag(p) for p in pythons)
        payload.update(_wheel_deps(requirements, pythons, wheelhouse))
    digest = hashlib.sha256()
    for name in sorted(payload):
        digest.update(name.encode() + b"\0" + hashlib.sha256(payload[name]).digest())
    manifest = {
        "digest": digest.hexdigest(),
        "pythons": list(tags),
        "core": "payload/common/kseg/_core.abi3.so" in payload,
        "requirements": requirements,
    }
    _write(out, payload, manifest)
    return out


def _tag(version: str) -> str:
    major, minor = version.split(".")
    return f"cp{major}{minor}"


def read_project(root: Path) -> dict:
    """pyproject's ``[project]`` table (tomllib: building needs Python 3.11+; running 3.10+)."""
    try:
        import tomllib
    except ImportError:
        raise DistError("building needs Python 3.11 or newer (tomllib); the pyz runs on 3.10+")
    with (root / "pyproject.toml").open("rb") as f:
        return dict(tomllib.load(f)["project"])


def _requirements(root: Path) -> list[str]:
    return list(read_project(root)["dependencies"])


def _kseg_from_tree(package: Path) -> Payload:
    """The tree's kseg/ (sources, data, and ``_core.abi3.so`` when it has been built)."""
    files: Payload = {}
    for path in sorted(package.rglob("*")):
        if path.is_dir() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        if path.suffix == ".so" and path.name != "_core.abi3.so":
            raise DistError(f"{path}: not an abi3 core; rebuild it (pip install -e .)")
        files[path.relative_to(package.parent).as_posix()] = path.read_bytes()
    return files


def _kseg_from_wheel(wheel: Path) -> Payload:
    with zipfile.ZipFile(wheel) as zf:
        return {n: zf.read(n) for n in zf.namelist() if n.startswith("kseg/") and not n.endswith("/")}


def _name(requirement: str) -> str:
    for i, ch in enumerate(requirement):
        if not (ch.isalnum() or ch in "-_."):
            return requirement[:i]
    return requirement


def _site_deps(requirements: list[str], tag: str) -> Payload:
    """The installed files of every distribution ``requirements`` pull in, for this interpreter."""
    payload: Payload = {}
    pending, seen = [_name(r) for r in requirements], set()
    while pending:
        name = pending.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise DistError(f"{name} is not installed for {sys.executable}")
        for requirement in dist.requires or []:
            marker = requirement.partition(";")[2]
            if "extra" in marker:
                continue
            dep = _name(requirement.strip())
            try:
                metadata.distribution(dep)
            except metadata.PackageNotFoundError:
                if marker:
                    continue  # a dependency for another Python or platform
                raise DistError(f"{dep} (needed by {name}) is not installed for {sys.executable}")
            pending.append(dep)
        for file in dist.files or []:
            if file.suffix == ".pyc" or "__pycache__" in file.parts or str(file).startswith(".."):
                continue
            payload[f"payload/{tag}/{file.as_posix()}"] = Path(str(file.locate())).read_bytes()
    return payload


def _wheel_deps(requirements: list[str], pythons: tuple[str, ...], wheelhouse: Path | None) -> Payload:
    """pip's choice of wheels for each version; a wheel chosen for every version goes to common/."""
    chosen: dict[str, list[Path]] = {}
    with tempfile.TemporaryDirectory(prefix="kseg-pyz-") as tmp:
        for version in pythons:
            dest = Path(tmp) / version
            _download(requirements, version, dest, wheelhouse)
            for wheel in dest.glob("*.whl"):
                chosen.setdefault(wheel.name, []).append(wheel)
        payload: Payload = {}
        for name, copies in sorted(chosen.items()):
            if len(copies) == len(pythons):
                dirs = ["common"]
            else:
                dirs = [_tag(copy.parent.name) for copy in copies]
            for where in dirs:
                payload.update(_unpack_wheel(copies[0], f"payload/{where}/"))
        return payload


def _download(requirements: list[str], version: str, dest: Path, wheelhouse: Path | None) -> None:
    tag = _tag(version)
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--dest", str(dest),
        "--implementation", "cp", "--python-version", version,
        "--abi", tag, "--abi", "abi3", "--abi", "none",
    ]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    if wheelhouse is not None:
        command += ["--no-index", "--find-links", str(wheelhouse)]
    result = subprocess.run(command + requirements, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise DistError(f"pip download for Python {version} failed: {last}")


def _unpack_wheel(wheel: Path, prefix: str) -> Payload:
    with zipfile.ZipFile(wheel) as zf:
        return {prefix + n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}


def _write(out: Path, payload: Payload, manifest: dict[str, object]) -> None:
    """The archive: a shebang line, then the zip (written to a sibling and renamed over ``out``)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("__main__.py", MAIN.read_bytes())
        zf.writestr("kseg-pyz.json", json.dumps(manifest, indent=1, sort_keys=True))
        for name in sorted(payload):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            zf.writestr(info, payload[name])
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    partial.write_bytes(b"#!/usr/bin/env python3\n" + buffer.getvalue())
    partial.chmod(0o755)
    partial.replace(out)

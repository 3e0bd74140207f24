"""kseg's build backend (PEP 517): maturin when the core can be built, a pure wheel when it cannot.

pyproject names this module (``backend-path = ["."]``) and lists no static build requirement, so
``pip install .`` on a host without cargo needs nothing from an index: the pure wheel is written
by :mod:`tools.dist.wheels` from the standard library alone, and kseg runs its pure-Python path
(docs/core.md). With cargo on PATH (and ``KSEG_BUILD_PURE`` unset or ``0``) every hook is
maturin's, asked for through ``get_requires_for_build_*`` exactly as before (docs/dist.md).
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MATURIN = "maturin>=1.7,<2"


def _pure() -> bool:
    """Build without the core: asked for (``KSEG_BUILD_PURE=1``), or no cargo to build it with."""
    if os.environ.get("KSEG_BUILD_PURE", "").strip() not in ("", "0"):
        return True
    return shutil.which("cargo") is None


def _maturin() -> Any:
    import maturin

    return maturin


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [] if _pure() else [MATURIN]


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [] if _pure() else [MATURIN]


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [MATURIN]


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    return str(_maturin().build_sdist(sdist_directory, config_settings))


def build_wheel(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None,
) -> str:
    if not _pure():
        return str(_maturin().build_wheel(wheel_directory, config_settings, metadata_directory))
    from tools.dist.wheels import build_pure_wheel

    return build_pure_wheel(ROOT, Path(wheel_directory)).name


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None,
) -> str:
    """Editable: maturin's (the core built into kseg/), or the pure wheel's metadata and a .pth to the tree."""
    if not _pure():
        return str(_maturin().build_editable(wheel_directory, config_settings, metadata_directory))
    from tools.dist.wheels import build_pure_wheel

    return build_pure_wheel(ROOT, Path(wheel_directory), editable=True).name


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: dict[str, Any] | None = None,
) -> str:
    if not _pure():
        return str(_maturin().prepare_metadata_for_build_wheel(metadata_directory, config_settings))
    return _pure_metadata(metadata_directory)


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: dict[str, Any] | None = None,
) -> str:
    if not _pure():
        return str(_maturin().prepare_metadata_for_build_editable(metadata_directory, config_settings))
    return _pure_metadata(metadata_directory)


def _pure_metadata(metadata_directory: str) -> str:
    """The pure wheel's .dist-info, unpacked into ``metadata_directory``."""
    import tempfile

    from tools.dist.wheels import build_pure_wheel

    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_pure_wheel(ROOT, Path(tmp))
        with zipfile.ZipFile(wheel) as zf:
            names = [n for n in zf.namelist() if n.split("/")[0].endswith(".dist-info")]
            zf.extractall(metadata_directory, names)
    return names[0].split("/")[0]

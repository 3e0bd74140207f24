"""KSEG_PURE and ``kseg --version``: which path runs, said by the CLI, forced by the environment."""

from __future__ import annotations

import os
import subprocess
import sys

from support import REPO

from kseg import __version__


def _run(*args: str, pure: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KSEG_PURE"}
    if pure is not None:
        env["KSEG_PURE"] = pure
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=REPO, check=False)


def test_version_says_the_core_is_in_use(core):
    result = _run("-m", "kseg", "--version", pure=None)
    assert (result.returncode, result.stdout, result.stderr) == (
        0, f"kseg, version {__version__} (compiled core {core.__version__} in use)\n", "",
    )


def test_kseg_pure_forces_python_and_version_says_so(core):
    result = _run("-m", "kseg", "--version", pure="1")
    assert (result.returncode, result.stdout, result.stderr) == (
        0, f"kseg, version {__version__} (pure Python: KSEG_PURE is set)\n", "",
    )
    probe = "import kseg.format._core as c, kseg.format.walk as w; print(c.CORE is None, w.CORE is None)"
    assert _run("-c", probe, pure="1").stdout == "True True\n"
    assert _run("-c", probe, pure="0").stdout == "False False\n"


def test_a_core_that_does_not_load_leaves_python_in_charge():
    """An unloadable kseg._core (here: an import that fails) -> pure Python, said by --version."""
    code = (
        "import sys, kseg; sys.modules['kseg._core'] = None; "  # makes `from kseg import _core` fail
        "from kseg.cli import main; sys.argv = ['kseg', '--version']; main()"
    )
    result = _run("-c", code, pure=None)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"kseg, version {__version__} (pure Python: the compiled core did not load (")

"""The compiled core's one door: whether it is in use, and how its failures reach the user.

``kseg._core`` (Rust: ``rust/kseg-wire``, bound by ``rust/kseg-py``; docs/core.md) does the
per-batch loops of the walker (:mod:`kseg.format.walk`).  Only ``kseg.format`` may import
this module (tests/test_architecture.py), and only this module imports ``kseg._core``.

The pure-Python path stays complete and is the reference: the core is used when it imports
and ``KSEG_PURE`` is not set (``KSEG_PURE=1`` forces Python); a core that fails to import is
reported by ``kseg --version`` and otherwise ignored.  tests/core/ prove the two paths agree.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

from kseg.errors import KsegError

#: Arguments the core cannot take (a buffer it cannot borrow, a negative position): the caller
#: runs the pure-Python path instead.
NOT_FOR_CORE = (BufferError, TypeError, OverflowError, ValueError)


def _load() -> tuple[ModuleType | None, str]:
    if os.environ.get("KSEG_PURE", "").strip() not in ("", "0"):
        return None, "pure Python: KSEG_PURE is set"
    try:
        import kseg._core
    except ImportError as err:
        return None, f"pure Python: the compiled core did not load ({err})"
    return kseg._core, f"compiled core {kseg._core.__version__} in use"


#: The module, or None on the pure-Python path; STATUS says which, for ``kseg --version``.
CORE, STATUS = _load()


def core_failure(error: Exception, position: int) -> KsegError:
    """kseg's one-line error for a panic inside the core (a bug): never a traceback or a crash."""
    return KsegError(
        f"internal error in kseg's compiled core ({error}); KSEG_PURE=1 runs the pure-Python path",
        offset=position,
    )


def is_core_failure(error: BaseException) -> bool:
    """Whether ``error`` is the core's converted panic (``kseg._core.CoreError``)."""
    return CORE is not None and isinstance(error, CORE.CoreError)


def call(function: Callable[..., Any], position: int, *args: Any) -> Any:
    """``function(*args)`` of the core, for every caller alike.

    Returns ``NotImplemented`` when the core cannot take the arguments (a buffer it cannot
    borrow, a negative or oversized number: the caller runs the pure-Python path), and raises
    kseg's one-line error, located at ``position``, for a panic inside the core.
    """
    try:
        return function(*args)
    except NOT_FOR_CORE:
        return NotImplemented
    except Exception as err:
        if is_core_failure(err):
            raise core_failure(err, position) from None
        raise

"""The compiled core under test: present, or a skip locally and a failure under CI=true.

The differential tests import ``kseg._core`` themselves (whatever ``KSEG_PURE`` says: CI runs the
suite once with it set, and the core must agree with Python in both runs) and compare it with the
pure-Python reference functions of ``kseg.format``.
"""

from __future__ import annotations

from types import ModuleType

import pytest
from support import IN_CI


@pytest.fixture(scope="session")
def core() -> ModuleType:
    try:
        from kseg import _core
    except ImportError as err:
        message = f"the compiled core kseg._core is not built ({err}); pip install -e . builds it"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return _core

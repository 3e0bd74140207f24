"""pytest wiring for the real-broker tests (tests/broker): Kafka 4.3.0 from ``../shared/kafka``.

Every test here is marked ``broker``. Without Java, ``../shared/kafka`` or kafka-python they are skipped
with the reason, except under CI=true, where that is a failure (CI has Java 17 and shared/).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

import kafka_broker as kb
from support import IN_CI


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.broker)


@pytest.fixture(scope="session")
def broker_env() -> dict[str, str]:
    """kafka.sh's environment (jars from tests/interop/jars.py's cache), or a skip / CI failure."""
    try:
        return kb.broker_env()
    except kb.BrokerUnavailable as error:
        if IN_CI:
            pytest.fail(str(error), pytrace=False)
        pytest.skip(str(error))
        raise AssertionError from None  # unreachable

"""pytest wiring for the Apache Kafka interop tests (tests/interop).

Provides the session-scoped fixtures ``kafka_storage`` (Kafka 4.3.0's storage and tools code from
``../shared/oracle``: kafka_storage.py) and ``kafka_oracle``: a ready ``oracle.KafkaOracle`` (jars fetched by
jars.py, KafkaOracle.java compiled once per session, or not at all when the stamp is current).
Without java/javac the tests are skipped, except under CI=true where they fail (see oracle_or_skip).
Every test in this directory is marked ``interop``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # lets tests here `from oracle import ...` under any --import-mode
    sys.path.insert(0, str(_HERE))

from kafka_storage import KafkaStorage, storage_or_skip
from oracle import KafkaOracle, oracle_or_skip


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.interop)


@pytest.fixture(scope="session")
def kafka_oracle() -> KafkaOracle:
    return oracle_or_skip()


@pytest.fixture(scope="session")
def kafka_storage() -> KafkaStorage:
    return storage_or_skip()

"""kseg's own transcription of the Kafka message definitions it decodes, pinned to Kafka 4.3.0.

One module per topic family, each a plain list of :func:`~kseg.format.messages.message`
definitions with their provenance (source path in Kafka's tree, apiKey, validVersions,
flexibleVersions).  Nothing here reads Kafka's files at run time; a family is imported
the first time something asks for it.  ``tests/format/test_schema_transcription.py`` compares
every family with Kafka 4.3.0's JSON definitions (``shared/reference/kafka-4.3.0-messages/``).

How each family module transcribes: from the directory its docstring names, at Kafka 4.3.0
(confluentinc/kafka a9ce3221537b8653448750697915607dc7936cf3, "Bump version to 4.3.0"; the same
files are in ``shared/reference/kafka-4.3.0-messages/``).  Each ``message(...)`` names its source
file, ``apiKey`` (the record type of coordinator records), ``validVersions`` and
``flexibleVersions``; fields keep Kafka's names, types, versions, nullable/tagged versions, tags and
defaults, in Kafka's order.  Left out because they do not change what is read or printed:
``about``, ``entityType``, ``mapKey``, ``ignorable``, ``zeroCopy``, the message ``type``.  A field
without ``versions`` in Kafka's file takes its ``taggedVersions`` (as Kafka's generator does); here
both are written.

===========================  ==========================================================
module                       what it holds
===========================  ==========================================================
``group_coordinator``        ``__consumer_offsets`` keys and values (record types 0-8, 10-17, 19-23);
                             share groups in ``group_coordinator_share``, streams groups in
                             ``group_coordinator_streams``
``transaction_coordinator``  ``__transaction_state`` key and value
``share_coordinator``        ``__share_group_state`` keys and values
``metadata``                 KRaft ``__cluster_metadata`` records (api keys 0-28)
``storage``                  ``__remote_log_metadata`` records, producer-state snapshot
``clients``                  KRaft control-record values, consumer embedded protocol
``metadata_history``         older trunk layouts of two metadata records (tried last)
===========================  ==========================================================
"""

from __future__ import annotations

import importlib
from functools import cache

from kseg.format.messages import Message

FAMILIES = (
    "group_coordinator",
    "transaction_coordinator",
    "share_coordinator",
    "metadata",
    "storage",
    "clients",
)
#: Families with historical variants: family -> module of variants, tried when the pinned definition fails.
HISTORY = {"metadata": "metadata_history"}


@cache
def family(name: str) -> dict[str, Message]:
    """Every message of one family, by Kafka's message name (imported on first use)."""
    if name not in FAMILIES and name not in HISTORY.values():
        raise KeyError(f"no schema family {name!r}")
    module = importlib.import_module(f"{__name__}.{name}")
    return {msg.name: msg for msg in module.MESSAGES}


def get(family_name: str, message_name: str) -> Message:
    """One message definition, e.g. ``get("metadata", "TopicRecord")``."""
    return family(family_name)[message_name]


@cache
def by_api_key(family_name: str) -> dict[int, Message]:
    """Messages by ``apiKey``, for the KRaft-framed families (metadata, storage) where it is unique.

    (Coordinator records carry it too, as their record type, shared by a key and its value.)
    """
    return {msg.api_key: msg for msg in family(family_name).values() if msg.api_key is not None}


def variants(family_name: str, message_name: str) -> tuple[Message, ...]:
    """Historical variants of a message (usually none): other layouts Kafka wrote at the same versions."""
    module = HISTORY.get(family_name)
    if module is None:
        return ()
    return tuple(msg for msg in family(module).values() if msg.name == message_name)

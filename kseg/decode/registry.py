"""An offline schema registry: schema id -> schema, rebuilt from a ``_schemas`` partition or a REST export.

Confluent Schema Registry (and Karapace, and Redpanda's) keeps its state in
a compacted topic, ``_schemas`` by default, as JSON keys and values:

* ``{"keytype":"SCHEMA","subject":S,"version":V,"magic":1}`` ->
  ``{"subject":S,"version":V,"id":N,"schemaType":"PROTOBUF"|"JSON" (absent: AVRO),"schema":TEXT,
  "references":[{"name":..,"subject":..,"version":..}],"deleted":BOOL}``; a null value (tombstone)
  is a version deleted for good;
* ``{"keytype":"CONFIG","subject":S|null}`` -> ``{"compatibilityLevel":..}`` (null: back to the default);
* ``{"keytype":"DELETE_SUBJECT","subject":S}`` -> ``{"subject":S,"version":V}``: every version up to V
  soft-deleted;
* ``{"keytype":"MODE",...}``, ``NOOP``, ``CLEAR_SUBJECT``: read, kept only as counts.

The registry replays the log in offset order; the last record of a key wins,
as in the registry's own ``KafkaStore``.  A REST export is what
``GET /schemas?deleted=true`` returns (a JSON array of ``{"subject","version",
"id","schemaType","schema","references"}``, ``deleted`` when given), or one
such object per line.  Soft-deleted schemas stay known (a payload written
before the delete still decodes) and are flagged.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kseg.errors import KsegError
from kseg.format import BAD_SIZE
from kseg.format.whole import all_or_nothing
from kseg.segment import Segment, base_offset_from_name

AVRO, PROTOBUF, JSON = "AVRO", "PROTOBUF", "JSON"


class RegistryError(KsegError):
    """A schema export or ``_schemas`` log that cannot be read at all."""


@dataclass(frozen=True, slots=True)
class Reference:
    """A schema reference: the name the schema imports it by, and which subject version it is."""

    name: str
    subject: str
    version: int


@dataclass(frozen=True, slots=True)
class Schema:
    """One registered schema version."""

    id: int
    subject: str
    version: int
    schema_type: str
    text: str
    references: tuple[Reference, ...] = ()
    deleted: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "subject": self.subject, "version": self.version, "type": self.schema_type,
                "deleted": self.deleted}


@dataclass(slots=True)
class Registry:
    """Schemas by id and by (subject, version), configs by subject, and what the replay met."""

    by_id: dict[int, Schema] = field(default_factory=dict)
    by_version: dict[tuple[str, int], Schema] = field(default_factory=dict)
    configs: dict[str | None, dict[str, Any] | None] = field(default_factory=dict)
    other_keys: Counter[str] = field(default_factory=Counter)
    source: str = ""

    def add(self, schema: Schema) -> None:
        self.by_version[(schema.subject, schema.version)] = schema
        self._holder(schema.id)

    def _holder(self, schema_id: int) -> None:
        """Which version ``by_id`` shows for an id several subjects may share: a live one, else any."""
        holders = [s for s in self.by_version.values() if s.id == schema_id]
        if not holders:
            self.by_id.pop(schema_id, None)
            return
        self.by_id[schema_id] = next((s for s in holders if not s.deleted), holders[0])

    def drop(self, subject: str, version: int) -> None:
        """A tombstone: the version is gone for good (its id too, when no other subject holds it)."""
        gone = self.by_version.pop((subject, version), None)
        if gone is not None:
            self._holder(gone.id)

    def delete_subject(self, subject: str, up_to: int) -> None:
        """``DELETE_SUBJECT``: every version up to ``up_to`` is soft-deleted."""
        for (name, version), schema in list(self.by_version.items()):
            if name == subject and version <= up_to:
                self.add(replace(schema, deleted=True))

    def referenced(self, ref: Reference) -> Schema | None:
        return self.by_version.get((ref.subject, ref.version))


def _schema(value: dict[str, Any]) -> Schema:
    refs = tuple(Reference(str(r["name"]), str(r["subject"]), int(r["version"])) for r in value.get("references") or ())
    return Schema(int(value["id"]), str(value["subject"]), int(value["version"]),
                  str(value.get("schemaType") or AVRO).upper(), str(value["schema"]), refs,
                  bool(value.get("deleted", False)))


def apply_record(registry: Registry, key: bytes | None, value: bytes | None) -> None:
    """One ``_schemas`` record (``KafkaStore``'s key/value JSON); unreadable ones are counted, not fatal."""
    try:
        parsed_key = json.loads(key) if key else None
        parsed_value = json.loads(value) if value else None
    except (ValueError, UnicodeDecodeError):
        registry.other_keys["unreadable"] += 1
        return
    if not isinstance(parsed_key, dict):
        registry.other_keys["unreadable"] += 1
        return
    keytype = str(parsed_key.get("keytype", ""))
    if keytype == "SCHEMA":
        if parsed_value is None:
            registry.drop(str(parsed_key.get("subject")), int(parsed_key.get("version", -1)))
        else:
            registry.add(_schema(parsed_value))
    elif keytype == "CONFIG":
        registry.configs[parsed_key.get("subject")] = parsed_value
    elif keytype == "DELETE_SUBJECT" and isinstance(parsed_value, dict):
        registry.delete_subject(str(parsed_value.get("subject")), int(parsed_value.get("version", -1)))
    else:
        registry.other_keys[keytype or "unknown"] += 1


def from_schemas_partition(directory: Path, max_batch_bytes: int) -> Registry:
    """Replay a ``_schemas`` partition directory's ``.log`` files in base-offset order."""
    registry = Registry(source=str(directory))
    logs = sorted((p for p in directory.iterdir() if p.name.endswith(".log") and base_offset_from_name(p) is not None),
                  key=lambda p: base_offset_from_name(p) or 0)
    for log in logs:
        with Segment(log) as seg:
            walk = seg.walk(strict=False)
            for batch in walk:
                if getattr(batch, "is_control", False):
                    continue
                try:
                    records = all_or_nothing(batch, max_batch_bytes)
                except KsegError:
                    registry.other_keys["unreadable batch"] += 1
                    continue
                for record in records:
                    apply_record(registry, record.key, record.value)
            if walk.end is not None and walk.end.reason == BAD_SIZE:
                registry.other_keys["unreadable tail"] += 1
    return registry


def from_export(path: Path) -> Registry:
    """A REST export: a JSON array of schema objects, ``{"schemas": [...]}``, or one object per line."""
    text = path.read_text(encoding="utf-8")
    try:
        loaded: Any = json.loads(text)
    except ValueError:
        try:
            loaded = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as err:
            raise RegistryError(f"not a schema registry export (JSON or JSON Lines): {err}", path=str(path)) from None
    if isinstance(loaded, dict):
        loaded = loaded.get("schemas", [loaded])
    registry = Registry(source=str(path))
    try:
        schemas = [_schema(item) for item in loaded]
    except (KeyError, TypeError, ValueError) as err:
        raise RegistryError(f"a schema object without a usable {err}", path=str(path)) from None
    for schema in schemas:
        registry.add(schema)
    return registry


def load_registry(path: Path, max_batch_bytes: int) -> Registry:
    """``--schemas PATH``: a ``_schemas`` partition directory, a log directory holding one, or an export file."""
    if path.is_dir():
        if (path / "_schemas-0").is_dir():
            path = path / "_schemas-0"
        return from_schemas_partition(path, max_batch_bytes)
    return from_export(path)

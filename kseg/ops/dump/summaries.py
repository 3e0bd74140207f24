"""The findings ``DumpLogSegments`` collects across files and prints at the end, in Kafka's order.

Kafka keeps them in Scala ``mutable.HashMap``s keyed by absolute path and
prints them in the maps' iteration order, which :class:`ScalaHashMapOrder`
replays from Java's ``String.hashCode`` (:func:`kseg.format.jvm_text.java_string_hash`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

from kseg.format.jvm_text import java_string_hash
from kseg.ops.dump.events import Summary


class ScalaHashMapOrder:
    """The iteration order of a Scala 2.13 ``mutable.HashMap[String, _]`` after a sequence of puts.

    Kafka keeps its summary findings in such maps and prints them in their
    iteration order: buckets in index order (``improveHash(h) & (capacity-1)``,
    ``improveHash(h) = h ^ (h >>> 16)``), within a bucket by ascending hash.
    The table starts at 16 slots and doubles whenever a put -- even one that
    only replaces a value -- finds ``size + 1 >= capacity * 0.75``.
    """

    def __init__(self) -> None:
        self.capacity = 16
        self.keys: dict[str, int] = {}

    def put(self, key: str) -> None:
        if len(self.keys) + 1 >= int(self.capacity * 0.75):
            self.capacity *= 2
        if key not in self.keys:
            h = java_string_hash(key) & 0xFFFFFFFF
            improved = h ^ (h >> 16)
            self.keys[key] = improved - (1 << 32) if improved & 0x80000000 else improved

    def order(self) -> list[str]:
        mask = self.capacity - 1
        return sorted(self.keys, key=lambda k: (self.keys[k] & mask, self.keys[k]))


class Summaries:
    """What DumpLogSegments collects across files and prints at the end (stderr)."""

    def __init__(self) -> None:
        self.index_mismatch: dict[str, list[tuple[int, int]]] = {}
        self.index_order = ScalaHashMapOrder()
        self.time_lists: dict[str, dict[str, list[tuple[int, int]]]] = {
            "time_index_mismatch": {},
            "time_index_out_of_order": {},
            "time_index_offset_not_found": {},
        }
        self.time_orders = {kind: ScalaHashMapOrder() for kind in self.time_lists}
        self.non_consecutive: dict[str, array[int]] = {}
        self.non_consecutive_order = ScalaHashMapOrder()

    def add_index_mismatch(self, path: str, index_offset: int, log_offset: int) -> None:
        self.index_mismatch.setdefault(path, []).append((index_offset, log_offset))
        self.index_order.put(path)  # Kafka puts the (prepended) list back on every finding

    def add_time(self, kind: str, path: str, first: int, second: int) -> None:
        found = self.time_lists[kind]
        if path not in found:  # Kafka puts the buffer only when it is new
            found[path] = []
            self.time_orders[kind].put(path)
        found[path].append((first, second))

    def non_consecutive_for(self, path: str) -> array[int]:
        return self.non_consecutive.setdefault(path, array("q"))

    def note_non_consecutive(self, path: str) -> None:
        self.non_consecutive_order.put(path)

    def events(self) -> Iterator[Summary]:
        """The summary sections in Kafka's order (mismatch and non-consecutive lists newest first)."""
        for path in self.index_order.order():
            yield Summary("index_mismatch", path, tuple(reversed(self.index_mismatch[path])))
        for kind, found in self.time_lists.items():
            for path in self.time_orders[kind].order():
                yield Summary(kind, path, tuple(found[path]))
        for path in self.non_consecutive_order.order():
            flat = self.non_consecutive[path]
            if flat:
                pairs = tuple((flat[i], flat[i + 1]) for i in range(len(flat) - 2, -1, -2))
                yield Summary("non_consecutive_offsets", path, pairs)

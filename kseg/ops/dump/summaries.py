"""The findings ``DumpLogSegments`` collects across files and prints at the end, in Kafka's order.

Up to 4.2 Kafka keeps them in Scala ``mutable.HashMap``s keyed by absolute
path and prints them in the maps' iteration order, which
:class:`ScalaHashMapOrder` replays from Java's ``String.hashCode``
(:func:`kseg.format.jvm_text.java_string_hash`).  The 4.3 Java port
(tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java, ``main`` and
``TimeIndexDumpErrors``) uses ``java.util.HashMap`` (:class:`JavaHashMapOrder`)
and per file a ``TreeMap``: index mismatches by index offset, descending, one
per offset; non-consecutive pairs by the offset before the gap, ascending, one
per offset.
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


class JavaHashMapOrder:
    """The iteration order of a ``java.util.HashMap<String, _>`` filled by ``computeIfAbsent``.

    Buckets in index order (``(h ^ h >>> 16) & (capacity - 1)``), within a
    bucket newest first (``HashMap.computeIfAbsent`` links a new node in front
    of the bucket's first; a resize splits buckets keeping their order).
    The table starts at 16 slots and doubles when the size passes 0.75 of it.
    (Buckets of 8 or more keys become trees once the table has 64 slots --
    not modelled: that takes 8 paths with the same hash bits.)
    """

    def __init__(self) -> None:
        self.capacity = 16
        self.keys: dict[str, int] = {}

    def put(self, key: str) -> None:
        """One ``computeIfAbsent``: it first grows a table whose size passed the threshold (even when the
        key is already there), then links a new key in."""
        if len(self.keys) > self.capacity * 3 // 4:
            self.capacity *= 2
        if key not in self.keys:
            h = java_string_hash(key) & 0xFFFFFFFF
            self.keys[key] = h ^ (h >> 16)

    def order(self) -> list[str]:
        mask = self.capacity - 1
        seq = {key: i for i, key in enumerate(self.keys)}
        return sorted(self.keys, key=lambda k: (self.keys[k] & mask, -seq[k]))


class Summaries:
    """What DumpLogSegments collects across files and prints at the end (stderr); ``java``: 4.3's maps."""

    def __init__(self, java: bool = False) -> None:
        self.java = java
        self.index_mismatch: dict[str, list[tuple[int, int]]] = {}
        self.index_order: ScalaHashMapOrder | JavaHashMapOrder = JavaHashMapOrder() if java else ScalaHashMapOrder()
        self.time_lists: dict[str, dict[str, list[tuple[int, int]]]] = {
            "time_index_mismatch": {},
            "time_index_out_of_order": {},
            "time_index_offset_not_found": {},
        }
        self.time_orders = {kind: JavaHashMapOrder() if java else ScalaHashMapOrder() for kind in self.time_lists}
        self.non_consecutive: dict[str, array[int]] = {}
        self.non_consecutive_order = JavaHashMapOrder() if java else ScalaHashMapOrder()

    def add_index_mismatch(self, path: str, index_offset: int, log_offset: int) -> None:
        self.index_mismatch.setdefault(path, []).append((index_offset, log_offset))
        self.index_order.put(path)  # Kafka puts the (prepended) list back on every finding

    def add_time(self, kind: str, path: str, first: int, second: int) -> None:
        found = self.time_lists[kind]
        if path not in found:  # Scala puts the buffer only when it is new
            found[path] = []
            self.time_orders[kind].put(path)
        elif self.java:  # 4.3 calls computeIfAbsent on every finding
            self.time_orders[kind].put(path)
        found[path].append((first, second))

    def non_consecutive_for(self, path: str) -> array[int]:
        return self.non_consecutive.setdefault(path, array("q"))

    def note_non_consecutive(self, path: str) -> None:
        self.non_consecutive_order.put(path)

    def events(self) -> Iterator[Summary]:
        """The summary sections in Kafka's order (mismatch and non-consecutive lists newest first)."""
        for path in self.index_order.order():
            mismatches = self.index_mismatch[path]
            if self.java:  # TreeMap(reverseOrder()): one entry per index offset, the last put wins
                yield Summary("index_mismatch", path, tuple(sorted(dict(mismatches).items(), reverse=True)))
            else:
                yield Summary("index_mismatch", path, tuple(reversed(mismatches)))
        for kind, found in self.time_lists.items():
            for path in self.time_orders[kind].order():
                yield Summary(kind, path, tuple(found[path]))
        for path in self.non_consecutive_order.order():
            flat = self.non_consecutive[path]
            if flat and self.java:  # TreeMap: ascending by the offset before the gap, the last put wins
                by_first = {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}
                yield Summary("non_consecutive_offsets", path, tuple(sorted(by_first.items())))
            elif flat:
                pairs = tuple((flat[i], flat[i + 1]) for i in range(len(flat) - 2, -1, -2))
                yield Summary("non_consecutive_offsets", path, pairs)

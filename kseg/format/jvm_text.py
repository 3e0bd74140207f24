"""Java-compatibility helpers: text and hashes exactly as the JVM code behind Kafka's tools makes them.

kseg reproduces output that Kafka's tools build through Java and Scala
objects, so a few JVM behaviours are replayed here, each from its source:

* **String.hashCode and Scala's HashSet order.**  ``--transaction-log-decoder``
  lists a transaction's partitions by iterating a Scala 2.13
  ``mutable.HashSet[TopicPartition]`` (``TransactionMetadata.topicPartitions``),
  so their order is the hash table's.  :func:`scala_hash_set_order` replays
  that table: Java's ``String.hashCode`` (:func:`java_string_hash`) and
  ``TopicPartition.hashCode``, Scala's ``improveHash``, buckets kept sorted by
  hash, growth on ``sizeHint`` and at the 0.75 load factor
  (``scala/collection/mutable/HashSet.scala``).  This is the one place
  ``String.hashCode`` is written.
* **Bytes to text as ``new String(bytes, StandardCharsets.UTF_8)``**
  (:func:`java_utf8`).  Kafka turns bytes into text this way in two places
  that ``kafka-dump-log`` shows: record header keys
  (``DefaultRecord.readHeaders`` -> ``Utils.utf8``) and keys/payloads printed
  with the default ``StringDecoder``.  Malformed input is replaced by U+FFFD,
  one replacement per malformed sequence.  Java and Python agree on valid
  input and mostly agree on where one malformed sequence ends (the Unicode
  "maximal subpart" practice), but not everywhere.  The rules are read from
  ``java.lang.String.decodeUTF8_UTF16`` (JDK 17, same in JDK 11-21); the
  differences from Python's ``errors="replace"`` are:

  - an encoded surrogate (``ED A0..BF xx``) is one malformed 3-byte sequence
    for Java (one U+FFFD) but three for Python;
  - ``ED A0..BF`` cut off by the end of the input is one U+FFFD for Java, two
    for Python.

  Everything else -- stray continuation bytes, ``C0``/``C1``/``F5``-``FF``,
  overlong ``E0 80``/``F0 80`` forms, code points above U+10FFFF, sequences cut
  short by a non-continuation byte or by the end of the input -- comes out the
  same.  tests/interop/test_dump_vs_kafka.py checks this against a real JVM.
* **Reading text files as Kafka's Java readers do**: ``BufferedReader.readLine``
  (:func:`java_lines`), ``String.split`` (:func:`java_split`) and
  ``Integer.parseInt``/``Long.parseLong`` (:func:`java_number`), used by the
  checkpoint and properties readers in :mod:`kseg.format.checkpoints`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kseg.errors import Corrupt

_MASK32 = 0xFFFFFFFF


# --------------------------------------------------------------------------- hashes


def _int32(value: int) -> int:
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """``String.hashCode``: s[0]*31^(n-1) + ... over UTF-16 code units, in int arithmetic."""
    units = text.encode("utf-16-be", "surrogatepass")
    value = 0
    for i in range(0, len(units), 2):
        value = (31 * value + (units[i] << 8 | units[i + 1])) & _MASK32
    return _int32(value)


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode``: 31 * (31 + partition) + topic.hashCode()."""
    return _int32(31 * (31 + partition) + java_string_hash(topic))


def _improve_hash(hash_code: int) -> int:
    """Scala's ``HashSet.improveHash``: h ^ (h >>> 16)."""
    return _int32(hash_code ^ ((hash_code & _MASK32) >> 16))


def _table_size_for(capacity: int) -> int:
    highest = 1 << (max(capacity - 1, 4).bit_length() - 1)
    return min(highest * 2, 1 << 30)


class _ScalaHashSet:
    """Just enough of Scala 2.13's ``mutable.HashSet`` to know its iteration order."""

    LOAD_FACTOR = 0.75

    def __init__(self) -> None:
        self.table: list[list[tuple[int, tuple[str, int]]]] = [[] for _ in range(_table_size_for(16))]
        self.threshold = int(len(self.table) * self.LOAD_FACTOR)
        self.size = 0

    def _grow(self, new_length: int) -> None:
        entries = [entry for bucket in self.table for entry in bucket]
        self.table = [[] for _ in range(new_length)]
        self.threshold = int(new_length * self.LOAD_FACTOR)
        for entry in entries:  # bucket order is preserved by the split, and buckets stay sorted by hash
            self.table[entry[0] & (new_length - 1)].append(entry)

    def _add_elem(self, elem: tuple[str, int], hashed: int) -> None:
        bucket = self.table[hashed & (len(self.table) - 1)]
        index = 0
        while index < len(bucket) and bucket[index][0] <= hashed:
            if bucket[index] == (hashed, elem):
                return
            index += 1
        bucket.insert(index, (hashed, elem))
        self.size += 1

    def add_all(self, elems: list[tuple[str, int]]) -> None:
        """``++=`` of an immutable Set: size hint first; Set1..Set4 go through ``add`` (which grows)."""
        target = _table_size_for(int((len(elems) + 1) / self.LOAD_FACTOR))
        if target > len(self.table):
            self._grow(target)
        for elem in elems:
            if len(elems) <= 4 and self.size + 1 >= self.threshold:
                self._grow(len(self.table) * 2)
            self._add_elem(elem, _improve_hash(topic_partition_hash(*elem)))

    def __iter__(self) -> Iterator[tuple[str, int]]:
        for bucket in self.table:
            for _, elem in bucket:
                yield elem


def scala_hash_set_order(groups: list[tuple[str, list[int]]]) -> list[tuple[str, int]]:
    """The order ``TransactionMetadata.topicPartitions`` iterates after one ``addPartitions`` per topic.

    ``groups`` is ``TransactionPartitions`` as stored: (topic, partition ids).
    Within one topic the ids are first made a Scala immutable ``Set``
    (duplicates dropped).  Elements with equal hashes keep list order here;
    Scala would take them in its immutable set's trie order (a tie needs two
    different partitions with the same 32-bit hash, and is not modelled).
    """
    table = _ScalaHashSet()
    for topic, partitions in groups:
        table.add_all([(topic, p) for p in dict.fromkeys(partitions)])
    return list(table)


# --------------------------------------------------------------------------- UTF-8 as Java decodes it


REPLACEMENT = "\ufffd"


def java_utf8(data: bytes) -> str:
    """Decode ``data`` the way Java's UTF-8 String constructor does (never raises)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return _decode_slow(bytes(data))


def _is_cont(b: int) -> bool:
    return (b & 0xC0) == 0x80


def _decode_slow(src: bytes) -> str:
    """The replacement path of ``decodeUTF8_UTF16``, one lead byte at a time."""
    out: list[str] = []
    sp, sl = 0, len(src)
    while sp < sl:
        b1 = src[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:
            if sp >= sl:
                out.append(REPLACEMENT)
                break
            if _is_cont(src[sp]):
                out.append(chr(((b1 & 0x1F) << 6) | (src[sp] & 0x3F)))
                sp += 1
            else:
                out.append(REPLACEMENT)  # the next byte starts over
        elif 0xE0 <= b1 <= 0xEF:
            sp, text, stop = _three(src, sp, sl, b1)
            out.append(text)
            if stop:
                break
        elif 0xF0 <= b1 <= 0xF7:
            sp, text, stop = _four(src, sp, sl, b1)
            out.append(text)
            if stop:
                break
        else:  # 80..BF, C0, C1, F8..FF
            out.append(REPLACEMENT)
    return "".join(out)


def _bad_second_3(b1: int, b2: int) -> bool:
    """``isMalformed3_2``: note that ED A0..BF (surrogates) is *not* caught here."""
    return (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _is_cont(b2)


def _three(src: bytes, sp: int, sl: int, b1: int) -> tuple[int, str, bool]:
    """A 3-byte lead at ``sp - 1``: (next position, text, stop decoding)."""
    if sp + 1 < sl:
        b2, b3 = src[sp], src[sp + 1]
        if _bad_second_3(b1, b2):
            return sp, REPLACEMENT, False  # malformed3 -> length 1
        if not _is_cont(b3):
            return sp + 1, REPLACEMENT, False  # malformed3 -> length 2
        c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
        if 0xD800 <= c <= 0xDFFF:
            return sp + 2, REPLACEMENT, False  # one replacement for all three bytes
        return sp + 2, chr(c), False
    if sp < sl and _bad_second_3(b1, src[sp]):
        return sp, REPLACEMENT, False
    return sl, REPLACEMENT, True  # truncated at the end: one replacement, stop


def _bad_second_4(b1: int, b2: int) -> bool:
    """``isMalformed4_2``."""
    return (
        (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
        or (b1 == 0xF4 and (b2 & 0xF0) != 0x80)
        or not _is_cont(b2)
    )


def _four(src: bytes, sp: int, sl: int, b1: int) -> tuple[int, str, bool]:
    """A 4-byte lead at ``sp - 1``: (next position, text, stop decoding)."""
    if sp + 2 < sl:
        b2, b3, b4 = src[sp], src[sp + 1], src[sp + 2]
        if b1 > 0xF4 or _bad_second_4(b1, b2):
            return sp, REPLACEMENT, False  # malformed4 -> length 1
        if not _is_cont(b3):
            return sp + 1, REPLACEMENT, False  # length 2
        if not _is_cont(b4):
            return sp + 2, REPLACEMENT, False  # length 3
        cp = ((b1 & 0x07) << 18) | ((b2 & 0x3F) << 12) | ((b3 & 0x3F) << 6) | (b4 & 0x3F)
        return sp + 3, chr(cp), False
    if b1 > 0xF4 or (sp < sl and _bad_second_4(b1, src[sp])):
        return sp, REPLACEMENT, False
    sp += 1  # the (valid) second byte, if any, goes with the replacement
    if sp < sl and not _is_cont(src[sp]):
        return sp, REPLACEMENT, False  # a third byte that cannot continue starts over
    return sl, REPLACEMENT, True


# --------------------------------------------------------------------------- text files as Java reads them

_JAVA_LINE = re.compile(rb"\r\n|\r|\n")
_JAVA_SPACE = re.compile(r"[ \t\n\x0b\f\r]+")  # Java's \s
_JAVA_DIGITS = re.compile(r"[+-]?[0-9]+\Z")


#: How much of a line from a file a message quotes: Kafka quotes all of it, which for a 64 MiB line
#: of a forged checkpoint is a 64 MiB message (docs/cli.md §10, side files).
QUOTE_LIMIT = 1000


def quoted(text: str) -> str:
    """``text`` as a message quotes it: whole up to :data:`QUOTE_LIMIT` characters, else its start and its length."""
    if len(text) <= QUOTE_LIMIT:
        return text
    return f"{text[:QUOTE_LIMIT]}... [{len(text) - QUOTE_LIMIT} more characters]"


def java_number(text: str, bits: int) -> int | None:
    """``Integer.parseInt`` (bits 32) / ``Long.parseLong`` (bits 64), or None where Java throws."""
    if not _JAVA_DIGITS.match(text):
        return None
    value = int(text)
    return value if -(1 << (bits - 1)) <= value < 1 << (bits - 1) else None


def java_split(line: str, pattern: re.Pattern[str] = _JAVA_SPACE) -> list[str]:
    """``String.split(regex)``: no match gives the whole line; trailing empty parts are dropped."""
    parts = pattern.split(line)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_lines(data: bytes, encoding: str = "utf-8") -> tuple[list[tuple[int, str]], Corrupt | None]:
    """``(byte position, line)`` as ``BufferedReader.readLine`` returns them, up to undecodable bytes.

    Line ends are ``\n``, ``\r`` or ``\r\n`` (bytes that never occur inside a
    UTF-8 sequence); a line with bytes that do not decode ends the list and
    becomes the problem (Java: ``MalformedInputException``).
    """
    lines: list[tuple[int, str]] = []
    start = 0
    ends = [(m.start(), m.end()) for m in _JAVA_LINE.finditer(data)]
    if start < len(data) and (not ends or ends[-1][1] < len(data)):
        ends.append((len(data), len(data)))
    for stop, after in ends:
        try:
            lines.append((start, data[start:stop].decode(encoding)))
        except UnicodeDecodeError as exc:
            where = start + exc.start
            return lines, Corrupt(f"not UTF-8 text: {exc.reason} (Java: MalformedInputException)", offset=where)
        start = after
    return lines, None

"""``partition.metadata`` as the ``UnifiedLog`` constructor reads it at load, failure for failure (R1.6, R9.6).

``UnifiedLog.initializeTopicId`` runs after ``LogLoader.load`` has finished
(every file change of the load is on disk): if the file exists,
``PartitionMetadataFile.read`` parses it with ``PartitionMetadataReadBuffer``
(storage, 4.3.0):

* line 1 split on ``:\\s+`` must give two parts, the second an ``Integer.parseInt``
  (else ``IOException("Malformed line in partition metadata file [<path>]: <line>")``,
  with the ``NumberFormatException`` as cause when the number fails), and be
  ``>= 0`` (else ``IOException("Unrecognized version of partition metadata file
  (<path>): <v>")``); any version above 0 is accepted;
* line 2 split the same way must give two parts, the second ``Uuid.fromString``
  (``IllegalArgumentException`` from the length check or ``java.util.Base64``'s
  URL decoder, *not* caught: the broker stops), and not the zero UUID (else
  ``IOException("Invalid topic ID in partition metadata file (<path>)")``);
* a missing line 1 or 2 (empty file, one line) hands ``null`` to
  ``Pattern.split``: a bare ``NullPointerException`` (the broker stops);
* bytes that are not UTF-8 make ``BufferedReader`` throw ``MalformedInputException``.

Every ``IOException`` is reported to the failure channel and rethrown as
``KafkaStorageException("Error while reading partition metadata file <path>")``:
the log directory goes offline.  Lines after the second are never read.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

from kseg.format.jvm_text import java_lines, java_number, java_split
from kseg.recovery.loading.model import BROKER_STOPS, DIR_OFFLINE, LoadError

FILE = "partition.metadata"
METHOD = "UnifiedLog.initializeTopicId -> PartitionMetadataFile.read"
_COLON_SPACE = re.compile(r":[ \t\n\x0b\f\r]+")  # Java's \s: ASCII whitespace only
_NPE = 'Cannot invoke "java.lang.CharSequence.length()" because "this.text" is null'
_URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_FROM_BASE64_URL = {ord(c): i for i, c in enumerate(_URL_ALPHABET)} | {ord("="): -2}
ZERO_UUID = bytes(16)


class JavaIllegalArgument(Exception):
    """``java.lang.IllegalArgumentException`` with Java's message."""


def _latin1(text: str) -> bytes:
    """``String.getBytes(ISO_8859_1)``: UTF-16 units above U+00FF become ``?``."""
    units = text.encode("utf-16-be", "surrogatepass")
    return bytes(u if u <= 0xFF else 0x3F for u in (units[i] << 8 | units[i + 1] for i in range(0, len(units), 2)))


def _signed_hex(byte: int) -> str:
    """``Integer.toString(b, 16)`` of a Java (signed) byte."""
    value = byte - 256 if byte > 127 else byte
    return f"-{-value:x}" if value < 0 else f"{value:x}"


def java_base64_url_decode(text: str) -> bytes:
    """``Base64.getUrlDecoder().decode(String)`` (JDK 17 ``Base64.Decoder.decode0``), errors as Java's."""
    src = _latin1(text)
    if len(src) == 1:
        raise JavaIllegalArgument("Input byte[] should at least have 2 bytes for base64 bytes")
    out = bytearray()
    bits, shift, sp = 0, 18, 0
    while sp < len(src):
        value = _FROM_BASE64_URL.get(src[sp], -1)
        sp += 1
        if value == -2:  # padding
            if shift == 18 or (shift == 6 and (sp == len(src) or src[sp] != ord("="))):
                raise JavaIllegalArgument("Input byte array has wrong 4-byte ending unit")
            if shift == 6:
                sp += 1
            break
        if value < 0:
            raise JavaIllegalArgument(f"Illegal base64 character {_signed_hex(src[sp - 1])}")
        bits |= value << shift
        shift -= 6
        if shift < 0:
            out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF, bits & 0xFF))
            bits, shift = 0, 18
    if shift == 6:
        out.append((bits >> 16) & 0xFF)
    elif shift == 0:
        out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF))
    elif shift == 12:
        raise JavaIllegalArgument("Last unit does not have enough valid bits")
    if sp < len(src):
        raise JavaIllegalArgument(f"Input byte array has incorrect ending byte at {sp}")
    return bytes(out)


def java_uuid_from_string(text: str) -> bytes:
    """``Uuid.fromString``: the 16 bytes, or Java's ``IllegalArgumentException``."""
    units = len(text.encode("utf-16-be", "surrogatepass")) // 2
    if units > 24:
        prefix = text.encode("utf-16-be", "surrogatepass")[:48].decode("utf-16-be", "surrogatepass")
        raise JavaIllegalArgument(f"Input string with prefix `{prefix}` is too long to be decoded as a base64 UUID")
    raw = java_base64_url_decode(text)
    if len(raw) != 16:
        raise JavaIllegalArgument(f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the "
                                  "expected 16 bytes of a base64-encoded UUID")
    return raw


def _offline(path: Path, cause: str) -> LoadError:
    return LoadError("org.apache.kafka.common.errors.KafkaStorageException",
                     f"Error while reading partition metadata file {path}", DIR_OFFLINE, "R9.6", METHOD, cause)


def _stops(exception: str, message: str) -> LoadError:
    return LoadError(exception, message, BROKER_STOPS, "R9.6", METHOD)


def topic_id_failure(data: bytes, path: Path) -> LoadError | None:
    """What reading ``partition.metadata`` (bytes ``data``, absolute ``path``) throws, or None if it reads."""
    return _read(data, path)[1]


def read_topic_id(data: bytes, path: Path) -> str | None:
    """The topic id as ``Uuid.toString`` prints it (base64url, no padding), None where the read throws."""
    return _read(data, path)[0]


def _read(data: bytes, path: Path) -> tuple[str | None, LoadError | None]:
    found = _parse(data, path)
    if isinstance(found, LoadError):
        return None, found
    return base64.urlsafe_b64encode(found).decode("ascii").rstrip("="), None


def _parse(data: bytes, path: Path) -> bytes | LoadError:
    lines, undecodable = java_lines(data)
    if undecodable is not None:
        return _offline(path, "java.nio.charset.MalformedInputException: Input length = 1")
    malformed = f"java.io.IOException: Malformed line in partition metadata file [{path}]: "
    if not lines:
        return _stops("java.lang.NullPointerException", _NPE)
    first = lines[0][1]
    parts = java_split(first, _COLON_SPACE)
    if len(parts) != 2:
        return _offline(path, malformed + first)
    version = java_number(parts[1], 32)
    if version is None:
        return _offline(path, malformed + first)
    if version < 0:
        return _offline(path, f"java.io.IOException: Unrecognized version of partition metadata file ({path}): "
                              f"{version}")
    if len(lines) < 2:
        return _stops("java.lang.NullPointerException", _NPE)
    second = lines[1][1]
    parts = java_split(second, _COLON_SPACE)
    if len(parts) != 2:
        return _offline(path, malformed + second)
    try:
        raw = java_uuid_from_string(parts[1])
    except JavaIllegalArgument as err:
        return _stops("java.lang.IllegalArgumentException", str(err))
    if raw == ZERO_UUID:
        return _offline(path, f"java.io.IOException: Invalid topic ID in partition metadata file ({path})")
    return raw

"""Bytes to text exactly as Java's ``new String(bytes, StandardCharsets.UTF_8)`` does it.

Kafka turns bytes into text this way in two places that ``kafka-dump-log``
shows: record header keys (``DefaultRecord.readHeaders`` -> ``Utils.utf8``) and
keys/payloads printed with the default ``StringDecoder``.  Malformed input is
replaced by U+FFFD, one replacement per malformed sequence.  Java and Python
agree on valid input and mostly agree on where one malformed sequence ends
(the Unicode "maximal subpart" practice), but not everywhere.  The rules
below are read from ``java.lang.String.decodeUTF8_UTF16`` (JDK 17, same in
JDK 11-21); the differences from Python's ``errors="replace"`` are:

* an encoded surrogate (``ED A0..BF xx``) is one malformed 3-byte sequence
  for Java (one U+FFFD) but three for Python;
* ``ED A0..BF`` cut off by the end of the input is one U+FFFD for Java, two
  for Python.

Everything else -- stray continuation bytes, ``C0``/``C1``/``F5``-``FF``,
overlong ``E0 80``/``F0 80`` forms, code points above U+10FFFF, sequences cut
short by a non-continuation byte or by the end of the input -- comes out the
same.  tests/interop/test_dump_vs_kafka.py checks this against a real JVM.
"""

from __future__ import annotations

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

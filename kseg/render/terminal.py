"""The terminal a report is drawn for: its width, and what of the input it must not be handed raw.

Keys, values, headers, group and transactional ids, directory and file
names all come from the evidence, and any of them can hold an escape
sequence that retitles, recolours or rewrites a terminal, or a newline that
forges a line.  On a terminal they are shown escaped (:func:`shown`); into a
pipe or a file every command keeps its text byte for byte (``kseg dump``
keeps Kafka's).
"""

from __future__ import annotations

import os
import re
import sys


def terminal_width(default: int = 100) -> int:
    """COLUMNS when set (tests set it), else the terminal's width, else ``default`` (a pipe or a file).

    A width of 0 or less -- ``COLUMNS=0``, or a pseudo-terminal that reports 0
    columns (``stty cols 0``, some ``docker exec -t`` and CI ptys) -- is no width:
    a table drawn for it loses every column.  It counts as unset, and a terminal
    without a width is drawn for :data:`FALLBACK_COLUMNS`.
    """
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size().columns
    except OSError:
        return default
    return columns if columns > 0 else FALLBACK_COLUMNS


#: The width drawn for on a terminal that reports none (0 columns).
FALLBACK_COLUMNS = 80


#: What a terminal would act on rather than show: C0 controls but tab, DEL, C1 controls, the
#: bidirectional overrides and isolates (text that reads other than it is), and the bytes of a name
#: that is not UTF-8 (``os.fsdecode``'s lone surrogates).
_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\udc80-\udcff]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"  # the undecodable byte itself
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str, *, keep_newlines: bool = False) -> str:
    r"""``text`` with every control character spelt out: ``\x1b``, ``\n``, ``\u202e``; tabs and the rest unchanged.

    Used where a byte from the input must not act on the reader's terminal
    or split a line: the one error line (always), and everything a command
    shows on a terminal (:func:`shown`).  A backslash is left as it is: this
    is for reading, not for parsing back.  ``keep_newlines``: text whose
    newlines end lines of kseg's own (JSON Lines, where a newline in the
    data is already ``\n``).
    """
    if keep_newlines:
        return "\n".join(_CONTROLS.sub(_escaped, line) for line in text.split("\n"))
    return _CONTROLS.sub(_escaped, text)


def stdout_is_terminal() -> bool:
    """True when stdout is a terminal (a person reads it), not a pipe or a file."""
    try:
        return bool(sys.stdout.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def shown(text: str) -> str:
    """``text`` as a terminal may show it: controls escaped on a terminal, byte for byte into a pipe or a file."""
    return escape_controls(text) if stdout_is_terminal() else text


#: A rule id of docs/kafka-log-loading.md in a sentence: ``[R3.5 LogSegment.recover]``, ``(R3.4)``,
#: ``(R4.3, R8.2)``, or ``, R1.5`` closing a parenthesis.
_RULE = r"R\d+(?:\.\d+)*[a-z]?"
_RULE_IDS = re.compile(
    rf"\s*\[{_RULE}(?: [\w.$#]+)?\]"  # [R3.5 LogSegment.recover]
    rf"|\s*\({_RULE}(?:,\s*{_RULE})*\)"  # (R3.4), (R4.3, R8.2)
    rf"|,\s*{_RULE}(?:,\s*{_RULE})*(?=\))"  # (else renamed -stray, R1.5)
)


def without_rule_ids(text: str) -> str:
    """``text`` without the rule ids of the loading model's rule book: default text is for people.

    The ids (and the Kafka method a bracket names) stay in ``--format json``, where programs and the
    rule book (docs/kafka-log-loading.md) meet; the sentences around them read the same without.
    """
    return _RULE_IDS.sub("", text)

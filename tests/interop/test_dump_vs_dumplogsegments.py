"""``kseg dump`` against Kafka 4.3.0's own ``DumpLogSegments`` (what ``kafka-dump-log.sh`` runs).

The oracle is ``../shared/oracle``: Kafka 4.3.0's tools class compiled from the release commit, run in-process by
its ``Dump`` driver (``kafka_storage.KafkaStorage.dump_many``: every run of a test in ONE JVM, each run's side
effects undone before the next). kseg runs through its CLI (click's CliRunner, in-process, in the same working
directory with the same argv -- kseg accepts Kafka's ``--files a,b``). Compared per run: stdout and stderr as
bytes (no newline translation: payloads hold ``\\r``) and the exit code.

Inputs:

* every fixture under ``fixtures/`` that kafka-dump-log accepts (``.log``, ``.index``, ``.timeindex``,
  ``.txnindex``, ``.snapshot``, ``.checkpoint``) with every option set of ``OPTION_SETS``, each partition's files
  together in one ``--files a,b,...`` run (the 4.3 summaries come in ``java.util.HashMap`` order of absolute
  paths), and every internal-topic fixture with each of the five decoders;
* a seeded sample of the real corpus (``../shared/corpus/real``, PROVENANCE.md there), copied whole partition
  directory by partition directory into a temporary folder (Kafka's tool writes beside the files it dumps);
* segments written by Kafka's own ``MemoryRecordsBuilder`` (fixture ``kafka_oracle``): the interop matrix (every
  magic x codec x timestamp type, transactions with markers, headers, non-UTF-8 payloads, mixed magics, ...)
  plus seeded random segments, and damaged copies of them (torn tails, flipped bytes, size fields below 14,
  zeroed regions);
* offset and time indexes over those segments (as written, off by one, torn), alone and many to a run;
* crafted bytes Kafka's builder cannot write (negative key/value lengths other than -1, magic bytes 3 and
  -126, a V1 key or value length past the message's end, alone or in a gzip wrapper).

Every difference must be one of ``DELIBERATE``: a table of the rows of docs/dump.md "Deliberate differences from
Kafka 4.3.0's tool", each saying what Kafka prints (its first stderr line: the exception class and message --
the stack frames below it carry line numbers of Kafka's build and are not compared), the kseg stderr line that
replaces it, and how the two stdouts relate. Each row must be met at least once by the test that lists it
(no stale rows; at the default seed and size, and not for the random damage, whose rows the crafted and fixture
inputs meet), and anything that differs without a row is a failure. kseg must also leave every input as it
was (Kafka's tool creates or truncates index files; the driver reports and undoes that).

Size knob: ``KSEG_DUMPDIFF_SIZE`` (default 1) scales the corpus sample and the generated and damaged segments;
``KSEG_DUMPDIFF_SEED`` (default 4300) seeds them; both are printed. Run it once more with ``KSEG_PURE=1`` for
the pure-Python renderer (the default run uses the compiled core where it applies).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import re
import shutil
import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from interop_support import TS, matrix_cases
from kafka_storage import DumpResult, KafkaStorage
from oracle import KafkaOracle, make_batch, make_marker_batch, make_record
from support import CORPUS_REAL, REPO

from kseg.cli import cli
from kseg.format import RecordSpec, encode_batch
from kseg.format.crc import crc32c
from kseg.segment import open_segment

DEFAULT_SEED = 4300
SEED = int(os.environ.get("KSEG_DUMPDIFF_SEED", str(DEFAULT_SEED)))
SIZE = int(os.environ.get("KSEG_DUMPDIFF_SIZE", "1"))
FIXTURES_DIR = REPO / "fixtures"
DUMPABLE = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".checkpoint")
LOG = "00000000000000000000.log"

#: name -> kafka-dump-log options; every fixture is dumped with each of them
OPTION_SETS: dict[str, list[str]] = {
    "plain": [],
    "deep": ["--deep-iteration"],
    "data": ["--print-data-log"],
    "skip": ["--deep-iteration", "--skip-record-metadata"],
    "max-bytes-200": ["--max-bytes", "200"],
    "max-bytes-4000": ["--max-bytes", "4000", "--print-data-log"],
    "sanity": ["--index-sanity-check"],
    "verify-only": ["--verify-index-only"],
    "max-message-size": ["--verify-index-only", "--max-message-size", "100"],
    "decoder-classes": ["--key-decoder-class", "org.apache.kafka.tools.api.StringDecoder", "--value-decoder-class",
                        "org.apache.kafka.tools.api.StringDecoder"],
}

#: internal topic -> its decoder option
DECODERS = {
    "__consumer_offsets": "--offsets-decoder",
    "__transaction_state": "--transaction-log-decoder",
    "__cluster_metadata": "--cluster-metadata-decoder",
    "__share_group_state": "--share-group-state-decoder",
    "__remote_log_metadata": "--remote-log-metadata-decoder",
}


# --------------------------------------------------------------------------- the table of deliberate differences


@dataclass(frozen=True)
class Deliberate:
    """One expected difference: a row of docs/dump.md "Deliberate differences from Kafka 4.3.0's tool".

    ``kafka`` fullmatches Kafka's first stderr line ("" when Kafka printed nothing there); its named groups,
    regex-escaped, fill ``{name}`` in ``kseg``, which must fullmatch one of kseg's stderr lines (``{path}`` is
    the dumped path as given). ``cause`` fullmatches Kafka's last ``Caused by:`` line when the exception line
    alone does not carry the reason. ``stdout``: ``same`` (identical), ``prefix`` (Kafka died there, kseg went
    on), ``kseg-prefix`` (kseg stopped earlier: Kafka's stdout starts with kseg's and its next line
    fullmatches ``kafka_extra``), ``none`` (kseg printed nothing) or ``lines`` (same line count, each differing
    pair matching ``kafka_line`` / ``kseg_line``). ``kafka_exit`` None: any. ``sidefx`` fullmatches what
    Kafka's tool created or changed beside the input ("" = nothing). ``drops_kafka_line``: kseg's stderr is
    Kafka's without its first line. ``files`` (searched in each dumped path) and ``options`` (option-set names)
    narrow where the row applies.
    """

    row: int
    kinds: tuple[str, ...]
    kafka: str
    kseg: str
    stdout: str = "prefix"
    kafka_exit: int | None = 1
    kseg_exit: int = 1
    files: str = ""
    options: tuple[str, ...] = ()
    cause: str = ""
    kafka_line: str = ""
    kseg_line: str = ""
    kafka_extra: str = ""
    sidefx: str = ""
    drops_kafka_line: bool = False


_EXC = 'Exception in thread "main" '
_MSG = r"(?P<msg>.*)"
_AT = r"kseg: {path}: byte \d+: "
#: Kafka's tool truncates an index whose size is not a multiple of its entry size to one (row 3)
_TRUNCATED_INDEXES = r"(?:modified .*\.(?:time)?index \(\d+ -> \d+ bytes\)\n)*"
#: the decompressors' exceptions under Kafka's "Caused by:" (java.util.zip, lz4-java, snappy-java, zstd-jni)
_CODEC_CAUSE = (r"Caused by: (?:java\.util\.zip\.ZipException|java\.io\.(?:IO|EOF)Exception|net\.jpountz\.lz4\."
                r"LZ4Exception|org\.xerial\.snappy\.SnappyIOException|com\.github\.luben\.zstd\.ZstdIOException)"
                r"(?:: .*)?")

DELIBERATE: list[Deliberate] = [
    # row 1: Kafka dies on damaged batches and records; kseg reports the same message with a byte position.
    Deliberate(1, ("fixtures", "damaged"),
               _EXC + r"org\.apache\.kafka\.common\.errors\.CorruptRecordException: Found record size "
               r"(?P<size>-?\d+) smaller than minimum record overhead \(14\) in file .*\.",
               _AT + r"(?:entry \d+ \(offset \d+\): )?Found record size {size} smaller than minimum record overhead "
               r"\(14\)(?: in the log at byte \d+)?"),
    Deliberate(1, ("fixtures", "damaged"), _EXC + r"org\.apache\.kafka\.common\.InvalidRecordException: " + _MSG,
               _AT + r"(?:control record at offset \d+: |entry \d+ \(offset \d+\): )?{msg}(?: \((?:at byte \d+ of the decompressed records|"
               r"Var(?:int|long) is too long.*)\))?"),
    Deliberate(1, ("fixtures", "crafted", "damaged"), _EXC + r"java\.lang\.IllegalArgumentException: (?P<msg>(?:Unknown "
               r"compression type id: \d+|Invalid magic used in LegacyRecord: -?\d+))", _AT + "{msg}"),
    Deliberate(1, ("fixtures", "indexes"), _EXC + r"org\.apache\.kafka\.storage\.internals\.log\."
               r"CorruptIndexException: " + _MSG, _AT + "{msg}", sidefx=_TRUNCATED_INDEXES),
    # a bare IndexOutOfBoundsException (no message): a V2 batch whose size field is below its header's 61 bytes
    # (DefaultRecordBatch.count), a V0/V1 wrapper too short for its own key length (LegacyRecord.keySize); kseg
    # says which, where Kafka's ensureValid / LegacyRecord would have
    Deliberate(1, ("fixtures", "damaged"), _EXC + r"java\.lang\.IndexOutOfBoundsException",
               _AT + r"(?:entry \d+ \(offset \d+\): )?(?:Record batch is corrupt \(the size \d+ is smaller than the "
               r"minimum allowed overhead 61\)|message\.key length runs past the end of the message)"),
    Deliberate(1, ("fixtures", "indexes"), _EXC + r"java\.util\.NoSuchElementException",
               _AT + r"entry \d+ \(offset \d+\): no whole batch at log position \d+ within --max-message-size "
               r"\(\d+ bytes\)", sidefx=_TRUNCATED_INDEXES),
    # row 16: a compressed payload that does not decompress: Kafka's wrapper exception and Java's codec words;
    # kseg names the codec in its own decompressor's words, and checks the whole payload (trailer included)
    # before reading records, so where the damage also garbles a record Kafka may name that instead.
    Deliberate(16, ("fixtures", "damaged"), _EXC + r"org\.apache\.kafka\.common\.KafkaException: .*",
               _AT + r"(?:gzip|snappy|lz4|zstd): .+", cause=_CODEC_CAUSE),
    Deliberate(16, ("damaged",), _EXC + r"org\.apache\.kafka\.common\.(?:InvalidRecordException|errors\."
               r"CorruptRecordException): .*", _AT + r"(?:gzip|snappy|lz4|zstd): .+"),
    # row 2: a coordinator record without a key: Kafka's decoder throws; kseg goes on with the next record.
    Deliberate(2, ("decoders", "corpus"), _EXC + r"java\.lang\.RuntimeException: (?P<msg>Failed to decode message at "
               r"offset \d+ using the specified decoder \(message had a missing key\))",
               _AT + r"record at offset \d+: (?:key byte \d+: )?[^;]+; kafka-dump-log stops here: {msg}"),
    # row 3: files Kafka's tool crashes on (no number in the name, no sibling .log/.index) or writes to.
    Deliberate(3, ("fixtures",), _EXC + r'java\.lang\.NumberFormatException: For input string: "(?P<name>.*)"',
               r"kseg: {path}: cannot read a base offset from the file name: '{name}' is not a number"),
    Deliberate(3, ("fixtures", "corpus"), _EXC + r"java\.lang\.IllegalArgumentException: Invalid max index size: -1",
               r"kseg: {path}: \d{{20}}\.index not found beside it \(Kafka's tool creates it empty and dies; kseg "
               r"checks the entries against an empty index\)", sidefx=r"created .*\.index \(0 bytes\)\n"),
    Deliberate(3, ("corpus",), _EXC + r"java\.nio\.file\.NoSuchFileException: .*\.log",
               r"kseg: {path}: \d{{20}}\.log not found beside it \(Kafka needs it to dump this file\)"),
    Deliberate(3, ("fixtures",), ".*", "", stdout="same", kafka_exit=0, kseg_exit=0,  # the same text; Kafka wrote
               files=r"\.index$", sidefx=r"modified .*\.index \(\d+ -> \d+ bytes\)\n"),
    Deliberate(3, ("indexes",), ".*", "", stdout="same", kafka_exit=None, kseg_exit=0,
               sidefx=r"(?:modified .*\.(?:time)?index \(\d+ -> \d+ bytes\)\n)+"),
    Deliberate(3, ("fixtures",), r"Ignoring unknown file .*", "", kafka_exit=0, kseg_exit=0, drops_kafka_line=True,
               files=r"(^|/)(leader-epoch-checkpoint|[a-z-]+-offset-checkpoint|partition\.metadata|meta\.properties|"
               r"quorum-state|\.kafka_cleanshutdown)$"),
    Deliberate(3, ("fixtures",), r"Ignoring unknown file .*", r"kseg: {path}: .+", kafka_exit=0, kseg_exit=1,
               drops_kafka_line=True, files=r"(^|/)(leader-epoch-checkpoint|[a-z-]+-offset-checkpoint|"
               r"partition\.metadata|meta\.properties|quorum-state|\.kafka_cleanshutdown)$"),
    # row 5: never-released 2023 trunk layouts of PartitionRecord / PartitionChangeRecord v1.
    Deliberate(5, ("decoders", "corpus"), "", "", stdout="lines", kafka_exit=0, kseg_exit=0,
               kafka_line=r".* payload: Error at \d+, skipping\. Failed to deserialize record with type [35]",
               kseg_line=r'.* payload: \{"type":"PARTITION_(CHANGE_)?RECORD","version":1,.*\}'),
    # row 6: a record of a version above 4.3.0's schemas (here: metadata records read as remote-log metadata).
    Deliberate(6, ("decoders",), "", "", stdout="lines", kafka_exit=0, kseg_exit=0,
               kafka_line=r".* payload: Error at offset \d+, skipping\. Failed to deserialize record with type \d+",
               kseg_line=r".* payload: Error at offset \d+, skipping\. unknown version \d+ of \w+ \(kseg's schema has "
               r"versions [-\d]+\), raw value [A-Za-z0-9+/=]*"),
    # row 17: a file named on the command line that no handler takes (docs/cli.md, "Named inputs").
    Deliberate(17, ("fixtures",), r"Ignoring unknown file (?P<name>.*)",
               r"kseg: error: {name}: not a Kafka file \(.*\)", stdout="none", kafka_exit=0, kseg_exit=2),
    # row 18: an uncompressed V0/V1 message whose key or value length runs past its end: kseg prints the line
    # Kafka prints (the stored sizes) and reports the message; where Kafka goes on (it prints no key or value)
    # kseg goes on too, but exits 1; where it dies (a size int past the message: before the line; the key or
    # value printed: after it) kseg stops the file there.
    Deliberate(18, ("crafted", "damaged"), "", _AT + r"message\.(?:key|value)(?: length)? (?:of \d+ bytes )?runs "
               r"past the end of the message.*", stdout="same", kafka_exit=0),
    Deliberate(18, ("crafted", "damaged"), _EXC + r"java\.lang\.(?:IndexOutOfBoundsException|"
               r"IllegalArgumentException: newLimit > capacity: \(\d+ > \d+\))",
               _AT + r"message\.(?:key|value)(?: length)? (?:of \d+ bytes )?runs past the end of the message.*"),
    # row 18: a wrapper whose inner messages do not read: Kafka reads them lazily, printing what it can; kseg
    # reads a wrapper's inner messages whole before printing its records, reports it and goes on with the
    # next file.
    Deliberate(18, ("crafted", "damaged"), ".*", _AT + r"(?:message\.(?:key|value)(?: length)? (?:of \d+ bytes )?"
               r"runs past the end of the message|Inner messages must not be compressed|Record size is less than "
               r"the minimum record overhead \(\d+\)).*", stdout="kseg-prefix", kafka_exit=None,
               kafka_extra=r"|\| offset: -?\d+ .*|(?:offset|baseOffset): -?\d+ .* isvalid: (?:true|false)"),
    # row 14: a producer snapshot with a bad CRC: the same message, but kseg's exit status says so.
    Deliberate(14, ("fixtures",), r"(?P<line>Snapshot is corrupt \(CRC is no longer valid\)\. Stored crc: \d+\. "
               r"Computed crc: \d+)", "{line}", stdout="same", kafka_exit=0),
]


# --------------------------------------------------------------------------- running both tools


@dataclass
class Case:
    """One kafka-dump-log argv, run by both tools in ``cwd``."""

    args: list[str]
    cwd: Path
    option_set: str = ""

    @property
    def paths(self) -> list[str]:
        return [p for i, a in enumerate(self.args) if a == "--files" for p in self.args[i + 1].split(",")]


@dataclass
class Kseg:
    exit: int
    stdout: str
    stderr: str


def run_kseg(case: Case) -> Kseg:
    old = os.getcwd()
    os.chdir(case.cwd)
    try:
        result = CliRunner().invoke(cli, ["dump", *case.args], catch_exceptions=False)
    finally:
        os.chdir(old)
    # stdout_bytes: click's .stdout turns "\r\n" into "\n", and Kafka's payloads hold both
    return Kseg(result.exit_code, result.stdout_bytes.decode("utf-8", "surrogateescape"),
                result.stderr_bytes.decode("utf-8", "surrogateescape"))


def run_kafka(storage: KafkaStorage, cases: Sequence[Case]) -> list[DumpResult]:
    """All cases in one JVM per working directory (one in practice)."""
    results: dict[int, DumpResult] = {}
    for cwd in sorted({c.cwd for c in cases}):
        chosen = [i for i, c in enumerate(cases) if c.cwd == cwd]
        for i, result in zip(chosen, storage.dump_many([cases[i].args for i in chosen], cwd=cwd), strict=True):
            results[i] = result
    return [results[i] for i in range(len(cases))]


def _tree_digest(roots: Sequence[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for root in roots for p in sorted(root.rglob("*")) if p.is_file()}


def _caused_by(stderr: str) -> str:
    causes = [line for line in stderr.splitlines() if line.startswith("Caused by: ")]
    return causes[-1] if causes else ""


def _fill(template: str, groups: dict[str, str], path: str) -> str:
    values = {name: re.escape(value) for name, value in groups.items()}
    return template.format(path=re.escape(path), **values)


def _explained(row: Deliberate, case: Case, kafka: DumpResult, kseg: Kseg) -> str | None:
    """None if ``row`` explains every difference of this case, else why not."""
    first = kafka.stderr.splitlines()[0] if kafka.stderr else ""
    head = re.fullmatch(row.kafka, first)
    if head is None:
        return "Kafka's first stderr line is not this row's"
    groups = dict(head.groupdict())
    if row.cause:
        cause = re.fullmatch(row.cause, _caused_by(kafka.stderr))
        if cause is None:
            return "Kafka's cause is not this row's"
        groups.update(cause.groupdict())
    if kseg.exit != row.kseg_exit or row.kafka_exit not in (None, kafka.exit):
        return f"exit codes Kafka {kafka.exit}, kseg {kseg.exit}; the row says {row.kafka_exit}, {row.kseg_exit}"
    if not re.fullmatch(row.sidefx, kafka.sidefx):
        return f"Kafka's side effects {kafka.sidefx!r} are not this row's"
    if row.kseg:
        paths = case.paths
        wanted = [re.compile(_fill(row.kseg, groups, p)) for p in paths]
        if not any(w.fullmatch(line) for w in wanted for line in kseg.stderr.splitlines()):
            return f"no kseg stderr line matches {[w.pattern for w in wanted]}"
    elif row.drops_kafka_line and kseg.stderr != kafka.stderr.partition("\n")[2]:
        return "kseg's stderr is not Kafka's without its first line"
    elif not row.drops_kafka_line and kseg.stderr != kafka.stderr:
        return "stderr differs"
    if row.stdout == "same" and kseg.stdout != kafka.stdout:
        return "stdout differs"
    if row.stdout == "prefix" and not kseg.stdout.startswith(kafka.stdout):
        return "kseg's stdout does not start with Kafka's"
    if row.stdout == "kseg-prefix":
        if not kafka.stdout.startswith(kseg.stdout):
            return "Kafka's stdout does not start with kseg's"
        further = kafka.stdout[len(kseg.stdout):].partition("\n")[0]  # (payloads may hold newlines)
        if not re.fullmatch(row.kafka_extra, further):
            return f"Kafka went on with a line this row does not expect: {further[:200]!r}"
    if row.stdout == "none" and kseg.stdout:
        return "kseg printed on stdout"
    if row.stdout == "lines":
        theirs, mine = kafka.stdout.split("\n"), kseg.stdout.split("\n")
        if len(theirs) != len(mine):
            return "line counts differ"
        for a, b in zip(theirs, mine):
            if a != b and not (re.fullmatch(row.kafka_line, a) and re.fullmatch(row.kseg_line, b)):
                return f"line differs: {a[:200]!r} / {b[:200]!r}"
    return None


def _applies(row: Deliberate, kind: str, case: Case) -> bool:
    return (kind in row.kinds and (not row.options or case.option_set in row.options)
            and (not row.files or any(re.search(row.files, p) for p in case.paths)))


def _report(case: Case, kafka: DumpResult, kseg: Kseg, why: str) -> str:
    def cut(text: str) -> str:
        return text if len(text) < 3000 else text[:3000] + f"... ({len(text)} chars)"

    return (f"kafka-dump-log {' '.join(case.args)} (cwd {case.cwd}): {why}\n"
            f"--- Kafka exit {kafka.exit} sidefx {kafka.sidefx!r}\nstdout:\n{cut(kafka.stdout)}\nstderr:\n"
            f"{cut(kafka.stderr)}\n--- kseg exit {kseg.exit}\nstdout:\n{cut(kseg.stdout)}\nstderr:\n{cut(kseg.stderr)}")


def compare(storage: KafkaStorage, kind: str, cases: Sequence[Case], inputs: Sequence[Path]) -> dict[int, int]:
    """Run ``cases`` through both tools; every difference must be a row of DELIBERATE for ``kind``.

    Returns how many cases each row (by index) explained. kseg must not change anything under ``inputs``.
    """
    print(f"{kind}: {len(cases)} runs (KSEG_DUMPDIFF_SEED={SEED} KSEG_DUMPDIFF_SIZE={SIZE})")
    before = _tree_digest(inputs)
    kafka_results = run_kafka(storage, cases)
    assert _tree_digest(inputs) == before, "the Dump driver did not restore the inputs"
    failures: list[str] = []
    used: dict[int, int] = {}
    for case, kafka in zip(cases, kafka_results, strict=True):
        kseg = run_kseg(case)
        if (kseg.exit, kseg.stdout, kseg.stderr) == (kafka.exit, kafka.stdout, kafka.stderr) and not kafka.sidefx:
            continue
        reasons = []
        for index, row in enumerate(DELIBERATE):
            if not _applies(row, kind, case):
                continue
            why = _explained(row, case, kafka, kseg)
            if why is None:
                used[index] = used.get(index, 0) + 1
                break
            reasons.append(f"row {row.row} ({row.kafka[:60]}): {why}")
        else:
            failures.append(_report(case, kafka, kseg, "; ".join(reasons) or "no row of DELIBERATE applies"))
            if os.environ.get("KSEG_DUMPDIFF_FAILURES"):  # a JSON line per failure, for looking at many
                with open(os.environ["KSEG_DUMPDIFF_FAILURES"], "a", encoding="utf-8") as out:
                    out.write(json.dumps({"args": case.args, "cwd": str(case.cwd), "kafka": vars(kafka),
                                          "kseg": vars(kseg)}) + "\n")
    assert _tree_digest(inputs) == before, "kseg dump changed its input"
    assert not failures, f"{len(failures)} of {len(cases)} runs differ from Kafka 4.3.0:\n\n" + "\n\n".join(
        failures[:int(os.environ.get("KSEG_DUMPDIFF_SHOW", "8"))])
    # damage is random: which rows it needs depends on the seed (the rows are met by fixed inputs elsewhere)
    if kind != "damaged" and (SEED, SIZE) == (DEFAULT_SEED, 1):  # other seeds and sizes draw other inputs
        stale = [row for index, row in enumerate(DELIBERATE) if kind in row.kinds and index not in used]
        assert not stale, f"rows of DELIBERATE listed for {kind!r} that no run needed: {stale}"
    return used


# --------------------------------------------------------------------------- inputs: fixtures


def _dumpable(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith(DUMPABLE)
                  and "golden" not in p.parts and not p.name.endswith("-checkpoint"))


def _topic(path: Path) -> str:
    return path.parent.name.rpartition("-")[0]


def fixture_cases() -> list[Case]:
    cases = []
    files = [str(p.relative_to(REPO)) for p in _dumpable(FIXTURES_DIR)]
    for name in files:
        for option_set, options in OPTION_SETS.items():
            cases.append(Case(["--files", name, *options], REPO, option_set))
    for path in sorted(FIXTURES_DIR.rglob("*")):  # side files and files Kafka's tool ignores: once each
        if path.is_file() and not path.name.endswith((*DUMPABLE, ".md", ".py", ".json")) and not (
                {"golden", "golden-4.3", "kafka-schema-history"} & set(path.parts)):
            cases.append(Case(["--files", str(path.relative_to(REPO))], REPO, "plain"))
    by_dir: dict[str, list[str]] = {}
    for name in files:
        by_dir.setdefault(str(Path(name).parent), []).append(name)
    for folder, names in sorted(by_dir.items()):
        if len(names) > 1:  # one run: the summaries of several files, in HashMap order of absolute paths
            for option_set in ("deep", "verify-only"):
                cases.append(Case(["--files", ",".join(names), *OPTION_SETS[option_set]], REPO, option_set))
    return cases


def test_every_fixture_with_every_option_set(kafka_storage):
    cases = fixture_cases()
    assert len(cases) > 1000
    used = compare(kafka_storage, "fixtures", cases, [FIXTURES_DIR])
    assert sum(used.values()) < len(cases) // 4


def decoder_cases(root: Path, cwd: Path) -> list[Case]:
    """Each internal-topic file (and KRaft snapshot) with its own decoder, then with every other decoder."""
    cases = []
    for path in _dumpable(root):
        if path.suffix not in (".log", ".checkpoint"):
            continue
        own = DECODERS.get(_topic(path), "--cluster-metadata-decoder" if path.suffix == ".checkpoint" else None)
        if own is None:
            continue
        name = str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)
        for decoder in [own, *sorted(set(DECODERS.values()) - {own})]:
            cases.append(Case(["--files", name, decoder], cwd, "data"))
        cases.append(Case(["--files", name, own, "--skip-record-metadata"], cwd, "skip"))
    return cases


def test_internal_topic_fixtures_with_every_decoder(kafka_storage):
    cases = decoder_cases(FIXTURES_DIR, REPO)
    assert len(cases) > 100
    compare(kafka_storage, "decoders", cases, [FIXTURES_DIR])


# --------------------------------------------------------------------------- inputs: the real corpus


def corpus_sample(tmp: Path, rng: random.Random) -> list[Path]:
    """Whole partition directories of the corpus, copied: a seeded sample plus the unusual ones."""
    corpus = CORPUS_REAL
    if not corpus.is_dir():
        pytest.fail(f"the real corpus is missing at {corpus} (set KSEG_SHARED)", pytrace=False)
    folders = sorted({p.parent for p in corpus.rglob("*") if p.is_file() and p.name.endswith(DUMPABLE)})
    small = [f for f in folders if sum(p.stat().st_size for p in f.iterdir() if p.is_file()) < 600_000]
    always = [f for f in folders if any(tag in str(f) for tag in (
        "xpxwo100_bullShit", "seanorth_kafka-server", "8sylla_citypulse/099cbdd/data/kafka/__cluster_metadata-0",
        "apache_kafka/023aafc", "DonaldY_kafka-2.7.1/13bb4a8/kafka-logs/__consumer_offsets-39"))]
    chosen = sorted(set(always) | set(rng.sample(small, min(len(small), 16 * SIZE))))
    copies = []
    for folder in chosen:
        target = tmp / folder.relative_to(corpus)
        target.mkdir(parents=True, exist_ok=True)
        for path in folder.iterdir():
            if path.is_file():
                shutil.copyfile(path, target / path.name)
        copies.append(target)
    return copies


def test_real_corpus_sample(kafka_storage, tmp_path):
    rng = random.Random(SEED)
    print(f"corpus sample: KSEG_DUMPDIFF_SEED={SEED} KSEG_DUMPDIFF_SIZE={SIZE}")
    folders = corpus_sample(tmp_path, rng)
    cases = []
    for folder in folders:
        for path in sorted(p for p in folder.iterdir() if p.name.endswith(DUMPABLE)):
            name = str(path.relative_to(tmp_path))
            cases.append(Case(["--files", name, "--deep-iteration"], tmp_path, "deep"))
            if path.suffix in (".index", ".timeindex"):
                cases.append(Case(["--files", name, "--verify-index-only"], tmp_path, "verify-only"))
        cases.extend(decoder_cases(folder, tmp_path)[:2])
    assert len(cases) > 40
    compare(kafka_storage, "corpus", cases, [tmp_path])


# --------------------------------------------------------------------------- inputs: Kafka-written segments

ODD = [b"\xed\xa0\x80|", b"ok\xed\xa0", b"\xc3\x28", b"\xf0\x9f\x98", "caf\u00e9 \U0001F600".encode(), b"",
       b"line\r\nbreak\r", bytes(range(0, 256, 7))]


def _random_records(rng: random.Random, first: int, magic: int) -> list[dict]:
    records = []
    offset = first
    for _ in range(rng.randint(1, 6)):
        key = rng.choice([None, *ODD, rng.randbytes(rng.randint(0, 40))])
        value = rng.choice([None, *ODD, rng.randbytes(rng.randint(0, 300)), b"v" * rng.randint(0, 3000)])
        headers = ([(rng.choice(["h", "", "\u00e9\u2603", "trace"]), rng.choice([None, *ODD]))
                    for _ in range(rng.randint(0, 3))] if magic == 2 else [])
        records.append(make_record(offset, TS + rng.randint(-50, 50), key, value, headers))
        offset += rng.choice([1, 1, 1, 2, 5])
    return records


def random_segment(rng: random.Random) -> list[dict]:
    """A few batches of one or more magics and codecs, transactional ones closed by markers."""
    batches: list[dict] = []
    offset = rng.choice([0, 0, 7, 1000])
    for _ in range(rng.randint(1, 5)):
        magic = rng.choice([0, 1, 2, 2, 2])
        codec = rng.choice(["none", "gzip", "snappy", "lz4", "zstd"] if magic == 2 else ["none", "gzip", "snappy", "lz4"])
        records = _random_records(rng, offset, magic)
        fields: dict = {"magic": magic, "codec": codec}
        if magic > 0 and rng.random() < 0.3:
            fields.update(timestamp_type="LogAppendTime", log_append_time=TS + 99_000)
        txn = magic == 2 and rng.random() < 0.4
        if magic == 2:
            fields["partition_leader_epoch"] = rng.choice([-1, 0, 3])
            if txn or rng.random() < 0.3:
                fields.update(producer_id=rng.randint(0, 9000), producer_epoch=rng.randint(0, 5), base_sequence=0,
                              is_transactional=txn)
        batches.append(make_batch(records, **fields))
        offset = records[-1]["offset"] + rng.choice([1, 1, 3])
        if txn:
            batches.append(make_marker_batch(rng.choice(["COMMIT", "ABORT"]), offset, TS + 7, fields["producer_id"],
                                             fields["producer_epoch"], coordinator_epoch=rng.randint(0, 9)))
            offset += 1
    return batches


def _damage(rng: random.Random, data: bytes, sizes: list[int]) -> Iterator[tuple[str, bytes]]:
    """Damaged copies: a torn tail, flipped bytes, a size field below 14, a zeroed region."""
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    if len(data) > 1:
        yield "torn", data[: rng.randrange(1, len(data))]
    flipped = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        flipped[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    yield "flipped", bytes(flipped)
    small = bytearray(data)
    at = rng.choice(starts)
    small[at + 8: at + 12] = rng.randrange(14).to_bytes(4, "big")
    yield "size", bytes(small)
    zeroed = bytearray(data)
    at = rng.randrange(len(data))
    end = min(len(data), at + rng.randint(1, 200))
    zeroed[at:end] = bytes(end - at)
    yield "zeroed", bytes(zeroed)


def write_generated(oracle: KafkaOracle, root: Path, seed: int, size: int) -> tuple[list[str], list[str]]:
    """Kafka-written segments under ``root`` (``<name>-0/LOG``) and their damaged copies; both lists are paths
    relative to ``root``. A plain function so that a failing seed can be written again outside pytest."""
    rng = random.Random(seed)
    specs = dict(matrix_cases())
    for i in range(12 * size):
        specs[f"random{i}"] = random_segment(rng)
    jobs = [{"op": "write", "out": root / f"{name}-0" / LOG, "batches": batches} for name, batches in specs.items()]
    for job in jobs:
        job["out"].parent.mkdir()
    results = oracle.run(jobs)
    assert all(r["ok"] for r in results), [r for r in results if not r["ok"]]
    clean = [f"{name}-0/{LOG}" for name in specs]
    damaged = []
    for name, job, result in zip(specs, jobs, results, strict=True):
        data = job["out"].read_bytes()
        if not data:
            continue
        for _ in range(size):
            for kind, bad in _damage(rng, data, result["batch_sizes"]):
                folder = root / f"{name}-{kind}{len(damaged)}-0"
                folder.mkdir()
                (folder / LOG).write_bytes(bad)
                damaged.append(f"{folder.name}/{LOG}")
    return clean, damaged


@pytest.fixture(scope="module")
def generated(kafka_oracle, tmp_path_factory) -> tuple[Path, list[str], list[str]]:
    """Kafka-written segments and their damaged copies, under one temporary folder."""
    root = tmp_path_factory.mktemp("dumpdiff")
    print(f"generated segments: KSEG_DUMPDIFF_SEED={SEED} KSEG_DUMPDIFF_SIZE={SIZE}")
    clean, damaged = write_generated(kafka_oracle, root, SEED, SIZE)
    return root, clean, damaged


LOG_OPTION_SETS = ("plain", "deep", "data", "skip", "max-bytes-200")


def test_kafka_written_segments(kafka_storage, generated):
    root, clean, _ = generated
    cases = [Case(["--files", name, *OPTION_SETS[o]], root, o) for name in clean for o in LOG_OPTION_SETS]
    rng = random.Random(SEED)
    for name in clean:  # --max-bytes anywhere in the file: mid-batch, on a boundary, 0
        size = (root / name).stat().st_size
        for cut in (0, rng.randrange(size + 1), size - 1):
            cases.append(Case(["--files", name, "--max-bytes", str(max(cut, 0)), "--deep-iteration"], root, "max-bytes"))
    cases.append(Case(["--files", ",".join(clean), "--deep-iteration"], root, "deep"))  # summaries, HashMap order
    absolute = [str(root / name) for name in clean]  # paths printed as given: absolute ones too
    cases.append(Case(["--files", ",".join(absolute), "--deep-iteration"], root, "deep"))
    cases.extend(Case(["--files", name, "--print-data-log"], REPO, "data") for name in absolute[:8])
    compare(kafka_storage, "generated", cases, [root])


def test_damaged_kafka_written_segments(kafka_storage, generated):
    root, _, damaged = generated
    cases = [Case(["--files", name, *OPTION_SETS[o]], root, o) for name in damaged for o in LOG_OPTION_SETS]
    used = compare(kafka_storage, "damaged", cases, [root])
    assert sum(used.values()) > len(damaged)  # the damage reaches Kafka's failure modes


# --------------------------------------------------------------------------- inputs: crafted bytes


def _refresh_crc(batch: bytearray) -> bytes:
    """A V2 batch's CRC-32C over attributes..end, recomputed after an edit (Kafka then reads it as valid)."""
    struct.pack_into(">I", batch, 17, crc32c(memoryview(batch)[21:]))
    return bytes(batch)


def crafted_segments() -> dict[str, bytes]:
    """name -> .log bytes Kafka's builder cannot write: stored values only a damaged or foreign writer leaves.

    kseg's writer builds them (byte for byte Kafka's for uncompressed batches: test_kseg_writes_kafka_reads),
    then one field is changed:
    * ``negative-lengths``: a V2 record whose key length is -3 and value length -2 (Kafka reads null for any
      negative length and prints -1), with a valid CRC, then a plain batch;
    * ``magic-3``: a V2 batch whose magic byte says 3 (not covered by the CRC), then a plain batch;
    * ``legacy-magic``: a V1 message whose magic byte is 0x82 (-126): Kafka's iterator takes any magic below 2
      for a legacy batch and dies printing it;
    * ``legacy-key-overrun``: an uncompressed V1 message whose key length (1024) runs past its end, then a
      plain message (row 18 of docs/dump.md's deliberate differences): Kafka cannot read the value length;
    * ``legacy-value-overrun``: the same with a value length of 6 where 5 bytes are left: Kafka prints the
      message's line and goes on unless it prints the value;
    * ``legacy-wrapper-overrun``: a gzip V1 wrapper whose first inner message's key length (1024) runs past
      it, then a plain message.
    """
    plain = encode_batch([RecordSpec(1, TS + 1, b"k", b"v")], base_offset=1)
    negative = bytearray(encode_batch([RecordSpec(0, TS, None, None)]))
    assert negative[-3:] == b"\x01\x01\x00"  # key length -1, value length -1, no headers (zigzag varints)
    negative[-3:-1] = b"\x05\x03"  # -3, -2: the same byte counts
    magic3 = bytearray(encode_batch([RecordSpec(0, TS, b"k", b"v")]))
    magic3[16] = 3
    legacy_v1 = encode_batch([RecordSpec(0, TS, b"key", b"value")], magic=1)
    legacy_bad = bytearray(legacy_v1)
    legacy_bad[16] = 0x82
    overrun = bytearray(legacy_v1)
    struct.pack_into(">i", overrun, 12 + 4 + 2 + 8, 1024)  # entry header 12, crc 4, magic+attributes 2, ts 8
    plain_v1 = encode_batch([RecordSpec(1, TS + 1, b"k", b"v")], magic=1, base_offset=1)
    value_overrun = bytearray(legacy_v1)
    struct.pack_into(">i", value_overrun, 12 + 4 + 2 + 8 + 4 + 3, 6)  # ... key length 4, key "key"
    return {
        "negative-lengths": _refresh_crc(negative) + plain,
        "magic-3": _refresh_crc(magic3) + plain,
        "legacy-magic": bytes(legacy_bad) + plain_v1,
        "legacy-key-overrun": bytes(overrun) + plain_v1,
        "legacy-value-overrun": bytes(value_overrun) + plain_v1,
        "legacy-wrapper-overrun": _legacy_wrapper(bytes(overrun) + encode_batch(
            [RecordSpec(1, TS + 1, b"k", b"v")], magic=1, base_offset=1)) + encode_batch(
            [RecordSpec(2, TS + 2, b"k", b"v")], magic=1, base_offset=2),
    }


def _legacy_wrapper(inner: bytes) -> bytes:
    """A gzip V1 wrapper at offset 1 around ``inner`` (V1 entries at relative offsets 0 and 1): a V1 message
    whose value is ``inner`` compressed, its attributes then saying gzip and its CRC-32 recomputed."""
    wrapper = bytearray(encode_batch([RecordSpec(1, TS + 1, None, gzip.compress(inner, mtime=0))], magic=1,
                                     base_offset=1))
    wrapper[17] = 1  # attributes: codec gzip, CreateTime
    struct.pack_into(">I", wrapper, 12, zlib.crc32(wrapper[16:]))
    return bytes(wrapper)


def test_crafted_segments(kafka_storage, tmp_path):
    names = []
    for name, data in crafted_segments().items():
        (tmp_path / f"{name}-0").mkdir()
        (tmp_path / f"{name}-0" / LOG).write_bytes(data)
        names.append(f"{name}-0/{LOG}")
    cases = [Case(["--files", name, *OPTION_SETS[o]], tmp_path, o) for name in names for o in LOG_OPTION_SETS]
    compare(kafka_storage, "crafted", cases, [tmp_path])


# --------------------------------------------------------------------------- inputs: indexes beside Kafka-written logs


def _index_entries(rng: random.Random, log: Path) -> list[tuple[int, int, int]]:
    """(offset, position, max timestamp) of a sample of the log's batches, as a broker indexes them."""
    with open_segment(log) as segment:
        batches = [(b.last_offset, b.position, b.max_timestamp) for b in segment.iter_batches()]
    chosen = sorted(rng.sample(batches, min(len(batches), rng.randint(1, 6))), key=lambda b: b[1])
    return [b for b in chosen if 0 <= b[0] < 2**31]


def _index_bytes(rng: random.Random, entries: list[tuple[int, int, int]], kind: str) -> tuple[bytes, bytes]:
    """An .index and a .timeindex for ``entries``: as written (``good``), with an entry off by one offset, position
    or timestamp, or decreasing (``off``), or with a torn last entry (``torn``)."""
    offsets = b"".join(struct.pack(">ii", o, p) for o, p, _ in entries)
    times = b"".join(struct.pack(">qi", t, o) for o, _, t in entries)
    if kind == "off" and entries:
        i = rng.randrange(len(entries))
        o, p, t = entries[i]
        change = rng.choice(["offset", "position", "time"])
        o, p, t = (o + 1, p, t) if change == "offset" else (o, p + 1, t) if change == "position" else (o, p, t - 99)
        offsets = offsets[: 8 * i] + struct.pack(">ii", o, p) + offsets[8 * i + 8:]
        times = times[: 12 * i] + struct.pack(">qi", t, o) + times[12 * i + 12:]
    if kind == "torn":
        offsets, times = offsets[: max(0, len(offsets) - rng.randint(1, 7))], times[: max(0, len(times) - 5)]
    return offsets, times


def test_indexes_beside_kafka_written_segments(kafka_storage, generated, tmp_path):
    """Offset and time indexes over the Kafka-written segments (as written, off by one, torn): dumped, checked
    (--verify-index-only, --max-message-size), sanity-checked; the mismatch summaries come in HashMap order."""
    root, clean, _ = generated
    rng = random.Random(SEED)
    names = []
    for name in clean:
        log = root / name
        entries = _index_entries(rng, log) if log.stat().st_size else []
        for kind in ("good", "off", "torn"):
            folder = tmp_path / f"{Path(name).parent.name}-{kind}"
            folder.mkdir()
            shutil.copyfile(log, folder / LOG)
            index, times = _index_bytes(rng, entries, kind)
            (folder / LOG).with_suffix(".index").write_bytes(index)
            (folder / LOG).with_suffix(".timeindex").write_bytes(times)
            names += [f"{folder.name}/{LOG[:-4]}.index", f"{folder.name}/{LOG[:-4]}.timeindex"]
    options = ("plain", "verify-only", "sanity", "max-message-size")
    cases = [Case(["--files", name, *OPTION_SETS[o]], tmp_path, o) for name in names for o in options]
    cases += [Case(["--files", ",".join(names[i:i + 40]), "--verify-index-only"], tmp_path, "verify-only")
              for i in range(0, len(names), 40)]
    compare(kafka_storage, "indexes", cases, [tmp_path])

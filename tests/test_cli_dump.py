"""``kseg dump`` through click: Kafka's worked examples verbatim, golden outputs, options, exit codes,
errors, read-only behaviour, JSON payload round trips, the table width, ``| head``, the real corpus.

Goldens live in fixtures/dump/golden/<case>.dump.txt (stdout), .dump.err (stderr) and .dump.jsonl;
``KSEG_UPDATE_GOLDENS=1 pytest tests/test_cli_dump.py`` rewrites them (review the diff).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import CORPUS_REAL, FIXTURES, REPO, require_dir

from kseg.cli import cli
from kseg.format import read_batch
from kseg.render.dump import decode_payload

DUMP = FIXTURES / "dump"
GOLDEN = DUMP / "golden"  # --kafka-version 4.0 (the Scala tool's text)
GOLDEN_43 = DUMP / "golden-4.3"  # the default: Kafka 4.3.0's Java tool
#: golden directory -> the --kafka-version its outputs were made with
GOLDEN_DIRS = {GOLDEN: "4.0", GOLDEN_43: "4.3"}
UPDATE = os.environ.get("KSEG_UPDATE_GOLDENS") == "1"
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}


def run(args: list[str], cwd: Path = DUMP, env: dict | None = None):
    """``kseg dump ARGS`` in ``cwd`` (so paths print as given) with separate stdout/stderr."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["dump", *args], env={**ENV, **(env or {})}, catch_exceptions=False)
    finally:
        os.chdir(old)


# --------------------------------------------------------------------------- reference §6.9, verbatim


def test_worked_example_v2_is_reference_6_9_verbatim():
    result = run(["--files", "00000000000000000000.log", "--print-data-log"], cwd=DUMP / "worked-v2")
    assert result.exit_code == 0
    assert result.stdout == (
        "Dumping 00000000000000000000.log\n"
        "Log starting offset: 0\n"
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
        "position: 0 CreateTime: 1700000000000 size: 70 magic: 2 compresscodec: none crc: 3919285720 isvalid: true\n"
        "| offset: 0 CreateTime: 1700000000000 keySize: 1 valueSize: 1 sequence: -1 headerKeys: [] key: k payload: v\n"
    )
    assert result.stderr == ""


@pytest.mark.parametrize(
    "folder, lines",
    [
        ("worked-v1", [
            "offset: 0 position: 0 CreateTime: 1700000000000 size: 36 magic: 1 compresscodec: none crc: 958827571 "
            "isvalid: true",
            "| offset: 0 CreateTime: 1700000000000 keySize: 1 valueSize: 1 isValid: true crc: 958827571} key: k "
            "payload: v",
        ]),
        ("worked-v0", [
            "offset: 0 position: 0 NoTimestampType: -1 size: 28 magic: 0 compresscodec: none crc: 535615242 "
            "isvalid: true",
            "| offset: 0 NoTimestampType: -1 keySize: 1 valueSize: 1 isValid: true crc: 535615242} key: k payload: v",
        ]),
    ],
)
def test_worked_examples_v1_v0_are_reference_6_9_verbatim(folder, lines):
    """Up to 4.2 (Scala) the record line ends "crc: N}"; 4.3's Java port dropped the stray brace."""
    result = run(["--kafka-version", "4.2", "--print-data-log", "00000000000000000000.log"], cwd=DUMP / folder)
    assert result.stdout.splitlines()[2:] == lines
    result = run(["--print-data-log", "00000000000000000000.log"], cwd=DUMP / folder)
    assert result.stdout.splitlines()[2:] == [lines[0], lines[1].replace("} key:", " key:")]
    assert "} key:" in lines[1]


def test_commit_marker_snapshot_and_txn_lines_match_reference_6_9():
    log = run(["--print-data-log", "txn/00000000000000000000.log"]).stdout.splitlines()
    assert ("| offset: 10 CreateTime: 1700000000001 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
            "endTxnMarker: COMMIT coordinatorEpoch: 5") in log
    snapshot = run(["txn/00000000000000000014.snapshot"]).stdout.splitlines()
    assert snapshot[1] == (
        "producerId: 1000 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty "
        "lastTimestamp: 1700000000000 firstSequence: 0 lastSequence: 4 lastOffset: 9 offsetDelta: 4 "
        "timestamp: 1700000000000"
    )
    assert snapshot[2] == (  # no batch metadata: 4.3's Java port prints no space after lastTimestamp
        "producerId: 2000 producerEpoch: 3 coordinatorEpoch: 7 currentTxnFirstOffset: OptionalLong[12] "
        "lastTimestamp: 1700000000050"
    )
    scala = run(["--kafka-version", "4.2", "txn/00000000000000000014.snapshot"]).stdout.splitlines()
    assert scala[1] == snapshot[1]
    assert scala[2] == snapshot[2] + " "  # the Scala tool (<= 4.2) ends it with the space
    txn = run(["txn/00000000000000000000.txnindex"]).stdout.splitlines()
    assert txn[1] == "version: 0 producerId: 1000 firstOffset: 11 lastOffset: 13 lastStableOffset: 14"


# --------------------------------------------------------------------------- goldens

LOG = "00000000000000000000.log"
INTERNAL = "../internal/segments"  # fixtures/internal/segments, as seen from fixtures/dump
REAL = "../real/kafka-logs"
SIDE_FILES = sorted(str(p.relative_to(DUMP)) for p in (DUMP / "sidefiles").rglob("*") if p.is_file())
CASES: dict[str, tuple[list[str], int]] = {
    "codecs": ([f"codecs/{LOG}"], 0),
    "codecs-deep": (["--deep-iteration", f"codecs/{LOG}"], 0),
    "codecs-print": (["--print-data-log", f"codecs/{LOG}"], 0),
    "codecs-window": (["--deep-iteration", "--from-offset", "9", "--to-offset", "18", f"codecs/{LOG}"], 0),
    "codecs-max": (["--max-batches", "2", "--max-bytes", "300", f"codecs/{LOG}", f"records/{LOG}"], 0),
    "records-print": (["--print-data-log", f"records/{LOG}"], 0),
    "records-skip": (["--print-data-log", "--skip-record-metadata", f"records/{LOG}"], 0),
    "txn": (["--print-data-log", "txn"], 1),
    "indexes": (["indexes"], 0),
    "indexes-verify": (["--verify-index-only", "indexes/00000000000000000100.index",
                        "indexes/00000000000000000100.timeindex"], 0),
    "sanity": (["--index-sanity-check", "sanity"], 1),
    "corrupt": (["--deep-iteration", "corrupt"], 1),
    "corrupt-shallow": (["corrupt"], 1),
    "kraft": (["--deep-iteration", "kraft"], 0),
    "partition": (["topic-0"], 0),
    # every KRaft control record type, written by kafka-clients (fixtures/dump-kafka/PROVENANCE.md)
    "kafka-kraft": (["--deep-iteration", "../dump-kafka/__cluster_metadata-0"], 0),
    # internal-topic decoders (reference §6.7): the fixtures/internal segments, the bundled real files, and
    # records kafka-dump-log dies on (kseg reports them and goes on: exit 1)
    "offsets": (["--offsets-decoder", f"{INTERNAL}/__consumer_offsets-0"], 0),
    "offsets-real": (["--offsets-decoder", "--max-batches", "3", f"{REAL}/__consumer_offsets-12/{LOG}",
                      f"{REAL}/__consumer_offsets-12/00000000000000000862.log"], 0),
    "offsets-abort": (["--offsets-decoder", "decoders/__consumer_offsets-1"], 1),
    "offsets-skip": (["--offsets-decoder", "--skip-record-metadata", "decoders/__consumer_offsets-1"], 1),
    "transactions": (["--transaction-log-decoder", f"{INTERNAL}/__transaction_state-0",
                      "decoders/__transaction_state-1"], 1),
    "metadata": (["--cluster-metadata-decoder", f"{INTERNAL}/__cluster_metadata-0", f"{REAL}/__cluster_metadata-0",
                  "kraft"], 0),
    "remote": (["--remote-log-metadata-decoder", f"{INTERNAL}/__remote_log_metadata-0"], 0),
    "share": (["--share-group-state-decoder", f"{INTERNAL}/__share_group_state-0"], 0),
    # the rest of Kafka 4.3.0's record kinds (fixtures/internal/every_kind.py): older offsets layouts, the other
    # transaction states, every metadata api key and version, a share snapshot in Kafka 4.0's layout
    "offsets-streams": (["--offsets-decoder", f"{INTERNAL}/__consumer_offsets-1"], 0),
    "offsets-older": (["--offsets-decoder", f"{INTERNAL}/__consumer_offsets-2"], 0),
    "transactions-states": (["--transaction-log-decoder", f"{INTERNAL}/__transaction_state-1"], 0),
    "metadata-every-key": (["--cluster-metadata-decoder", f"{INTERNAL}/__cluster_metadata-1"], 0),
    # kept on purpose: a never-released 2023 trunk layout 4.3.0 cannot read, decoded (docs/internal-topics.md)
    "metadata-trunk-2023": (["--cluster-metadata-decoder", f"{INTERNAL}/__cluster_metadata-2"], 0),
    "share-4-0-layout": (["--share-group-state-decoder", f"{INTERNAL}/__share_group_state-1"], 0),
    "remote-states": (["--remote-log-metadata-decoder", f"{INTERNAL}/__remote_log_metadata-1"], 0),
    # side files and whole log directories (kseg's own text: Kafka's tool ignores or crashes on these)
    "logdir": (["logdir"], 0),
    "sidefiles": (SIDE_FILES, 1),
}
JSON_CASES: dict[str, tuple[list[str], int]] = {
    "codecs": (["--deep-iteration", f"codecs/{LOG}"], 0),
    "records": (["--deep-iteration", f"records/{LOG}"], 0),
    "records-hex": (["--deep-iteration", "--payload", "hex", f"records/{LOG}"], 0),
    "txn": (["--deep-iteration", "txn"], 1),
    "indexes": (["indexes", "sanity/00000000000000000030.index"], 0),
    "corrupt": (["--deep-iteration", "corrupt"], 1),
    "kraft": (["--deep-iteration", "kraft"], 0),
    "partition": (["topic-0"], 0),
    "offsets": (["--offsets-decoder", f"{INTERNAL}/__consumer_offsets-0", "decoders/__consumer_offsets-1"], 1),
    "transactions": (["--transaction-log-decoder", f"{INTERNAL}/__transaction_state-0",
                      "decoders/__transaction_state-1"], 1),
    "metadata": (["--cluster-metadata-decoder", f"{INTERNAL}/__cluster_metadata-0", "kraft"], 0),
    "remote": (["--remote-log-metadata-decoder", f"{INTERNAL}/__remote_log_metadata-0"], 0),
    "share": (["--share-group-state-decoder", f"{INTERNAL}/__share_group_state-0"], 0),
    "metadata-every-key": (["--cluster-metadata-decoder", f"{INTERNAL}/__cluster_metadata-1"], 0),
    "metadata-trunk-2023": (["--cluster-metadata-decoder", f"{INTERNAL}/__cluster_metadata-2"], 0),
    "offsets-older": (["--offsets-decoder", f"{INTERNAL}/__consumer_offsets-2"], 0),
    "offsets-streams": (["--offsets-decoder", f"{INTERNAL}/__consumer_offsets-1"], 0),
    "transactions-states": (["--transaction-log-decoder", f"{INTERNAL}/__transaction_state-1"], 0),
    "remote-states": (["--remote-log-metadata-decoder", f"{INTERNAL}/__remote_log_metadata-1"], 0),
    "share-4-0-layout": (["--share-group-state-decoder", f"{INTERNAL}/__share_group_state-1"], 0),
    "logdir": (["logdir"], 0),
    "sidefiles": (SIDE_FILES, 1),
}


#: Where the golden cases run: a copy of fixtures/ at one fixed absolute path.  kafka-dump-log keys its
#: summaries by ``file.getAbsolutePath()`` in hash maps (DumpLogSegments.java, 4.3.0: ``computeIfAbsent``),
#: so the order of a summary's files depends on where the files are; a fixed path keeps the goldens
#: the same in every checkout (a clean clone in CI, a worktree, a developer's home).
GOLDEN_RUN_ROOT = Path("/tmp/kseg-golden-run/fixtures")


@pytest.fixture(scope="module")
def golden_dump_dir() -> Path:
    shutil.rmtree(GOLDEN_RUN_ROOT.parent, ignore_errors=True)
    shutil.copytree(FIXTURES, GOLDEN_RUN_ROOT, symlinks=True)
    return GOLDEN_RUN_ROOT / "dump"


def _portable(text: str, dump_dir: Path = DUMP) -> str:
    """Summaries print absolute paths; goldens hold them relative to a $FIXTURES placeholder."""
    return text.replace(str(dump_dir), "$FIXTURES")


def _check_golden(path: Path, actual: str) -> None:
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        if actual or path.suffix != ".err":
            path.write_text(actual, encoding="utf-8")
        elif path.exists():
            path.unlink()
        return
    expected = path.read_text(encoding="utf-8") if path.exists() else ""
    assert actual == expected, f"{path.name} differs (KSEG_UPDATE_GOLDENS=1 rewrites it)"


#: Cases whose exit code differs in 4.3: Kafka 4.1+ no longer dies on a transaction-log record it cannot read.
CODE_43 = {"transactions": 0}


@pytest.mark.parametrize("golden", list(GOLDEN_DIRS), ids=lambda g: GOLDEN_DIRS[g])
@pytest.mark.parametrize("case", sorted(CASES))
def test_text_golden(case, golden, golden_dump_dir):
    args, code = CASES[case]
    version = GOLDEN_DIRS[golden]
    result = run(["--kafka-version", version, *args], cwd=golden_dump_dir)
    assert result.exit_code == (CODE_43.get(case, code) if version == "4.3" else code)
    _check_golden(golden / f"{case}.dump.txt", _portable(result.stdout, golden_dump_dir))
    _check_golden(golden / f"{case}.dump.err", _portable(result.stderr, golden_dump_dir))


@pytest.mark.parametrize("golden", list(GOLDEN_DIRS), ids=lambda g: GOLDEN_DIRS[g])
@pytest.mark.parametrize("case", sorted(JSON_CASES))
def test_json_golden(case, golden, golden_dump_dir):
    args, code = JSON_CASES[case]
    version = GOLDEN_DIRS[golden]
    result = run(["--format", "json", "--kafka-version", version, *args], cwd=golden_dump_dir)
    assert result.exit_code == (CODE_43.get(case, code) if version == "4.3" else code)
    for line in result.stdout.splitlines():
        assert "type" in json.loads(line)
    _check_golden(golden / f"{case}.dump.jsonl", _portable(result.stdout, golden_dump_dir))


def test_fixtures_rebuild_to_the_listed_sha256(tmp_path):
    """make_fixtures.py is deterministic and PROVENANCE.md lists exactly what it writes."""
    subprocess.run([sys.executable, str(DUMP / "make_fixtures.py")], check=True, cwd=tmp_path,
                   env={**os.environ, "PYTHONPATH": str(REPO)})
    listed = dict(re.findall(r"^\| `([^`]+)` \| \d+ \| `([0-9a-f]{64})` \|", (DUMP / "PROVENANCE.md").read_text(), re.MULTILINE))
    assert len(listed) >= 30
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_dump_fixtures", DUMP / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built = module.build()
    assert set(built) == set(listed)
    for name, (data, _) in built.items():
        assert hashlib.sha256(data).hexdigest() == listed[name], name
        assert (DUMP / name).read_bytes() == data, name


# --------------------------------------------------------------------------- options and errors


def test_files_option_and_paths_print_the_same():
    by_files = run(["--deep-iteration", f"--files=codecs/{LOG},records/{LOG}"])
    by_paths = run(["--deep-iteration", f"codecs/{LOG}", f"records/{LOG}"])
    assert by_files.exit_code == by_paths.exit_code == 0
    assert by_files.stdout == by_paths.stdout and by_files.stderr == by_paths.stderr


def test_missing_file_is_a_usage_error():
    result = run(["no-such.log"])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr and result.stdout == ""
    result = run(["--files", "codecs/00000000000000000000.log,nope.log"])
    assert result.exit_code == 2 and "--files: nope.log: no such file or directory" in result.stderr


def test_directory_without_segments_is_a_usage_error(tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here")
    result = run([str(tmp_path)])
    assert result.exit_code == 2
    assert f"{tmp_path}: no Kafka files to dump in this directory" in result.stderr


def test_corrupt_batch_reports_position_and_goes_on():
    result = run(["corrupt/00000000000000000010.log", f"worked-v2/{LOG}"])
    assert result.exit_code == 1
    assert result.stderr == (
        "kseg: corrupt/00000000000000000010.log: byte 70: Found record size 0 smaller than minimum record "
        "overhead (14)\n"
    )
    assert result.stdout.splitlines()[-2:] == [
        "Log starting offset: 0",
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
        "position: 0 CreateTime: 1700000000000 size: 70 magic: 2 compresscodec: none crc: 3919285720 isvalid: true",
    ]


def _overrun_log(folder: Path, key_length: int, value_length: int) -> None:
    """A V1 message (key b"key", value b"value", 42 bytes) with its stored key and value lengths replaced,
    then a plain one: kseg's writer, then the two ints (entry header 12, crc 4, magic+attributes 2, ts 8)."""
    from kseg.format import RecordSpec, encode_batch

    message = bytearray(encode_batch([RecordSpec(0, 1700000000000, b"key", b"value")], magic=1))
    message[26:30] = key_length.to_bytes(4, "big", signed=True)
    message[33:37] = value_length.to_bytes(4, "big", signed=True)
    plain = encode_batch([RecordSpec(1, 1700000000001, b"k", b"v")], magic=1, base_offset=1)
    folder.mkdir()
    (folder / LOG).write_bytes(bytes(message) + plain)


_OVERRUN_HEAD = (
    f"Dumping t-0/{LOG}\nLog starting offset: 0\n"
    "offset: 0 position: 0 CreateTime: 1700000000000 size: 42 magic: 1 compresscodec: none crc: 1792040376 "
    "isvalid: false\n"
)
_OVERRUN_NEXT = ("offset: 1 position: 42 CreateTime: 1700000000001 size: 36 magic: 1 compresscodec: none "
                 "crc: 4171781107 isvalid: true\n")


@pytest.mark.parametrize(("key_length", "value_length", "options", "stdout", "stderr"), [
    # the value length (6) runs past the 5 bytes left: Kafka's LegacyRecord prints the stored sizes and goes on
    (3, 6, ["--deep-iteration"],
     _OVERRUN_HEAD + "| offset: 0 CreateTime: 1700000000000 keySize: 3 valueSize: 6 isValid: false crc: 1792040376\n"
     + _OVERRUN_NEXT + "| offset: 1 CreateTime: 1700000000001 keySize: 1 valueSize: 1 isValid: true crc: 4171781107\n",
     "byte 33: message.value of 6 bytes runs past the end of the message (5 bytes left)"),
    # ... and without the metadata it reads neither size
    (3, 6, ["--deep-iteration", "--skip-record-metadata"], _OVERRUN_HEAD + "\n" + _OVERRUN_NEXT + "\n",
     "byte 33: message.value of 6 bytes runs past the end of the message (5 bytes left)"),
    # printing the value, Kafka dies after the metadata (newLimit > capacity): the file stops there
    (3, 6, ["--print-data-log"],
     _OVERRUN_HEAD + "| offset: 0 CreateTime: 1700000000000 keySize: 3 valueSize: 6 isValid: false crc: 1792040376\n",
     "byte 33: message.value of 6 bytes runs past the end of the message (5 bytes left)"),
    # a key length of 1024 puts the value length past the message: Kafka dies before the record's line
    (1024, 5, ["--deep-iteration"], _OVERRUN_HEAD,
     "byte 26: message.key of 1024 bytes runs past the end of the message (12 bytes left)"),
    # a key length of 6 reads the value length from the value's bytes: printed as stored
    (6, 5, ["--deep-iteration"],
     _OVERRUN_HEAD + "| offset: 0 CreateTime: 1700000000000 keySize: 6 valueSize: 91644268 isValid: false "
     "crc: 1792040376\n" + _OVERRUN_NEXT
     + "| offset: 1 CreateTime: 1700000000001 keySize: 1 valueSize: 1 isValid: true crc: 4171781107\n",
     "byte 36: message.value of 91644268 bytes runs past the end of the message (2 bytes left)"),
])
def test_legacy_length_overrun_prints_kafkas_line(tmp_path, key_length, value_length, options, stdout, stderr):
    """docs/dump.md row 18: an uncompressed V0/V1 message whose key or value length runs past it prints the
    line Kafka's lazy LegacyRecord prints, as far as Kafka gets (test_dump_vs_dumplogsegments checks it against
    Kafka 4.3.0); kseg reports the message and exits 1."""
    _overrun_log(tmp_path / "t-0", key_length, value_length)
    result = run(["--files", f"t-0/{LOG}", *options], cwd=tmp_path)
    assert (result.exit_code, result.stdout, result.stderr) == (1, stdout, f"kseg: t-0/{LOG}: {stderr}\n")


@pytest.mark.parametrize("output_format", ["json", "table"])
def test_legacy_length_overrun_in_kseg_formats_is_not_a_record(tmp_path, output_format):
    """kseg's own formats show no record it cannot read: the batch, then the problem, and the file stops."""
    _overrun_log(tmp_path / "t-0", 3, 6)
    result = run(["--files", f"t-0/{LOG}", "--deep-iteration", "--format", output_format], cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stderr == f"kseg: t-0/{LOG}: byte 33: message.value of 6 bytes runs past the end of the message " \
        "(5 bytes left)\n"
    if output_format == "json":
        batches = [json.loads(line) for line in result.stdout.splitlines() if '"type":"batch"' in line]
        assert [(b["position"], b["records"]) for b in batches] == [(0, [])]
    else:
        assert [line.split()[:2] for line in result.stdout.splitlines() if "v1 none" in line] == [["0", "0"]]
        assert "hdrs" not in result.stdout  # no records table


def test_decoder_classes():
    plain = run(["--print-data-log", f"worked-v2/{LOG}"])
    implied = run([f"worked-v2/{LOG}", "--value-decoder-class"])  # optional argument: StringDecoder
    assert implied.exit_code == 0 and implied.stdout == plain.stdout
    # 3.8-3.9 map the old class name with a notice; 4.0 dropped the class (the tool dies: a usage error here)
    deprecated = run(["--kafka-version", "3.9", "--key-decoder-class", "kafka.serializer.StringDecoder",
                      f"worked-v2/{LOG}"])
    assert deprecated.stdout.splitlines()[:2] == [
        f"Dumping worked-v2/{LOG}",
        "kafka.serializer.StringDecoder is deprecated. Please use org.apache.kafka.tools.api.StringDecoder instead",
    ]
    gone = run(["--key-decoder-class", "kafka.serializer.StringDecoder", f"worked-v2/{LOG}"])
    assert gone.exit_code == 2 and gone.stdout == "" and "Kafka 4.3's kafka-dump-log has no such class" in gone.stderr
    older = run(["--kafka-version", "3.7", "--key-decoder-class", "kafka.serializer.StringDecoder", f"worked-v2/{LOG}"])
    assert older.exit_code == 0 and older.stdout == plain.stdout  # before 3.8 it is the default class
    unknown = run(["--kafka-version", "5.0", f"worked-v2/{LOG}"])
    assert unknown.exit_code == 2 and unknown.stdout == "" and len(unknown.stderr.splitlines()) == 1
    assert "--kafka-version" in unknown.stderr
    other = run(["--value-decoder-class", "org.apache.kafka.tools.api.LongDecoder", f"worked-v2/{LOG}"])
    assert other.exit_code == 2 and "not yet supported" in other.stderr


def test_window_options_are_checked():
    assert run(["--from-offset", "5", "--to-offset", "4", f"codecs/{LOG}"]).exit_code == 2
    assert run(["--max-batches", "0", f"codecs/{LOG}"]).exit_code == 2
    iso = run(["--from-time", "2023-11-14T22:13:20.020Z", "--max-batches", "1", f"codecs/{LOG}"])
    ms = run(["--from-time", "1700000000020", "--max-batches", "1", f"codecs/{LOG}"])
    assert iso.exit_code == 0 and iso.stdout == ms.stdout
    assert "baseOffset: 20 lastOffset: 21" in iso.stdout
    assert run(["--from-time", "yesterday", f"codecs/{LOG}"]).exit_code == 2


def test_no_path_at_all_is_a_usage_error():
    result = run([])
    assert result.exit_code == 2 and "give at least one PATH" in result.stderr


# --------------------------------------------------------------------------- read-only


def _state(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_dump_never_creates_or_changes_a_file(tmp_path):
    work = tmp_path / "copy"
    shutil.copytree(DUMP, work, ignore=shutil.ignore_patterns("golden", "*.py", "*.md"))
    assert (work / "logdir" / ".kafka_cleanshutdown").is_file() and (work / "sidefiles").is_dir()
    (work / "indexes" / "00000000000000000100.index").rename(work / "indexes" / "moved.index.bak")
    before = _state(work)
    for args in (["--deep-iteration"], ["--format", "json", "--deep-iteration"], ["--index-sanity-check"],
                 ["--verify-index-only"], ["--format", "table"], ["--offsets-decoder"],
                 ["--cluster-metadata-decoder", "--format", "json"]):
        run([*args, *sorted(str(p) for p in work.rglob("*") if p.is_file())], cwd=work)
    assert _state(work) == before  # a .timeindex without its .index: Kafka would create the .index; kseg does not


# --------------------------------------------------------------------------- JSON payloads


@pytest.mark.parametrize("mode", ["utf8", "hex", "base64"])
def test_json_payloads_round_trip_to_the_exact_bytes(mode):
    path = DUMP / "records" / LOG
    result = run(["--format", "json", "--deep-iteration", "--payload", mode, str(path)])
    dumped = [json.loads(line) for line in result.stdout.splitlines()]
    records = [r for obj in dumped if obj["type"] == "batch" for r in obj["records"]]
    data = path.read_bytes()
    expected, position = [], 0
    while position < len(data):
        batch = read_batch(data, position)
        expected.extend(batch.iter_records())
        position += batch.size
    assert [r["offset"] for r in records] == [r.offset for r in expected]
    for got, want in zip(records, expected):
        assert decode_payload(got["key"], mode) == want.key
        assert decode_payload(got["value"], mode) == want.value
        assert [decode_payload(v, mode) for _, v in got["headers"]] == [v for _, v in want.headers]
    odd = {r["offset"]: r for r in records}
    if mode == "utf8":
        assert odd[4]["value"] == {"base64": base64.b64encode(b"\xed\xa0\x80|").decode()}
        assert odd[3]["value"] == "caf\u00e9 \U0001F600 line1\nline2"
        assert odd[7]["headers"][0][0] == "\ufffdkey"  # header keys are Strings in Kafka: Java-decoded


# --------------------------------------------------------------------------- table


def test_table_fits_80_columns():
    from rich.cells import cell_len

    result = run(["--format", "table", "--deep-iteration", f"records/{LOG}", "txn", "indexes"],
                 env={"COLUMNS": "80"})
    assert result.exit_code == 1  # the corrupt snapshot in txn/
    lines = result.stdout.splitlines()
    assert lines and max(cell_len(line) for line in lines) <= 80
    assert any("after-gap" in line and "compacted away" in line for line in lines)
    assert any("[COMMIT]" in line and "coordinatorEpoch 5" in line for line in lines)


# --------------------------------------------------------------------------- pipes


def test_closed_pipe_ends_quietly(tmp_path):
    from kseg.format import RecordSpec, encode_batch

    path = tmp_path / LOG
    with open(path, "wb") as out:
        out.writelines(encode_batch([RecordSpec(b * 50 + i, 0, b"k", b"v" * 200) for i in range(50)]) for b in range(300))
    proc = subprocess.Popen([sys.executable, "-m", "kseg", "dump", "--print-data-log", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert first.startswith(b"Dumping ") and err == b""


def test_progress_line_only_for_long_work():
    import io

    from kseg.ops.dump import DumpOptions, DumpTarget, iter_dump
    from kseg.render.dump import Progress

    err = io.BytesIO()
    target = DumpTarget(f"codecs/{LOG}", DUMP / "codecs" / LOG)
    progress = Progress(err, {target.display: 10}, min_size=1, every=0.0)
    for event in iter_dump([target], DumpOptions()):
        progress.update(event)
    progress.clear()
    assert b"\rkseg: codecs/00000000000000000000.log: " in err.getvalue() and err.getvalue().endswith(b"\r\x1b[K")
    quiet = io.BytesIO()
    progress = Progress(quiet, {target.display: 10}, min_size=1 << 30)
    for event in iter_dump([target], DumpOptions()):
        progress.update(event)
    assert quiet.getvalue() == b""


# --------------------------------------------------------------------------- the real corpus


@pytest.mark.corpus
def test_whole_real_corpus_dumps_without_error():
    """Every file of the corpus: no traceback; the only problems are index files whose .log the corpus lacks.

    A named file that is no Kafka file (``cluster_metadata.log.b64``) is an error of its own (docs/cli.md),
    so the corpus is dumped without those, and each of them alone is refused.
    """
    from kseg.ops.dump import handler_kind

    root = require_dir(CORPUS_REAL, "the real-data corpus")
    named = [e["file"] for e in json.loads((root / "manifest.json").read_text())]
    files = [f for f in named if handler_kind(Path(f).name) is not None]
    for other in set(named) - set(files):
        refused = run([other], cwd=root)
        assert (refused.exit_code, refused.stdout) == (2, "") and "not a Kafka file" in refused.stderr
    result = run(["--deep-iteration", *files], cwd=root)
    assert result.exit_code in (0, 1)
    problems = [line for line in result.stderr.splitlines() if line.startswith("kseg: ")]
    for problem in problems:
        match = re.fullmatch(r"kseg: (\S+\.(?:index|timeindex)): (\d+\.(?:log|index)) not found beside it.*", problem)
        assert match, problem
        assert not (root / match[1]).with_name(match[2]).exists()
    assert result.stdout.count("\nDumping ") + 1 == len(files)
    assert "Traceback" not in result.stderr
    batches = sum(1 for line in result.stdout.splitlines() if line.startswith(("baseOffset: ", "offset: ")))
    assert batches > 200_000

"""``kseg triage`` end to end on a small broker built in tmp_path.

The broker has two log directories, written by the builders of
``tests/logdirs.py`` as a clean shutdown leaves them and then damaged:

* ``d1`` (clean shutdown): ``orders-0`` healthy (**clean**); ``orders-1`` has a batch whose offset is below its
  segment's base with the segment's ``.index`` missing: the early recovery overflows and the split is refused
  (R3.4, R4.4, R4.5: ``IllegalArgumentException``, the broker stops) (**fails**).
* ``d2`` (no ``.kafka_cleanshutdown``, recovery point 3): ``events-0`` healthy, its active segment recovered and
  its snapshots rewritten (**rebuilt**, R4.2); ``events-1`` damaged in segment 5 below its high watermark 8: cut
  there, segment 7 deleted (**truncated**, R4.3: committed offsets 5-7 lost); ``events-2`` damaged in its last
  batch, above its high watermark 3 (**truncated**, nothing committed lost); and a
  ``replication-offset-checkpoint`` entry for ``gone-0``, which has no directory.

Every expected value is the model's (kseg.recovery.loading, traced to Kafka in tests/recovery); these tests
pin how triage measures, orders and shows it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from logdirs import LogDir, batch, tree

from kseg.cli import cli
from kseg.ops.triage.run import COMMITTED, HEALTHY, STOPS, UNCOMMITTED, triage

ENV = {"NO_COLOR": "1", "COLUMNS": "100"}
CONTRACT = ["type", "path", "topic", "partition", "outcome", "log_start_offset", "log_end_offset",
            "truncated_bytes", "deleted_segments", "lost_offsets", "error", "leader_epochs"]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["triage", *args], env=ENV)


def flip(path: Path, at: int = -3) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.fixture
def broker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two log directories (see the module docstring); the working directory is tmp_path."""
    one, two = LogDir(tmp_path / "d1"), LogDir(tmp_path / "d2")
    one.partition("orders", 0, {0: [batch(0, 3), batch(3, 2, epoch=1)], 5: [batch(5, 2, epoch=1)]},
                  epochs=[(0, 0), (1, 3)])
    below_base = one.partition("orders", 1, {0: [batch(0, 3)], 10: [batch(10, 2), batch(4, 1)]})
    below_base.file(".index", 10).unlink()
    two.partition("events", 0, {0: [batch(0, 3)], 3: [batch(3, 2)]})
    cut = two.partition("events", 1, {0: [batch(0, 3), batch(3, 2, epoch=1)], 5: [batch(5, 2, epoch=1)],
                                      7: [batch(7, 3, epoch=2)]}, epochs=[(0, 0), (1, 3), (2, 7)])
    flip(cut.file(".log", 5))
    tail = two.partition("events", 2, {0: [batch(0, 3)], 3: [batch(3, 2)]})
    flip(tail.file(".log", 3))
    one.finish(clean=True)
    points = {("events", 0): 3, ("events", 1): 3, ("events", 2): 3}
    marks = {("events", 0): 5, ("events", 1): 8, ("events", 2): 3, ("gone", 0): 42}
    two.finish(clean=False, recovery_points=points, high_watermarks=marks)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def plain(text: str, root: Path) -> str:
    """Absolute paths in Kafka's messages, made independent of tmp_path."""
    return text.replace(os.path.realpath(root), "<tmp>").replace(str(root), "<tmp>")


TEXT = """\
kseg triage: 2 log directories, 5 partitions: 1 fails, 2 truncated, 1 rebuilt, 1 clean
next start: the broker stops (java.lang.IllegalArgumentException in d1/orders-1)
assumed, not on disk: the controller's metadata image has this broker as a replica of 4 partitions \
(else renamed -stray)

log dir d1: clean shutdown, 2 partitions; the broker stops
log dir d2: unclean shutdown (no .kafka_cleanshutdown), 3 partitions
  checkpoint entry without a directory: replication-offset-checkpoint gone-0 offset 42

fails      d1/orders-1  the broker stops: java.lang.IllegalArgumentException: Split operation is only \
permitted for segments with overflow, and the problem path is <tmp>/d1/orders-1/00000000000000000010.log
  next: kseg verify --deep d1/orders-1  # locate every damaged batch and record (byte position, offset, field)
        kseg dump --deep-iteration d1/orders-1/00000000000000000010.log  # the file Kafka throws on
        kseg recover --dry-run d1/orders-1  # what a recovery keeps and cuts so that the partition loads
truncated  d2/events-1  offsets 5-9 lost (5: 3 below the high watermark 8, 0 below the recovery point 3); \
97 bytes cut; segment 7 deleted (115 bytes); log end 5, 3 below the high watermark 8
  next: kseg verify d2/events-1  # where the damage is and what it is
        kseg recover --dry-run --salvage d2/events-1  # committed data is cut: the intact batches after the \
damage that can still be saved
truncated  d2/events-2  offsets 3-4 lost (2: 0 below the high watermark 3, 0 below the recovery point 3); \
97 bytes cut; log end 3
  next: kseg verify d2/events-2  # where the damage is and what it is
        kseg recover --dry-run d2/events-2  # what Kafka's recovery keeps and cuts

otherwise healthy: 2 partitions (1 rebuilt, 1 clean); rebuilt: every .log byte kept, only .snapshot files \
change; none served while the broker stops; --all lists them
result: lost 7 offsets (3 below the high watermark); 309 bytes cut or deleted; 1 segment deleted; \
a checkpointed partition has no directory; 1 partition fails to load; the broker stops
verdict: error: the broker stops; a checkpointed partition has no directory; committed offsets lost; \
uncommitted offsets lost
"""

HEALTHY_ROWS = """\
rebuilt    d2/events-0  log end 5; every .log byte kept; creates 00000000000000000003.snapshot; nothing lost
clean      d1/orders-0  log end 7; nothing lost

otherwise healthy: 2 partitions (1 rebuilt, 1 clean); rebuilt: every .log byte kept, only .snapshot files \
change; none served while the broker stops
"""


def test_text_in_a_pipe(broker):
    """Problems worst first with what to run next; healthy partitions counted; nothing on stderr (no tty)."""
    result = run("d1", "d2")
    assert (result.exit_code, result.stderr) == (1, "")
    assert plain(result.stdout, broker) == TEXT


def test_all_lists_healthy_partitions_after_the_problems(broker):
    result = run("--all", "d1", "d2")
    assert result.exit_code == 1
    before, _, _ = TEXT.partition("\notherwise healthy: ")
    assert plain(result.stdout, broker).startswith(before + HEALTHY_ROWS)


def _partition(path, outcome, start, end, cut, deleted, lost, error, epochs, **extra):
    keys = CONTRACT[1:]
    return dict(zip(["type", *keys], ["partition", path, *path.split("/")[1].rsplit("-", 1), outcome, start, end,
                                      cut, deleted, lost, error, epochs], strict=True)) | extra


def test_json_one_object_per_partition_then_summary(broker):
    result = run("--format", "json", "d1", "d2")
    assert (result.exit_code, result.stderr) == (1, "")
    objects = [json.loads(plain(line, broker)) for line in result.stdout.splitlines()]
    parts, summary = objects[:-1], objects[-1]
    assert all(list(p)[: len(CONTRACT)] == CONTRACT for p in parts)
    split = ("Split operation is only permitted for segments with overflow, and the problem path is "
             "<tmp>/d1/orders-1/00000000000000000010.log")
    expected = [
        ("d1/orders-1", "fails", None, None, 0, [], [], {"exception": "java.lang.IllegalArgumentException",
                                                         "message": split}, None),
        ("d2/events-1", "truncated", 0, 5, 97, [7], [[5, 9]], None, [[0, 0], [1, 3]]),
        ("d2/events-2", "truncated", 0, 3, 97, [], [[3, 4]], None, [[0, 0]]),
        ("d2/events-0", "rebuilt", 0, 5, 0, [], [], None, [[0, 0]]),
        ("d1/orders-0", "clean", 0, 7, 0, [], [], None, [[0, 0], [1, 3]]),
    ]
    assert [{k: p[k] for k in CONTRACT} for p in parts] == [
        {**_partition(*row), "topic": row[0].split("/")[1].rsplit("-", 1)[0],
         "partition": int(row[0].rsplit("-", 1)[1])} for row in expected]
    extras = [(p["high_watermark"], p["lost_below_high_watermark"], p["lost_above_high_watermark"],
               p["deleted_bytes"], p["consequence"], [s["command"] for s in p["next"]]) for p in parts]
    assert extras == [
        (5, 0, None, 0, "broker stops", ["kseg verify --deep d1/orders-1",
                                         "kseg dump --deep-iteration d1/orders-1/00000000000000000010.log",
                                         "kseg recover --dry-run d1/orders-1"]),
        (8, 3, False, 115, None, ["kseg verify d2/events-1", "kseg recover --dry-run --salvage d2/events-1"]),
        (3, 0, True, 0, None, ["kseg verify d2/events-2", "kseg recover --dry-run d2/events-2"]),
        (5, 0, True, 0, None, []),
        (7, 0, True, 0, None, []),
    ]
    assert summary == {
        "type": "summary", "partitions": 5, "outcomes": {"clean": 1, "rebuilt": 1, "truncated": 2, "fails": 1},
        "problems": 3, "healthy": 2, "bytes_lost": 309, "truncated_bytes": 194, "deleted_segments": 1,
        "deleted_bytes": 115, "lost_offsets": 7, "lost_below_high_watermark": 3, "lost_below_recovery_point": 0,
        "failing_partitions": 1, "log_dirs": 2, "log_dirs_offline": [], "broker_stops": True,
        "entries_without_directory": [{"log_dir": "d2", "file": "replication-offset-checkpoint", "topic": "gone",
                                       "partition": 0, "offset": 42}],
        "directories_without_entries": [], "log_dir_errors": [], "exit_code": 1,
        "verdict": {"exit_code": 1, "headline": TEXT.splitlines()[-1].replace("\\", ""), "facts": [
            {"kind": "broker-stops", "severity": "error", "where": "d1/orders-1", "offsets": [],
             "text": "the load throws java.lang.IllegalArgumentException"},
            {"kind": "partition-missing", "severity": "error", "where": "d2", "offsets": [],
             "text": "replication-offset-checkpoint has gone-0 at offset 42, but no directory holds it: its data "
                     "is not on this broker"},
            {"kind": "rebuilt", "severity": "info", "where": "d2/events-0", "offsets": [],
             "text": "rebuilt: 00000000000000000003.snapshot"},
            {"kind": "committed-lost", "severity": "error", "where": "d2/events-1", "offsets": [[5, 9]],
             "text": "offsets 5-9 lost (5, 3 below the high watermark 8)"},
            {"kind": "offsets-lost", "severity": "error", "where": "d2/events-2", "offsets": [[3, 4]],
             "text": "offsets 3-4 lost (2, all at or above the high watermark 3: never committed)"}]},
    }


def test_order_is_by_impact_not_by_name(tmp_path, monkeypatch):
    """Stops > committed offsets lost (more first) > uncommitted lost > healthy, whatever the names."""
    logdir = LogDir(tmp_path / "d")
    specs = {"a": [batch(0, 3)], "b": [batch(0, 1), batch(1, 1)], "c": [batch(0, 1), batch(1, 4)]}
    for topic, batches in specs.items():
        part = logdir.partition(topic, 0, {0: batches})
        flip(part.file(".log"))
    logdir.partition("z", 0, {0: [batch(0, 2)]})
    logdir.finish(clean=False, recovery_points={}, high_watermarks={("a", 0): 0, ("b", 0): 2, ("c", 0): 5})
    result = triage([tmp_path / "d"])
    assert [(p.prediction.topic, p.impact, p.loss.offsets, p.loss.below_high_watermark)
            for p in result.partitions] == [
        ("c", COMMITTED, 4, 4), ("b", COMMITTED, 1, 1), ("a", UNCOMMITTED, 3, 0), ("z", HEALTHY, 0, None)]
    assert STOPS < COMMITTED


def test_healthy_broker_exit_0(tmp_path, monkeypatch):
    logdir = LogDir(tmp_path / "d")
    logdir.partition("t", 0, {0: [batch(0, 3)]})
    logdir.partition("t", 1, {0: [batch(0, 1)], 1: [batch(1, 2)]})
    logdir.finish()
    monkeypatch.chdir(tmp_path)
    result = run("d")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "kseg triage: 1 log directory, 2 partitions: 2 clean\n"
        "next start: the broker starts\n"
        "assumed, not on disk: the controller's metadata image has this broker as a replica of 2 partitions "
        "(else renamed -stray)\n"
        "\n"
        "log dir d: clean shutdown, 2 partitions\n"
        "\n"
        "healthy: 2 partitions (2 clean); --all lists them\n"
        "result: nothing lost\n"
        "verdict: ok: the broker starts; nothing lost\n")
    summary = json.loads(run("--format", "json", "d").stdout.splitlines()[-1])
    assert (summary["outcomes"], summary["exit_code"]) == ({"clean": 2, "rebuilt": 0, "truncated": 0, "fails": 0}, 0)


def test_offline_log_dir_exits_1_with_nothing_lost(tmp_path):
    """R7.8, R9.1: a leader-epoch-checkpoint with the wrong count is a KafkaStorageException caused by an
    IOException: the log directory goes offline; with one log directory the broker stops (R9.2)."""
    logdir = LogDir(tmp_path / "d")
    part = logdir.partition("t", 0, {0: [batch(0, 3)]})
    (part.path / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n")
    logdir.finish()
    result = run("--format", "json", str(tmp_path / "d"))
    assert result.exit_code == 1
    first, summary = (json.loads(line) for line in result.stdout.splitlines())
    assert (first["outcome"], first["consequence"], first["lost_offsets"]) == ("fails", "log directory goes offline", [])
    assert first["next"][0]["command"] == f"kseg dump {part.path / 'leader-epoch-checkpoint'}"
    assert (summary["log_dirs_offline"], summary["broker_stops"]) == ([str(tmp_path / "d")], True)


@pytest.mark.parametrize(("args", "message"), [
    (["nope"], "kseg: error: nope: No such file or directory\n"),
    (["d1/orders-0"], "kseg: error: d1/orders-0: a partition directory; give the log directory that holds it "
                      "(<tmp>/d1)\n"),
    (["d1/orders-0/leader-epoch-checkpoint"],
     "kseg: error: d1/orders-0/leader-epoch-checkpoint: Not a directory (give a log directory)\n"),
    (["d1", "link"], "kseg: error: link: the same log directory as d1; give each log directory once\n"),
], ids=["missing", "partition-dir", "file", "twice"])
def test_usage_errors_are_one_line_exit_2(broker, args, message):
    (broker / "link").symlink_to("d1")
    result = run(*args)
    assert (result.exit_code, result.stdout, plain(result.stderr, broker)) == (2, "", message)


def test_no_argument_is_a_usage_error():
    assert run().exit_code == 2


def test_table_even_in_a_pipe(broker):
    result = run("--format", "table", "--all", "d1", "d2")
    lines = plain(result.stdout, broker).splitlines()
    assert result.exit_code == 1
    assert lines[8].split() == ["outcome", "partition", "what", "the", "next", "start", "does;", "what", "to",
                                "run", "next"]
    rows = [line.split()[:2] for line in lines if line.split()[:1] in (["fails"], ["truncated"], ["rebuilt"],
                                                                       ["clean"])]
    assert rows == [["fails", "d1/orders-1"], ["truncated", "d2/events-1"], ["truncated", "d2/events-2"],
                    ["rebuilt", "d2/events-0"], ["clean", "d1/orders-0"]]
    assert "$ kseg recover --dry-run --salvage d2/events-1" in result.stdout
    assert lines[-3] == ("otherwise healthy: 2 partitions (1 rebuilt, 1 clean); rebuilt: every .log byte kept, "
                         "only .snapshot files change; none served while the broker stops")
    assert lines[-1] == TEXT.splitlines()[-1].replace("\\", "")


OLD_NS = 978307200 * 10**9  # 2001: any ordinary read moves such an access time to now (relatime)


def _age(root: Path) -> dict[str, int]:
    """Every file's access time set to 2001, mtime kept (as tests/test_atime.py does); the atimes set."""
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(OLD_NS, path.stat().st_mtime_ns))
    return {str(p.relative_to(root)): p.stat().st_atime_ns for p in sorted(root.rglob("*")) if p.is_file()}


def _without_atimes(root: Path) -> dict[str, tuple[int, int, bytes]]:
    return {name: (size, mtime, data) for name, (size, mtime, _, data) in tree(root).items()}


@pytest.mark.parametrize("fmt", ["text", "json", "table"])
def test_read_only(broker, fmt):
    """Nothing created, changed or deleted, no mtime moves, and no file's atime moves (O_NOATIME reads) --
    although Kafka's load would rewrite, cut and delete files here."""
    before = _without_atimes(broker)
    control = broker / "control"
    control.write_bytes(b"x")
    atimes = _age(broker)
    control.read_bytes()
    if control.stat().st_atime_ns == OLD_NS:
        pytest.skip("this file system does not update access times (noatime)")
    control.unlink()
    del atimes["control"]
    assert run("--format", fmt, "--all", "d1", "d2").exit_code == 1
    assert {str(p.relative_to(broker)): p.stat().st_atime_ns for p in sorted(broker.rglob("*")) if p.is_file()} \
        == atimes
    assert _without_atimes(broker) == before


def test_progress_names_each_log_directory_then_clears(capsys):
    """On a terminal (the command only builds it when stderr is one) one line per log directory, then erased."""
    from kseg.commands.triage import _Progress

    progress = _Progress()
    progress(0, 2, "data-one")
    progress(1, 2, "d2")
    progress.clear()
    first, second = "triage: reading log directory 1 of 2: data-one", "triage: reading log directory 2 of 2: d2"
    assert capsys.readouterr().err == f"\r{first}\r{second.ljust(len(first))}\r{' ' * len(first)}\r"


def test_help():
    result = run("--help")
    assert result.exit_code == 0 and "triage [OPTIONS] LOG_DIRS..." in result.stdout

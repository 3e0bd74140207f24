"""``kseg diff`` end to end: exact JSON Lines, text, exit codes, read-only, consumers, --export-unique."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner, Result
from diff_replicas import b, consumer_offsets, replica
from logdirs import tree

from kseg.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "100"}
OLD = 978307200  # 2001-01-01T00:00:00Z


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["diff", *args], env=ENV)


def lines(result: Result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_unclean_election_json_lines(unclean):
    result = run("--format", "json", *unclean)
    assert result.exit_code == 1, result.output
    out = lines(result)
    assert [o["type"] for o in out] == (["replica"] * 3 + ["truncation"] * 6 + ["divergence", "keys"] * 3
                                        + ["recommendation"])
    assert out[1] == {"type": "replica", "path": "b/t-0", "topic": "t", "partition": 0, "log_start_offset": 0,
                      "log_end_offset": 20, "high_watermark": 12, "epochs": [[0, 0], [1, 10], [2, 12]],
                      "batch_epochs": [[0, 0], [1, 10], [2, 12]], "epoch_disagreements": [], "error": None}
    by_pair = {(o["leader"], o["follower"]): o for o in out if o["type"] == "truncation"}
    assert {k: (v["truncate_to"], v["lost_offsets"], v["lost_below_high_watermark"]) for k, v in by_pair.items()} == {
        ("a/t-0", "b/t-0"): (12, [[12, 19]], 0),
        ("a/t-0", "c/t-0"): (10, [], 0),
        ("b/t-0", "a/t-0"): (12, [[12, 14]], 3),
        ("b/t-0", "c/t-0"): (10, [], 0),
        ("c/t-0", "a/t-0"): (10, [[10, 14]], 5),
        ("c/t-0", "b/t-0"): (10, [[10, 19]], 2),
    }
    assert out[9:15] == [
        {"type": "divergence", "a": "a/t-0", "b": "b/t-0", "first": 12, "last": 19, "kind": "different records",
         "batches_a": 1, "batches_b": 1},
        {"type": "keys", "a": "a/t-0", "b": "b/t-0", "keys": 1, "differing_keys": 1,
         "examples": [{"key": "k", "a": "value at 14", "b": "value at 19"}]},
        {"type": "divergence", "a": "a/t-0", "b": "c/t-0", "first": 10, "last": 14, "kind": "only on a/t-0",
         "batches_a": 2, "batches_b": 0},
        {"type": "keys", "a": "a/t-0", "b": "c/t-0", "keys": 1, "differing_keys": 0, "examples": []},
        {"type": "divergence", "a": "b/t-0", "b": "c/t-0", "first": 10, "last": 19, "kind": "only on b/t-0",
         "batches_a": 2, "batches_b": 0},
        {"type": "keys", "a": "b/t-0", "b": "c/t-0", "keys": 1, "differing_keys": 1,
         "examples": [{"key": "k", "a": "value at 19", "b": "value at 9"}]},
    ]
    assert out[-1] == {
        "type": "recommendation", "leader": "a/t-0",
        "reason": "loses 0 offsets acknowledged below a follower's high watermark and 8 offsets in all; "
                  "other choices: b/t-0: 3 committed, 3 in all; c/t-0: 5 committed, 10 in all",
        "new_leader_epoch": 3,
        "choices": [{"leader": "a/t-0", "committed_lost": 0, "lost": 8},
                    {"leader": "b/t-0", "committed_lost": 3, "lost": 3},
                    {"leader": "c/t-0", "committed_lost": 5, "lost": 10}],
    }


def test_unclean_election_text(unclean):
    result = run(*unclean)
    assert result.exit_code == 1
    text = result.stdout.splitlines()
    assert text[:3] == ["a/t-0: offsets 0..14, high watermark 15, epochs 0@0 1@10",
                        "b/t-0: offsets 0..19, high watermark 12, epochs 0@0 1@10 2@12",
                        "c/t-0: offsets 0..9, high watermark 8, epochs 0@0"]
    assert "a/t-0 vs b/t-0: 12..19 different records (1 vs 1 batches)" in text
    assert ("leader b/t-0: a/t-0 truncates to 12, loses 12..14 (3 below its high watermark 15)") in text
    assert text[-1].startswith("recommended leader: a/t-0: loses 0 offsets acknowledged")


def test_identical_replicas_exit_0_and_nothing_is_written(tmp_path, monkeypatch):
    for name in ("x", "y"):
        replica(tmp_path, name, {0: [b(0, 5, 0), b(5, 5, 1)]}, [(0, 0), (1, 5)])
    monkeypatch.chdir(tmp_path)
    before = {k: (size, mtime, data) for k, (size, mtime, _, data) in tree(tmp_path).items()}
    for path in tmp_path.rglob("*"):  # access times in 2001: any ordinary read would move them to now
        os.utime(path, ns=(OLD * 10**9, path.stat().st_mtime_ns))
    result = run("x/t-0", "y/t-0")
    assert result.exit_code == 0, result.output
    assert "x/t-0 vs y/t-0: identical" in result.stdout.splitlines()
    atimes = {str(p.relative_to(tmp_path)): p.stat().st_atime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert set(atimes.values()) == {OLD * 10**9}  # read-only, and O_NOATIME: no access time moved
    assert {k: (size, mtime, data) for k, (size, mtime, _, data) in tree(tmp_path).items()} == before


def test_log_directories_with_partition(tmp_path, monkeypatch):
    for name in ("x", "y"):
        replica(tmp_path, name, {0: [b(0, 5, 0)]}, [(0, 0)])
    monkeypatch.chdir(tmp_path)
    result = run("--partition", "t-0", "--format", "json", "x", "y")
    assert result.exit_code == 0, result.output
    assert [o["path"] for o in lines(result) if o["type"] == "replica"] == ["x", "y"]


def test_kinds_of_divergence(tmp_path, monkeypatch):
    """Same records in other batches; a batch whose header outside the CRC differs (its leader epoch)."""
    replica(tmp_path, "x", {0: [b(0, 5, 0), b(5, 5, 0), b(10, 2, 0)]}, [(0, 0)])
    replica(tmp_path, "y", {0: [b(0, 10, 0)[:0] + _rebatched(), b(10, 2, 7)]}, [(0, 0), (7, 10)])
    monkeypatch.chdir(tmp_path)
    out = [o for o in lines(run("--format", "json", "x/t-0", "y/t-0")) if o["type"] == "divergence"]
    assert [(o["first"], o["last"], o["kind"], o["batches_a"], o["batches_b"]) for o in out] == [
        (0, 9, "same records, different batching", 2, 1),
        (10, 11, "same records, other leader epoch", 1, 1),
    ]


def _rebatched() -> bytes:
    """Offsets 0..9 with the records of b(0, 5, 0) + b(5, 5, 0), in one batch."""
    from kseg.format import encode_batch
    from kseg.format.model import RecordSpec

    records = [RecordSpec(i, 1_700_000_000_000 + i, b"k", b"v" * 10) for i in range(10)]
    return encode_batch(records, partition_leader_epoch=0)


def test_epoch_lineage_disagreement_is_flagged(tmp_path, monkeypatch):
    replica(tmp_path, "x", {0: [b(0, 5, 0), b(5, 5, 2)]}, [(0, 0)])  # the checkpoint lost epoch 2
    replica(tmp_path, "y", {0: [b(0, 5, 0), b(5, 5, 2)]}, [(0, 0), (2, 5)])
    monkeypatch.chdir(tmp_path)
    x = lines(run("--format", "json", "x/t-0", "y/t-0"))[0]
    assert x["epochs"] == [[0, 0]] and x["batch_epochs"] == [[0, 0], [2, 5]]
    assert x["epoch_disagreements"] == ["epoch 2 starts at offset 5 in the batches but is not in leader-epoch-checkpoint"]


def test_groups_whose_committed_offset_is_taken_away(unclean, tmp_path):
    """With the commit's leader epoch: the consumer's validation (endOffsetFor on the leader); without: the range."""
    consumer_offsets(tmp_path / "b", [("early", 9, 0), ("on-a", 14, 1), ("on-b", 18, 2), ("old", 13, None)])
    consumer_offsets(tmp_path / "a", [("early", 9, 0), ("on-a", 14, 1)])
    out = [o for o in lines(run("--format", "json", *unclean)) if o["type"] == "group"]
    got = {(o["leader"], o["group"]): o["consequence"] for o in out}

    def moved(epoch: int, end: int, committed: int) -> str:
        return (f"truncation detected: epoch {epoch} ends at {end} on this leader, below the committed {committed}: "
                f"the consumer moves back to {end} and re-reads other records there "
                "(LogTruncationException with auto.offset.reset=none)")

    out_of_range = "committed offset above the leader's log end: out of range, reset by auto.offset.reset"
    may = ("last consumed offset in a range a follower throws away: the group may have read records this "
           "leader does not hold (LogTruncationException where its position's epoch is validated, KIP-320)")
    assert len(out) == len(got) == 7  # a commit found on two disks is one line
    assert got == {
        ("a/t-0", "on-b"): moved(2, 15, 18),
        ("a/t-0", "old"): may,  # no epoch in the commit: 12 was read from a or from b, which throws it away
        ("b/t-0", "on-a"): moved(1, 12, 14),
        ("b/t-0", "old"): may,
        ("c/t-0", "on-a"): moved(1, 10, 14),
        ("c/t-0", "on-b"): moved(2, 10, 18),
        ("c/t-0", "old"): out_of_range,
    }
    assert {o["group"]: o["sources"] for o in out if o["leader"] == "c/t-0"} == {
        "on-a": ["a/__consumer_offsets-0", "b/__consumer_offsets-0"], "on-b": ["b/__consumer_offsets-0"], "old": ["b/__consumer_offsets-0"]}
    assert lines(run("--format", "json", *unclean))[-1]["leader"] == "a/t-0"


def test_export_unique_writes_the_batches_byte_for_byte(unclean, tmp_path):
    result = run("--format", "json", "--export-unique", "salvage", *unclean)
    assert result.exit_code == 1, result.output
    exports = [o for o in lines(result) if o["type"] == "export"]
    assert [(o["replica"], o["offsets"], o["batches"], o["segments"]) for o in exports] == [
        ("a/t-0", [[12, 14]], 1, ["00000000000000000012.log"]),
        ("b/t-0", [[12, 19]], 1, ["00000000000000000012.log"]),
    ]
    a_log = (tmp_path / "a/t-0/00000000000000000000.log").read_bytes()
    assert (tmp_path / "salvage/replica-0/t-0/00000000000000000012.log").read_bytes() == a_log[-len(b(12, 3, 1)):]
    dumped = CliRunner().invoke(cli, ["dump", "salvage/replica-1/t-0/00000000000000000012.log"], env=ENV)
    assert dumped.exit_code == 0 and "baseOffset: 12 lastOffset: 19" in dumped.stdout
    again = run("--export-unique", "salvage", *unclean)
    assert again.exit_code == 2 and "the export directory exists" in again.stderr


def test_usage_errors_exit_2(unclean, tmp_path):
    assert run(unclean[0]).exit_code == 2
    (tmp_path / "notes").mkdir()
    assert run(unclean[0], "notes").exit_code == 2
    replica(tmp_path, "other", {0: [b(0, 1, 0)]}, [(0, 0)])
    (tmp_path / "other/t-0").rename(tmp_path / "other/u-0")
    wrong = run(unclean[0], "other/u-0")
    assert (wrong.exit_code, wrong.stdout) == (2, "")
    assert "the replicas are of different partitions: t-0, u-0" in wrong.stderr


def test_a_replica_kafka_cannot_load_is_shown_and_left_out(unclean, tmp_path):
    (tmp_path / "c/t-0/leader-epoch-checkpoint").write_text("0\n1\nnot-an-epoch 0\n")
    out = lines(run("--format", "json", *unclean))
    c = next(o for o in out if o["type"] == "replica" and o["path"] == "c/t-0")
    assert c["error"] == ("java.lang.NumberFormatException: For input string: \"not-an-epoch\""), c
    assert all("c/t-0" not in (o.get("leader"), o.get("follower")) for o in out if o["type"] == "truncation")
    assert [c["leader"] for c in out[-1]["choices"]] == ["a/t-0", "b/t-0"]


def test_a_log_directory_without_the_partition_is_a_usage_error(unclean):
    result = run("--partition", "t-9", "a", "b")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("kseg: error: a/t-9: not a partition directory (topic-partition); "
                             "give a log directory with --partition T-P\n")


def test_a_file_named_as_a_replica_is_one_usage_line(unclean, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a replica")
    result = run(unclean[0], "notes.txt")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("kseg: error: ") and "notes.txt" in result.stderr and result.stderr.count("\n") == 1


def test_a_follower_below_the_leaders_log_start_starts_over(tmp_path, monkeypatch):
    replica(tmp_path, "old", {0: [b(0, 5, 0), b(5, 5, 0)]}, [(0, 0)], hw=10)
    new = replica(tmp_path, "new", {20: [b(20, 5, 1)]}, [(1, 20)])
    (new.parent / "log-start-offset-checkpoint").write_text("0\n1\nt 0 20\n")
    monkeypatch.chdir(tmp_path)
    text = run("old/t-0", "new/t-0").stdout.splitlines()
    assert ("leader new/t-0: old/t-0 starts over at 20 (truncateFullyAndStartAt), loses 0..9 "
            "(10 below its high watermark 10)") in text

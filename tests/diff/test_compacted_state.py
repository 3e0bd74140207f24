"""Compacted replicas and transactions: what read_committed consumers read from each, compared (docs/diff.md §4)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from diff_replicas import replica

from kseg.cli import cli
from kseg.format import encode_batch
from kseg.format.model import RecordSpec

T0 = 1_700_000_000_000
PID = 4000


def keyed(records: list[tuple[int, bytes, bytes | None]], **kw: object) -> bytes:
    return encode_batch([RecordSpec(o, T0 + o, k, v) for o, k, v in records], partition_leader_epoch=0, **kw)  # type: ignore[arg-type]


def marker(offset: int, commit: bool) -> bytes:
    """An end-transaction control batch (COMMIT or ABORT) for producer PID."""
    key = (0).to_bytes(2, "big") + (1 if commit else 0).to_bytes(2, "big")
    value = (0).to_bytes(2, "big") + (0).to_bytes(4, "big")
    return encode_batch([RecordSpec(offset, T0 + offset, key, value)], producer_id=PID, producer_epoch=0,
                        is_transactional=True, is_control=True, partition_leader_epoch=0)


#: k0..k3 written, k0 and k2 overwritten, k1 deleted by a tombstone at 6
FULL = [keyed([(0, b"k0", b"v0"), (1, b"k1", b"v1"), (2, b"k2", b"v2"), (3, b"k3", b"v3")]),
        keyed([(4, b"k0", b"w0"), (5, b"k2", b"w2")]), keyed([(6, b"k1", None)])]
#: the same log after compaction and the tombstone's removal: one batch per kept record
CLEANED = [keyed([(3, b"k3", b"v3")]), keyed([(4, b"k0", b"w0"), (5, b"k2", b"w2")])]
#: compaction that removed the tombstone before this replica had it: k1's old value reappears
REAPPEARS = [keyed([(1, b"k1", b"v1")]), keyed([(3, b"k3", b"v3")]), keyed([(4, b"k0", b"w0"), (5, b"k2", b"w2")])]


def run(*args: str) -> list[dict]:
    result = CliRunner().invoke(cli, ["diff", "--format", "json", *args])
    assert result.exit_code == 1, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_independent_compaction_reads_the_same(tmp_path, monkeypatch):
    replica(tmp_path, "full", {0: FULL}, [(0, 0)])
    replica(tmp_path, "cleaned", {0: CLEANED}, [(0, 0)])
    monkeypatch.chdir(tmp_path)
    out = run("full/t-0", "cleaned/t-0")
    assert [(o["first"], o["last"], o["kind"]) for o in out if o["type"] == "divergence"] == [
        (0, 3, "different records"), (6, 6, "only on full/t-0")]
    assert [o for o in out if o["type"] == "keys"] == [
        {"type": "keys", "a": "full/t-0", "b": "cleaned/t-0", "keys": 3, "differing_keys": 0, "examples": []}]


def test_a_removed_tombstone_that_lets_deleted_data_reappear(tmp_path, monkeypatch):
    replica(tmp_path, "full", {0: FULL}, [(0, 0)])
    replica(tmp_path, "lagging", {0: REAPPEARS}, [(0, 0)])
    monkeypatch.chdir(tmp_path)
    keys = [o for o in run("full/t-0", "lagging/t-0") if o["type"] == "keys"]
    assert keys == [{"type": "keys", "a": "full/t-0", "b": "lagging/t-0", "keys": 4, "differing_keys": 1,
                     "examples": [{"key": "k1", "a": "tombstone at 6", "b": "value at 1"}]}]


def test_a_lost_commit_marker_and_the_values_it_hid(tmp_path, monkeypatch):
    txn = keyed([(0, b"a", b"1"), (1, b"b", b"2")], producer_id=PID, producer_epoch=0, base_sequence=0,
                is_transactional=True)
    replica(tmp_path, "x", {0: [txn, marker(2, commit=True)]}, [(0, 0)])
    replica(tmp_path, "y", {0: [txn]}, [(0, 0)])
    monkeypatch.chdir(tmp_path)
    out = run("x/t-0", "y/t-0")
    assert [o for o in out if o["type"] == "transaction"] == [
        {"type": "transaction", "a": "x/t-0", "b": "y/t-0", "producer_id": PID, "first_offset": 0,
         "outcome_a": "committed at 2", "outcome_b": "open"}]
    keys = next(o for o in out if o["type"] == "keys")
    assert (keys["keys"], keys["differing_keys"]) == (2, 2)  # y's consumers stop at the open transaction


def test_the_text_hands_a_lost_marker_to_kseg_txn(tmp_path, monkeypatch):
    txn = keyed([(0, b"a", b"1")], producer_id=PID, producer_epoch=0, base_sequence=0, is_transactional=True)
    replica(tmp_path, "x", {0: [txn, marker(1, commit=False)]}, [(0, 0)])
    replica(tmp_path, "y", {0: [txn]}, [(0, 0)])
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["diff", "x/t-0", "y/t-0"])
    assert (f"x/t-0 vs y/t-0: transaction of producer {PID} from offset 0: aborted at 1 vs open; "
            "its marker is missing: kseg txn y/t-0") in result.stdout.splitlines()


def test_a_transactional_control_batch_of_another_type_is_no_marker_and_no_traceback(tmp_path, monkeypatch):
    """A LEADER_CHANGE record in a transactional control batch: Kafka's reading throws (IllegalArgumentException:
    Invalid control record type for end transaction marker); diff compares on, the batch counted as no marker."""
    key = (0).to_bytes(2, "big") + (2).to_bytes(2, "big")  # LEADER_CHANGE
    odd = encode_batch([RecordSpec(2, T0 + 2, key, b"\x00\x00")], producer_id=PID, producer_epoch=0,
                       is_transactional=True, is_control=True, partition_leader_epoch=0)
    txn = keyed([(0, b"k0", b"v0"), (1, b"k1", b"v1")], producer_id=PID, producer_epoch=0, base_sequence=0,
                is_transactional=True)
    replica(tmp_path, "a", {0: [txn, odd]}, [(0, 0)])
    replica(tmp_path, "b", {0: [txn]}, [(0, 0)])
    monkeypatch.chdir(tmp_path)
    out = run("a/t-0", "b/t-0")
    assert [(o["first"], o["last"], o["kind"]) for o in out if o["type"] == "divergence"] == [
        (2, 2, "only on a/t-0")]

"""``kseg txn`` end to end on fixtures/txn/logs (see fixtures/txn/PROVENANCE.md and tests/ops/test_txn.py).

The expected screens were read line by line against the cases: each LSO, aborted range and verdict is
derived from Kafka's rules in tests/ops/test_txn.py.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support import FIXTURES, IN_CI

from kseg.cli import cli

LOGS = FIXTURES / "txn" / "logs"
ENV = {"NO_COLOR": "1", "COLUMNS": "100"}
OLD = 978307200  # 2001-01-01T00:00:00Z


@pytest.fixture(autouse=True)
def in_fixture_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(LOGS.parent)  # paths print as logs/<partition>


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["txn", "--now", "newest", *args], env=ENV)


TEXT = "kseg txn: 8 partitions, 5 with problems; 12 transactions (4 committed, 4 aborted, 1 open, 3 hanging); 2 stuck groups\ntransaction max timeout 900000 ms, measured against each partition's newest timestamp; __transaction_state: 1 partition, __consumer_offsets: 1 partition\n\nPROBLEM logs/fenced-0: LSO 6, first unstable 6, high watermark 9 (replication-offset-checkpoint), log end 9, newest timestamp 1700002000000; 2 producers, 1 committed, 1 aborted, 1 hanging\n  LSO 6 below the high watermark 9: read_committed consumers stop at 6, 3 offsets held back by the transaction from 6\n  hanging producer 5001 epoch 0 offsets 6-7, idle 2000000 ms: transactional id 'fencer' is CompleteAbort at epoch 1: this producer (epoch 0) was fenced and its marker never reached this partition\n  $ kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic fenced --partition 0 --start-offset 6\n  aborting it unblocks: the LSO moves from 6 to 10: read_committed consumers get 3 more offsets\n  aborted ranges (.txnindex): producer 5000 0-2 LSO 3\n\nPROBLEM logs/orders-1: LSO 0, first unstable 0, high watermark 10 (replication-offset-checkpoint), log end 10, newest timestamp 1700001000000; 1 producer, 1 hanging\n  LSO 0 below the high watermark 10: read_committed consumers stop at 0, 10 offsets held back by the transaction from 0\n  hanging producer 3001 epoch 2 offsets 0-2, idle 1000000 ms: transactional id 'orders-committer' is CompleteCommit: the coordinator completed it without a marker here\n  $ kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic orders --partition 1 --start-offset 0\n  aborting it unblocks: the LSO moves from 0 to 11: read_committed consumers get 10 more offsets; the groups stuck at the LSO: 'billing'\n  stuck group 'billing': committed offset 0 at the LSO, 10 behind the log end\n\nPROBLEM logs/snapdiff-0: LSO 0, first unstable 0, high watermark 4 (replication-offset-checkpoint), log end 4, newest timestamp 1700001000000; 1 producer, 1 hanging\n  LSO 0 below the high watermark 4: read_committed consumers stop at 0, 4 offsets held back by the transaction from 0\n  hanging producer 6000 epoch 0 offsets 0-1, COMMIT at 2, idle 1000000 ms: the log has its COMMIT at 2, but the producer state the broker loads (its snapshot) still holds it open; the coordinator has no transactional id for producer 6000 (forgotten or expired)\n  $ kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic snapdiff --partition 0 --start-offset 0\n  aborting it unblocks: the LSO moves from 0 to 5: read_committed consumers get 4 more offsets\n  producer state loads from 00000000000000000003.snapshot\n  snapshot disagrees: 00000000000000000003.snapshot: producer 6000 last_timestamp 1700000000000 in the snapshot, 1700000000001 from the log\n  snapshot disagrees: 00000000000000000003.snapshot: producer 6000 coordinator_epoch -1 in the snapshot, 0 from the log\n  snapshot disagrees: 00000000000000000003.snapshot: producer 6000 current_txn_first_offset 0 in the snapshot, -1 from the log\n\nPROBLEM logs/events-0: LSO 2, first unstable 2, high watermark 7 (replication-offset-checkpoint), log end 9, newest timestamp 1700000000005; 2 producers, 1 committed, 1 aborted\n  LSO 2 below the high watermark 7: read_committed consumers stop at 2, 5 offsets held back by the transaction from 2\n  producer state loads from 00000000000000000007.snapshot\n  note: the ABORT at 7 of producer 4001's transaction from 2 is not below the high watermark 7: the LSO stays at 2 until the high watermark passes 7 (ProducerStateManager.removeUnreplicatedTransactions)\n  aborted ranges (.txnindex): producer 4001 2-7 LSO 8\n\nPROBLEM logs/orders-0: LSO 0, first unstable 0, high watermark 4 (replication-offset-checkpoint), log end 4, newest timestamp 1700000060000; 1 producer, 1 open\n  LSO 0 below the high watermark 4: read_committed consumers stop at 0, 4 offsets held back by the transaction from 0\n  open producer 3000 epoch 0 offsets 0-1, idle 60000 ms: transactional id 'orders-writer' is Ongoing with this partition: the coordinator will still write the marker\n  stuck group 'billing': committed offset 0 at the LSO, 4 behind the log end\n\nok logs/__consumer_offsets-0: LSO 7, high watermark 7 (replication-offset-checkpoint), log end 7, newest timestamp 1700000000031; 2 producers, 1 committed, 1 aborted\nok logs/__transaction_state-0: LSO 4, high watermark 4 (replication-offset-checkpoint), log end 4, newest timestamp 1700000000500; 0 producers, no transactions\nok logs/payments-0: LSO 8, high watermark 8 (replication-offset-checkpoint), log end 8, newest timestamp 1700000000040; 3 producers, 1 committed, 1 aborted\nverdict: error: the broker starts; not served (renamed -stray) (8 partitions)\n"

TABLE = "kseg txn: 3 partitions, 1 with problems; 3 transactions (1 committed, 1 aborted, 1 hanging); 1 stuck\ngroup\ntransaction max timeout 900000 ms, measured against each partition's newest timestamp;\n__transaction_state: 1 partition, __consumer_offsets: 1 partition\n                                                   hanging transactions, stuck groups, snapshot;\npartition                   LSO  log end  c/a/o/h  what to run\n────────────────────────────────────────────────────────────────────────────────────────────────────\nlogs/orders-1                 0       10  0/0/0/1  LSO 0 below the high watermark 10: read_committed\n                                                   consumers stop at 0, 10 offsets held back by the\n                                                   transaction from 0\n                                                   hanging producer 3001 epoch 2 offsets 0-2, idle\n                                                   1000000 ms: transactional id 'orders-committer'\n                                                   is CompleteCommit: the coordinator completed it\n                                                   without a marker here\n                                                   $ kafka-transactions.sh --bootstrap-server\n                                                   BROKER:9092 abort --topic orders --partition 1\n                                                   --start-offset 0\n                                                   aborting it unblocks: the LSO moves from 0 to 11:\n                                                   read_committed consumers get 10 more offsets; the\n                                                   groups stuck at the LSO: 'billing'\n                                                   stuck group 'billing': committed offset 0 at the\n                                                   LSO, 10 behind the log end\nlogs/__consumer_offsets-0     7        7  1/1/0/0\nlogs/__transaction_state-0    4        4  0/0/0/0\nverdict: error: the broker starts; not served (renamed -stray) (3 partitions)\n"


def test_text_lists_problem_partitions_first_with_the_abort_commands():
    result = run("logs")
    assert result.exit_code == 1
    assert result.stdout == TEXT


def test_table_at_a_fixed_width():
    result = run("--format", "table", "logs/orders-1", "logs/__transaction_state-0", "logs/__consumer_offsets-0")
    assert result.exit_code == 1
    assert result.stdout == TABLE


def test_json_lines():
    result = run("--format", "json", "logs/orders-1", "logs/__transaction_state-0", "logs/__consumer_offsets-0")
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["type"] for line in lines] == ['partition', 'producer', 'transaction', 'group', 'group', 'partition', 'producer', 'producer', 'transaction', 'transaction', 'partition', 'summary']
    assert lines[0] == {'type': 'partition', 'path': 'logs/orders-1', 'topic': 'orders', 'partition': 1, 'log_start_offset': 0, 'log_end_offset': 10, 'high_watermark': 10, 'high_watermark_from': 'replication-offset-checkpoint', 'first_unstable_offset': 0, 'last_stable_offset': 0, 'newest_timestamp': 1700001000000, 'snapshot': None, 'producers': 1, 'open_transactions': 1, 'hanging': 1, 'aborted': [], 'snapshot_disagreements': [], 'error': None, 'notes': [], 'high_watermark_checkpoint': 10, 'problem': True, 'findings': ['LSO 0 below the high watermark 10: read_committed consumers stop at 0, 10 offsets held back by the transaction from 0']}
    assert lines[1] == {'type': 'producer', 'path': 'logs/orders-1', 'topic': 'orders', 'partition': 1, 'producer_id': 3001, 'producer_epoch': 2, 'last_sequence': 2, 'last_offset': 2, 'last_timestamp': 1700000000000, 'coordinator_epoch': -1, 'current_txn_first_offset': 0}
    assert lines[2] == {'type': 'transaction', 'path': 'logs/orders-1', 'topic': 'orders', 'partition': 1, 'producer_id': 3001, 'producer_epoch': 2, 'first_offset': 0, 'last_offset': 2, 'state': 'hanging', 'end_offset': None, 'first_timestamp': 1700000000000, 'last_timestamp': 1700000000000, 'from_snapshot': False, 'idle_ms': 1000000, 'why': "transactional id 'orders-committer' is CompleteCommit: the coordinator completed it without a marker here", 'coordinator': {'transactional_id': 'orders-committer', 'producer_id': 3001, 'producer_epoch': 2, 'state': 'CompleteCommit', 'partitions': [], 'last_update_ms': 1700000000500, 'timeout_ms': 60000, 'source': 'logs/__transaction_state-0/00000000000000000000.log offset 2'}, 'abort_command': 'kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic orders --partition 1 --start-offset 0', 'unblocks': "the LSO moves from 0 to 11: read_committed consumers get 10 more offsets; the groups stuck at the LSO: 'billing'", 'last_stable_offset_after_abort': 11, 'marker_cut': None, 'unseen_by_broker': False}
    assert lines[3:5] == [{'type': 'group', 'group': 'audit', 'topic': 'orders', 'partition': 1, 'committed_offset': 10, 'stuck': False, 'behind': 0}, {'type': 'group', 'group': 'billing', 'topic': 'orders', 'partition': 1, 'committed_offset': 0, 'stuck': True, 'behind': 10}]
    assert lines[-1].pop("verdict")["exit_code"] == 1  # no partition.metadata: each is renamed -stray (R1.5)
    assert lines[-1] == {'type': 'summary', 'partitions': 3, 'problem_partitions': 1, 'transactions': {'committed': 1, 'aborted': 1, 'open': 0, 'hanging': 1}, 'stuck_groups': 1, 'transaction_state_partitions': 1, 'consumer_offsets_partitions': 1, 'coordinator_damaged': [], 'transaction_max_timeout_ms': 900000, 'now_ms': None, 'exit_code': 1}


def test_the_issue_s_json_fields_are_present():
    lines = [json.loads(line) for line in run("--format", "json", "logs").stdout.splitlines()]
    required = {
        "partition": {"type", "path", "topic", "partition", "log_end_offset", "last_stable_offset"},
        "producer": {"type", "path", "producer_id", "producer_epoch", "last_sequence", "last_offset",
                     "last_timestamp", "coordinator_epoch"},
        "transaction": {"type", "path", "producer_id", "producer_epoch", "first_offset", "last_offset", "state",
                        "end_offset"},
        "group": {"type", "group", "topic", "partition", "committed_offset", "stuck", "behind"},
    }
    for line in lines[:-1]:
        assert required[line["type"]] <= set(line), line
    assert {line["state"] for line in lines if line["type"] == "transaction"} == {
        "committed", "aborted", "open", "hanging"}


@pytest.mark.parametrize(("args", "code"), [
    (["logs/payments-0", "logs/events-0"], 0),  # no transaction past its timeout
    (["logs/orders-1"], 1),  # hanging
    (["--transaction-max-timeout-ms", "1000000", "logs/orders-1"], 0),  # 1000000 ms idle is not > 1000000
    (["--transaction-max-timeout-ms", "999999", "logs/orders-1"], 1),
])
def test_exit_codes(args, code, tmp_path, monkeypatch):
    """Hanging transactions alone decide: a copy whose partitions have partition.metadata (the fixture's have
    none, so the log directory above them renames each -stray and every run exits 1 on that verdict)."""
    shutil.copytree(LOGS, tmp_path / "logs")
    for part in (tmp_path / "logs").iterdir():
        if part.is_dir():
            (part / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ")
    monkeypatch.chdir(tmp_path)
    assert run(*args).exit_code == code
    assert run(*[a.replace("logs/", str(LOGS) + "/") for a in args]).exit_code == 1  # the fixture: not served


def test_bootstrap_server_goes_into_the_command():
    result = run("--bootstrap-server", "kafka-1:9092", "--format", "json", "logs/orders-1")
    txn = next(json.loads(line) for line in result.stdout.splitlines() if '"transaction"' in line)
    assert txn["abort_command"] == ("kafka-transactions.sh --bootstrap-server kafka-1:9092 abort --topic orders "
                                    "--partition 1 --start-offset 0")


@pytest.mark.parametrize(("args", "message"), [
    (["logs/orders-1/00000000000000000000.log"],
     "kseg: error: logs/orders-1/00000000000000000000.log: kseg txn takes log directories or partition directories "
     "(see 'kseg txn --help')\n"),
    (["logs/missing-0"], "kseg: error: Invalid value for 'PATHS...': Path 'logs/missing-0' does not exist. "
                         "(see 'kseg txn --help')\n"),
    (["--format", "yaml", "logs"], "kseg: error: Invalid value for '--format': 'yaml' is not one of 'text', "
                                   "'json', 'table'. (see 'kseg txn --help')\n"),
    (["--transaction-max-timeout-ms", "-1", "logs"],
     "kseg: error: Invalid value for '--transaction-max-timeout-ms': -1 is not in the range x>=0. "
     "(see 'kseg txn --help')\n"),
])
def test_usage_errors_are_one_line_and_exit_2(args, message):
    result = run(*args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)


def test_progress_never_reaches_stdout():
    result = run("--progress", "--format", "json", "logs/payments-0")
    assert result.exit_code == 1  # not served: no partition.metadata (R1.5)
    assert [json.loads(line)["type"] for line in result.stdout.splitlines()] == [
        "partition", "producer", "producer", "producer", "transaction", "transaction", "summary"]


def _require_atime_updates(tmp_path: Path) -> None:
    control = tmp_path / "control"
    control.write_bytes(b"x" * 4096)
    os.utime(control, ns=(OLD * 10**9, control.stat().st_mtime_ns))
    before = control.stat().st_atime_ns
    with open(control, "rb") as plain:
        plain.read()
    if control.stat().st_atime_ns == before:
        if IN_CI:
            pytest.fail("this file system does not update access times: the O_NOATIME test cannot run")
        pytest.skip("this file system does not update access times (noatime mount)")


def test_reads_only_creates_nothing_and_leaves_access_times_alone(tmp_path):
    _require_atime_updates(tmp_path)
    logs = tmp_path / "logs"
    shutil.copytree(LOGS, logs)
    for path in logs.rglob("*"):
        os.utime(path, ns=(OLD * 10**9, path.stat().st_mtime_ns))
    before = {p: (p.stat().st_atime_ns, p.stat().st_mtime_ns, p.stat().st_size) for p in logs.rglob("*")
              if p.is_file()}
    for fmt in ("text", "table", "json"):
        assert CliRunner().invoke(cli, ["txn", "--now", "newest", "--format", fmt, str(logs)], env=ENV).exit_code == 1
    assert CliRunner().invoke(cli, ["txn", "--now", "newest", str(logs / "events-0")], env=ENV).exit_code == 1
    after = {p: (p.stat().st_atime_ns, p.stat().st_mtime_ns, p.stat().st_size) for p in logs.rglob("*")
             if p.is_file()}
    assert after == before


def test_the_example_in_docs_txn_is_the_real_output():
    doc = (FIXTURES.parent / "docs" / "txn.md").read_text()
    example = doc.split("$ kseg txn --now newest logs\n", 1)[1].split("$ echo $?\n1\n", 1)[0]
    assert example == TEXT

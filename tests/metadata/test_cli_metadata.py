"""``kseg metadata`` on the real broker fixture (fixtures/broker, PROVENANCE.md there): exact output and exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner, Result
from support import FIXTURES

from kseg.cli import cli

BROKER = FIXTURES / "broker" / "restarted-clean"
META = BROKER / "__cluster_metadata-0"


def _run(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], env={"NO_COLOR": "1", "COLUMNS": "100"})


def test_show_json_at_an_offset_mid_batch() -> None:
    result = _run("metadata", BROKER, "--at", "16", "--format", "json")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [e["type"] for e in lines] == ["feature"] * 6 + ["broker", "controller", "topic", "partition", "config",
                                                             "config", "summary"]
    assert lines[8] == {"type": "topic", "name": "orders", "topic_id": "FZCeopPwTTWtmO51cFtifA", "partitions": 1}
    assert lines[9] == {"type": "partition", "topic": "orders", "partition": 0, "replicas": [1], "isr": [1],
                        "elr": [], "last_known_elr": [], "leader": 1, "leader_epoch": 0, "partition_epoch": 0,
                        "directories": ["f4MmpvGorB2MzPx_LyZfLA"], "removing_replicas": [], "adding_replicas": [],
                        "leader_recovery_state": 0}
    assert lines[10] == {"type": "config", "resource_type": "topic", "resource": "orders",
                         "key": "internal.segment.bytes", "value": "1024"}
    assert lines[6]["fenced"] is False and lines[6]["epoch"] == 11
    assert lines[-1] == {"type": "summary", "path": str(META), "offset": 16, "timestamp": 1795738601947,
                         "time": "2026-11-27T00:16:41.947Z", "snapshot": None, "log_records": 14,
                         "open_transaction": None, "topics": 1, "partitions": 1, "brokers": 1, "findings": 0}


def test_show_text_at_the_end_starts_from_the_newest_snapshot() -> None:
    result = _run("metadata", BROKER)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert "  orders-1  leader -1  leader_epoch 3  replicas [1]  isr []  elr [1]  last-known-elr [1]  " \
           "partition_epoch 4" in lines
    assert "broker 1  epoch 52  fenced, in controlled shutdown  log_dirs [f4MmpvGorB2MzPx_LyZfLA]" in lines
    assert lines[-1] == ("image at offset 75 (2026-11-27T00:17:18.018Z): 5 topics, 6 partitions, 1 brokers; "
                         "from snapshot 00000000000000000075-0000000002.checkpoint + 1 log records; 0 findings")


def test_at_a_time_uses_the_snapshot_header_and_batch_times() -> None:
    by_iso = _run("metadata", BROKER, "--at", "2026-11-27T00:16:42Z").output.splitlines()[-1]
    by_ms = _run("metadata", BROKER, "--at", "1795738602000ms").output.splitlines()[-1]
    assert by_iso == by_ms == ("image at offset 17 (2026-11-27T00:16:41.947Z): 1 topics, 2 partitions, 1 brokers; "
                               "from snapshot 00000000000000000018-0000000001.checkpoint + 0 log records; 0 findings")


def test_options_before_the_directory_show_the_same() -> None:
    after = _run("metadata", BROKER, "--at", "16", "--format", "json")
    before = _run("metadata", "--at", "16", "--format", "json", BROKER)
    mixed = _run("metadata", "--format", "json", BROKER, "--at", "16")
    joined = _run("metadata", "--at=16", "--format=json", BROKER)
    assert after.exit_code == before.exit_code == mixed.exit_code == joined.exit_code == 0
    assert before.output == after.output == mixed.output == joined.output
    assert json.loads(before.output.splitlines()[-1])["offset"] == 16


def test_a_bare_number_is_an_offset_and_a_13_digit_one_is_refused() -> None:
    assert json.loads(_run("metadata", "--format", "json", "--at", "000016", BROKER).output.splitlines()[-1])[
        "offset"] == 16
    refused = _run("metadata", "--at", "1795738602000", BROKER)
    assert refused.exit_code == 2
    assert refused.output == ("kseg: error: --at '1795738602000': a bare number is an offset, and no metadata log "
                              "reaches this one; for epoch milliseconds write 1795738602000ms\n")
    bad = _run("metadata", "--at", "noon", BROKER)
    assert (bad.exit_code, bad.output) == (2, "kseg: error: --at 'noon': not an offset (1234), epoch milliseconds "
                                              "(1795738601947ms) or an ISO-8601 time (2026-11-27T09:00:00Z)\n")
    assert _run("metadata", "--at", "1795738602000ms", BROKER).output.splitlines()[-1].startswith(
        "image at offset 17 (2026-11-27T00:16:41.947Z)")


def test_history_of_a_partition_is_its_isr_and_leader_timeline() -> None:
    result = _run("metadata", "history", BROKER, "--partition", "orders-0")
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "2026-11-27T00:16:41.947Z  offset 16  PARTITION_RECORD  created: orders-0  leader 1  leader_epoch 0  "
        "replicas [1]  isr [1]  partition_epoch 0",
        "2026-11-27T00:17:11.415Z  offset 46  PARTITION_CHANGE_RECORD  orders-0: isr [1] -> []  elr [] -> [1]  "
        "last_known_elr [] -> [1]  leader 1 -> -1  leader_epoch 0 -> 1  partition_epoch 0 -> 1",
        "2026-11-27T00:17:11.726Z  offset 53  PARTITION_CHANGE_RECORD  orders-0: elr [1] -> []  "
        "partition_epoch 1 -> 2",
        "2026-11-27T00:17:14.192Z  offset 62  PARTITION_CHANGE_RECORD  orders-0: isr [] -> [1]  "
        "last_known_elr [1] -> []  leader -1 -> 1  leader_epoch 1 -> 2  partition_epoch 2 -> 3  "
        "leader_recovery_state 0 -> 1",
        "2026-11-27T00:17:17.868Z  offset 70  PARTITION_CHANGE_RECORD  orders-0: isr [1] -> []  elr [] -> [1]  "
        "last_known_elr [] -> [1]  leader 1 -> -1  leader_epoch 2 -> 3  partition_epoch 3 -> 4",
        "partition orders-0: 5 changes from the log's first record to offset 75 (2026-11-27T00:17:18.018Z); "
        "0 findings",
    ]


def test_history_of_a_config_key_json() -> None:
    result = _run("metadata", "history", BROKER, "--config", "internal.segment.bytes", "--format", "json")
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [(e["offset"], e["after"]["resource"]) for e in lines if e["type"] == "change"] == [
        (15, "orders"), (19, "payments"), (27, "compacted")]
    assert lines[-1]["changes"] == 3


def test_diff_between_two_offsets() -> None:
    result = _run("metadata", "diff", BROKER, "--at", "16", "--at", "17")
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "+ orders-1  leader 1  leader_epoch 0  replicas [1]  isr [1]  partition_epoch 0",
        "~ topic orders: partitions 1 -> 2",
        "2 differences between offset 16 (2026-11-27T00:16:41.947Z) and offset 17 (2026-11-27T00:16:41.947Z)",
    ]


def test_usage_and_refusals_exit_2(tmp_path: Path) -> None:
    assert _run("metadata", "history", BROKER).exit_code == 2
    assert _run("metadata", "diff", BROKER, "--at", "1").exit_code == 2
    refused = _run("metadata", tmp_path)
    assert refused.exit_code == 2
    assert f"{tmp_path}: no KRaft metadata log" in refused.output
    assert _run("metadata", BROKER, "--at", "yesterday").exit_code == 2


def test_a_damaged_batch_is_a_finding_and_the_log_ends_there(tmp_path: Path) -> None:
    copy = tmp_path / "__cluster_metadata-0"
    copy.mkdir()
    shutil.copy(META / "00000000000000000000.log", copy)
    data = bytearray((copy / "00000000000000000000.log").read_bytes())
    data[1196 + 70] ^= 0xFF  # inside the batch at byte 1196 (offsets 14-17: orders and its partitions)
    (copy / "00000000000000000000.log").write_bytes(bytes(data))
    result = _run("metadata", copy, "--format", "json")
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert lines[-2] == {"type": "finding", "file": str(copy / "00000000000000000000.log"), "byte": 1196,
                         "offset": 14, "reason": "damaged batch: CRC-32C does not match"}
    assert lines[-1]["offset"] == 13 and lines[-1]["topics"] == 0


def test_inside_the_bootstrap_transaction_nothing_of_it_is_visible() -> None:
    """Offsets 1-9 are the bootstrap metadata transaction (Begin, 6 features, a config, End)."""
    inside = [json.loads(line) for line in _run("metadata", BROKER, "--at", "5", "--format", "json").output.splitlines()]
    assert inside == [{"type": "summary", "path": str(META), "offset": -1, "timestamp": -1, "time": "-",
                       "snapshot": None, "log_records": 0, "open_transaction": 1, "topics": 0, "partitions": 0,
                       "brokers": 0, "findings": 0}]
    after = [json.loads(line) for line in _run("metadata", BROKER, "--at", "9", "--format", "json").output.splitlines()]
    assert [e["type"] for e in after] == ["feature"] * 6 + ["config", "summary"]
    assert after[-1]["offset"] == 9 and after[-1]["open_transaction"] is None


def test_history_of_a_broker_json_is_its_fencing_timeline() -> None:
    result = _run("metadata", "history", BROKER, "--broker", "1", "--format", "json")
    changes = [json.loads(line) for line in result.output.splitlines()][:-1]
    assert [(c["offset"], c["record"], c["change"]) for c in changes] == [
        (11, "REGISTER_BROKER_RECORD", "created"), (12, "BROKER_REGISTRATION_CHANGE_RECORD", "changed"),
        (13, "BROKER_REGISTRATION_CHANGE_RECORD", "changed"), (51, "BROKER_REGISTRATION_CHANGE_RECORD", "changed"),
        (58, "REGISTER_BROKER_RECORD", "changed"), (60, "BROKER_REGISTRATION_CHANGE_RECORD", "changed"),
        (67, "BROKER_REGISTRATION_CHANGE_RECORD", "changed"), (68, "BROKER_REGISTRATION_CHANGE_RECORD", "changed"),
        (75, "BROKER_REGISTRATION_CHANGE_RECORD", "changed")]
    assert [c["after"]["fenced"] for c in changes] == [True, True, False, True, True, False, False, False, True]
    assert changes[4]["before"]["epoch"] == 11 and changes[4]["after"]["epoch"] == 52


def test_diff_json_names_each_difference() -> None:
    result = _run("metadata", "diff", BROKER, "--at", "16", "--at", "17", "--format", "json")
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [(d["change"], (d["after"] or d["before"])["type"]) for d in lines[:-1]] == [
        ("added", "partition"), ("changed", "topic")]
    assert lines[-1] == {"type": "summary", "from_offset": 16, "from_timestamp": 1795738601947, "to_offset": 17,
                         "to_timestamp": 1795738601947, "differences": 2, "findings": 0}


def test_options_before_a_subcommand_are_its_own_or_refused_naming_the_order() -> None:
    after = _run("metadata", "history", BROKER, "--topic", "orders", "--format", "json")
    before = _run("metadata", "--format", "json", "history", BROKER, "--topic", "orders")
    joined = _run("metadata", "--format=json", "history", BROKER, "--topic", "orders")
    assert after.exit_code == before.exit_code == joined.exit_code == 0, before.output
    assert before.output == after.output == joined.output
    assert json.loads(before.output.splitlines()[-1])["changes"] == 14
    refused = _run("metadata", "--at", "5", "history", BROKER, "--topic", "orders")
    assert refused.exit_code == 2
    assert refused.output.splitlines() == [
        "kseg: error: --at is not an option of 'kseg metadata history'; the subcommand comes first: "
        "kseg metadata history ARGS [OPTIONS] (see 'kseg metadata --help')"]

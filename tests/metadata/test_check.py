"""``kseg metadata check`` on a copy of the real broker fixture (fixtures/broker/restarted-clean), made wrong
on purpose: a partition directory removed (missing), one the controller never heard of (stray), one whose
partition.metadata names another topic's id, and the log directory's directory.id changed (KIP-858)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli

BROKER = FIXTURES / "broker" / "restarted-clean"
ORDERS_ID = "FZCeopPwTTWtmO51cFtifA"


def _check(*args: object) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["metadata", "check", *map(str, args)])
    return result.exit_code, result.output.splitlines()


def test_the_fixture_as_the_broker_left_it_is_clean() -> None:
    assert _check(BROKER) == (0, ["broker 1: 6 partition directories against the image at offset 75 "
                                  "(2026-11-27T00:17:18.018Z); 0 findings"])


def test_missing_stray_and_topic_id_findings(tmp_path: Path) -> None:
    disk = tmp_path / "data"
    shutil.copytree(BROKER, disk)
    shutil.rmtree(disk / "orders-1")
    (disk / "ghost-0").mkdir()
    (disk / "ghost-0" / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAw\n")
    (disk / "payments-0" / "partition.metadata").write_text(f"version: 0\ntopic_id: {ORDERS_ID}\n")
    code, lines = _check(disk)
    assert code == 1
    assert lines == [
        f"stray: {disk}/ghost-0: the controller's image has no partition 0 of topic id AAAAAAAAAAAAAAAAAAAAAw: "
        "the broker renames it ghost-0.<uuid>-stray at its next start",
        f"topic-id: {disk}/payments-0: topic id {ORDERS_ID} is topic 'orders' in the image",
        f"topic-id: {disk}/payments-0: topic id {ORDERS_ID} is also in orders's directories",
        "missing: orders-1: assigned to broker 1 (replicas [1], topic id FZCeopPwTTWtmO51cFtifA) but no "
        "directory here",
        "missing: payments-0: assigned to broker 1 (replicas [1], topic id yj-myzL_QyO5SS7-vSM-kA) but no "
        "directory here",
        "broker 1: 6 partition directories against the image at offset 75 (2026-11-27T00:17:18.018Z); 5 findings",
    ]


def test_a_replica_the_image_puts_in_another_log_directory(tmp_path: Path) -> None:
    disk = tmp_path / "data"
    shutil.copytree(BROKER, disk)
    props = (disk / "meta.properties").read_text().replace("f4MmpvGorB2MzPx_LyZfLA", "yj-myzL_QyO5SS7-vSM-kA")
    (disk / "meta.properties").write_text(props)
    result = CliRunner().invoke(cli, ["metadata", "check", str(disk), "--format", "json"])
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert result.exit_code == 1
    assert {(f["kind"], Path(f["path"]).name) for f in lines[:-1]} == {
        ("other-log-dir", name) for name in ("__consumer_offsets-0", "__transaction_state-0", "compacted-0",
                                             "orders-0", "orders-1", "payments-0")}
    assert lines[0]["message"] == ("the image assigns this replica to log directory f4MmpvGorB2MzPx_LyZfLA, "
                                   "this one is yj-myzL_QyO5SS7-vSM-kA")
    assert lines[-1]["findings"] == 6


def test_no_metadata_log_is_a_refusal(tmp_path: Path) -> None:
    code, lines = _check(tmp_path)
    assert code == 2

"""What the load model cannot read from the disk is an input it says it assumed (R1.5's metadata image).

A KRaft broker renames a partition directory ``-stray`` when it has no topic id (no
``partition.metadata``: on disk, modelled) or when the controller's metadata image does not
know that topic id or does not list this broker among the partition's replicas (not on disk).
The prediction names the second half as an assumption: per partition in ``triage --format
json`` (``assumed``), once in the text.  The other input is the broker's wall clock at the start,
which decides the producers a reloaded snapshot drops: ``now_ms``, this machine's clock by default.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from logdirs import TOPIC_ID, LogDir, batch

from kseg.cli import cli
from kseg.format.snapshot import ProducerEntry, encode_snapshot
from kseg.recovery.loading import predict_log_dir

ENV = {"NO_COLOR": "1", "COLUMNS": "100"}


def _logdir(root: Path) -> Path:
    logdir = LogDir(root)
    logdir.partition("t", 0, {0: [batch(0, 3)]})
    stray = logdir.partition("u", 0, {0: [batch(0, 2)]})
    (stray.path / "partition.metadata").unlink()
    logdir.partition("v", 0, {0: [batch(0, 1)]})
    (root / "v-0" / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAg==\n")
    return logdir.finish()


def test_each_partition_with_a_topic_id_names_the_assumption(tmp_path: Path) -> None:
    pred = predict_log_dir(_logdir(tmp_path / "logs"))
    assumed = {Path(p.path).name: p.assumed for p in pred.partitions}
    assert assumed == {
        "t-0": [f"the controller's metadata image knows topic id {TOPIC_ID} and lists this broker among the "
                "replicas of t-0; otherwise Kafka renames the directory -stray (R1.5)"],
        "u-0": [],  # no topic id: renamed -stray whatever the image says (modelled, not assumed)
        "v-0": ["the controller's metadata image knows topic id AAAAAAAAAAAAAAAAAAAAAg and lists this broker among "
                "the replicas of v-0; otherwise Kafka renames the directory -stray (R1.5)"],
    }
    assert [p.notes for p in pred.partitions] == [[], [], []]  # an assumption is not a rule left out


def test_triage_json_and_text_show_it(tmp_path: Path) -> None:
    root = _logdir(tmp_path / "logs")
    result = CliRunner().invoke(cli, ["triage", "--format", "json", str(root)], env=ENV)
    assert result.exit_code == 1, result.output  # u-0 has no partition.metadata: renamed -stray, not served
    objs = [json.loads(line) for line in result.output.splitlines()]
    parts = {o["path"].rsplit("/", 1)[1]: o for o in objs if o["type"] == "partition"}
    assert [len(parts[d]["assumed"]) for d in ("t-0", "u-0", "v-0")] == [1, 0, 1]
    assert list(parts["t-0"])[-2:] == ["assumed", "next"]
    text = CliRunner().invoke(cli, ["triage", "--format", "text", str(root)], env=ENV)
    assert text.exit_code == 1, text.output
    line = ("assumed, not on disk: the controller's metadata image has this broker as a replica of 2 partitions "
            "(else renamed -stray)")
    assert text.output.splitlines()[:3] == ["kseg triage: 1 log directory, 3 partitions: 3 clean",
                                            "next start: the broker starts", line]


def _expiring(root: Path, timestamp: int) -> Path:
    """A clean log dir whose only snapshot (at 2, below the log end 4) holds producer 7 last seen at ``timestamp``."""
    logdir = LogDir(root)
    part = logdir.partition("t", 0, {0: [batch(0, 2)], 2: [batch(2, 2)]}, snapshot=False)
    part.file(".snapshot", 2).write_bytes(encode_snapshot([ProducerEntry(7, 0, 1, 1, 1, timestamp, -1, -1)]))
    return logdir.finish()


def test_now_decides_which_producers_a_reload_drops(tmp_path: Path) -> None:
    """isProducerExpired: ``now - lastTimestamp >= producer.id.expiration.ms`` (1 day) drops producer 7 when the
    snapshot at 2 is reloaded; the snapshot written at the log end is the map without it (R6.3b)."""
    seen = 1_700_000_000_000
    root = _expiring(tmp_path / "logs", seen)
    written = {}
    for now in (seen + 86_400_000 - 1, seen + 86_400_000):
        [part] = predict_log_dir(root, now_ms=now).partitions
        [action] = [a for a in part.actions if a.path.endswith("00000000000000000004.snapshot")]
        written[now - seen] = (action.detail, action.size)
    assert written == {
        86_399_999: ("snapshot at 4", 6 + 4 + 46),  # header, count, one entry
        86_400_000: ("snapshot at 4 (expired at load, dropped: producer ids 7)", 6 + 4),
    }

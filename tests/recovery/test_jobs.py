"""``--jobs``: the loading model's partitions spread over processes give exactly the serial answer.

A log directory of 40 partitions (above ``POOL_MIN_PARTITIONS``, so ``--jobs 2`` starts a pool)
mixing what the model treats differently: healthy partitions, a torn last batch, a flipped byte,
a missing ``.index``, a second segment, a transaction left open, and no clean-shutdown marker.
``predict_log_dir`` must return equal predictions, and verify, triage, txn and
``recover --dry-run`` the same bytes on stdout and the same exit code, whatever ``--jobs`` is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from logdirs import LogDir, batch, control_batch, name

from kseg.cli import cli
from kseg.recovery.loading import logdir as logdir_module
from kseg.recovery.loading import predict_log_dir

PARTITIONS = 40


def _mixed_log_dir(root: Path, clean: bool) -> Path:
    logdir = LogDir(root / ("clean" if clean else "unclean"))
    for number in range(PARTITIONS):
        kind = number % 6
        if kind == 4:
            segments = {0: [batch(0, 3), batch(3, 2)], 5: [batch(5, 4)]}
        elif kind == 5:
            segments = {0: [batch(0, 2), batch(2, 1, producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True),
                            control_batch(3, b"\x00\x00\x00\x01")]}
        else:
            segments = {0: [batch(0, 3), batch(3, 2, size=40)]}
        part = logdir.partition("t", number, segments)
        log = part.file(".log")
        if kind == 1:
            log.write_bytes(log.read_bytes()[:-7])  # a torn last batch
        elif kind == 2:
            data = bytearray(log.read_bytes())
            data[-3] ^= 0x10  # the last batch's CRC fails
            log.write_bytes(bytes(data))
        elif kind == 3:
            (part.path / name(0, ".index")).unlink()
    return logdir.finish(clean=clean)


@pytest.fixture(scope="module")
def log_dirs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("jobs")
    return [_mixed_log_dir(root, True), _mixed_log_dir(root, False)]


def test_the_pool_is_used_and_gives_the_serial_predictions(log_dirs, monkeypatch):
    assert PARTITIONS >= logdir_module.POOL_MIN_PARTITIONS
    for path in log_dirs:
        serial = predict_log_dir(path, now_ms=1_800_000_000_000, jobs=1)
        pooled = predict_log_dir(path, now_ms=1_800_000_000_000, jobs=2)
        assert pooled == serial
        assert len(serial.partitions) == PARTITIONS
        assert {p.outcome for p in serial.partitions} != {serial.partitions[0].outcome}  # not all alike
    calls = []
    monkeypatch.setattr(logdir_module, "_predict_one", lambda task: calls.append(task))
    monkeypatch.setattr(logdir_module, "POOL_MIN_PARTITIONS", 10**9)  # below the threshold: never the pool
    predict_log_dir(log_dirs[0], jobs=2)
    assert calls == []


@pytest.mark.parametrize(("command", "every_partition"), [
    (["verify"], "t-39/"), (["triage"], f"{PARTITIONS} partitions"), (["txn", "--now", "newest"], "t-39:"),
    (["recover", "--dry-run"], f"{PARTITIONS} partitions"),
])
def test_commands_print_the_same_with_any_jobs(log_dirs, command, every_partition):
    runner = CliRunner()
    for path in log_dirs:
        one = runner.invoke(cli, [*command, "--jobs", "1", str(path)])
        two = runner.invoke(cli, [*command, "--jobs", "2", str(path)])
        assert one.exception is None or isinstance(one.exception, SystemExit), one.output
        assert (two.exit_code, two.output) == (one.exit_code, one.output)
        assert one.exit_code in (0, 1)
        assert every_partition in one.output  # every partition was read

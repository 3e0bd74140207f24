"""``kseg recover LOGDIR -o OUT`` against Kafka 4.3.0's own load (LoadLogDir, the storage oracle).

Two loads per input, in one JVM: LoadLogDir on a copy of the input gives the files Kafka keeps;
LoadLogDir on OUT must change no file (``files_created``/``changed``/``deleted`` and pending deletes
empty, outcome ``clean``).  By default OUT must keep exactly Kafka's ``.log`` files, byte for byte, with
Kafka's log start, log end, leader epochs and the ``leader-epoch-checkpoint`` bytes Kafka leaves.
``--salvage`` keeps more (every intact batch, the segments Kafka deletes) and must still load unchanged.

Inputs: log directories built by ``tests/logdirs.py`` as a clean shutdown leaves them and then damaged
in each way the comparison once failed (:data:`CASES`), copies of ``fixtures/real/kafka-logs`` damaged
the same ways, the damaged log directories of ``tests/test_next_start_agreement.py``, and every log
directory among the fixtures (:data:`FIXTURE_LOGDIRS`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka_storage import KafkaStorage
from logdirs import LogDir, batch, checkpoint
from support import FIXTURES

from kseg.ops.recover import recover_path

REAL = FIXTURES / "real" / "kafka-logs"
#: every log directory among the fixtures (a directory holding <topic>-<partition> directories)
FIXTURE_LOGDIRS = (
    "real/kafka-logs", "txn/logs", "recover/logdir", "dump/logdir", "internal/segments", "dump/decoders",
    "verify/corrupt/stale-index", "verify/corrupt/partition-problems", "verify/corrupt/bad-indexes",
    "verify/clean/preallocated", "verify/clean/partition", "reindex/partition", "reindex/legacy",
    "reindex/damaged",
)
SEGMENTS = {0: [(0, 3, 0), (3, 2, 1)], 5: [(5, 2, 1)], 7: [(7, 3, 2)]}  # base -> (offset, count, epoch)
EPOCHS = [(0, 0), (1, 3), (2, 7)]


def _three(logdir: LogDir):
    """t-0: segments at 0, 5, 7 (offsets 0-9, epochs 0, 1, 2), as a clean shutdown leaves it."""
    segments = {base: [batch(o, n, epoch=e) for o, n, e in spec] for base, spec in SEGMENTS.items()}
    return logdir.partition("t", 0, segments, epochs=EPOCHS)


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


# -- the cases: each builds a damaged log directory under ``root`` and returns it ------------------------


def log_start_beyond_end(root: Path) -> Path:
    """R8.2: the log start checkpoint (50) is past the log end (10): Kafka deletes every segment."""
    logdir = LogDir(root)
    _three(logdir)
    return logdir.finish(log_starts={("t", 0): 50})


def log_start_beyond_end_unclean(root: Path) -> Path:
    logdir = LogDir(root)
    _three(logdir)
    return logdir.finish(clean=False, log_starts={("t", 0): 50})


def log_start_at_end(root: Path) -> Path:
    """The log start (10) is the log end: nothing deleted, every epoch dropped (R7.5)."""
    logdir = LogDir(root)
    _three(logdir)
    return logdir.finish(log_starts={("t", 0): 10})


def broken_partition_metadata(root: Path) -> Path:
    """A partition.metadata Kafka's reader throws on; a healthy second partition beside it."""
    logdir = LogDir(root)
    part = _three(logdir)
    (part.path / "partition.metadata").write_text("version: 0\ntopic_id: not-a-uuid\n")
    logdir.partition("u", 0, {0: [batch(0, 2)]})
    return logdir.finish()


def swap_leftover(root: Path) -> Path:
    """R2.2-R2.4: a .log.swap replacing segment 5 (a compaction that did not finish its renames)."""
    logdir = LogDir(root)
    part = _three(logdir)
    (part.path / "00000000000000000005.log.swap").write_bytes(batch(5, 2, epoch=1, size=3))
    return logdir.finish()


def no_epochs(root: Path) -> Path:
    """Batches without a leader epoch (-1): Kafka's cache stays empty, its file 0 bytes (unclean start)."""
    logdir = LogDir(root)
    part = logdir.partition("t", 0, {0: [batch(0, 3, epoch=-1)]}, epochs=[])
    (part.path / "leader-epoch-checkpoint").unlink()
    return logdir.finish(clean=False)


def clean_damage(root: Path) -> Path:
    """R4.1: a clean shutdown: Kafka recovers nothing and serves the damaged bytes of segment 0."""
    logdir = LogDir(root)
    _flip(_three(logdir).file(".log", 0), 70)
    return logdir.finish()


def below_recovery_point(root: Path) -> Path:
    """R4.2: unclean, the damage below the recovery point: Kafka does not recover that segment."""
    logdir = LogDir(root)
    _flip(_three(logdir).file(".log", 0), 70)
    return logdir.finish(clean=False, recovery_points={("t", 0): 7})


def unclean_cut_deletes(root: Path) -> Path:
    """R4.3: recoverLog cuts segment 5 and deletes segment 7; the high watermark (10) is past the new end."""
    logdir = LogDir(root)
    _flip(_three(logdir).file(".log", 5), -3)
    return logdir.finish(clean=False, recovery_points={("t", 0): 3})


def _real(root: Path) -> Path:
    shutil.copytree(REAL, root)
    return root


def real_damaged_clean(root: Path) -> Path:
    """fixtures/real/kafka-logs with a byte of foo-0 flipped and a clean-shutdown marker."""
    _flip(_real(root) / "foo-0" / "00000000000000000000.log", 4000)
    (root / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":3}')
    return root


def real_damaged_unclean(root: Path) -> Path:
    """The same flip, no marker: Kafka recovers every segment from 0 and cuts foo-0 there."""
    _flip(_real(root) / "foo-0" / "00000000000000000000.log", 4000)
    _flip(root / "__consumer_offsets-12" / "00000000000000000000.log", 30000)
    return root


def real_below_recovery_point(root: Path) -> Path:
    """The flip below the recovery point of an unclean start: Kafka leaves it alone."""
    _flip(_real(root) / "foo-0" / "00000000000000000000.log", 4000)
    (root / "recovery-point-offset-checkpoint").write_text(checkpoint([("foo", 0, 204), ("some-topic", 0, 9)]))
    (root / "replication-offset-checkpoint").write_text(checkpoint([("foo", 0, 204)]))
    return root


CASES: dict[str, Callable[[Path], Path]] = {
    case.__name__: case
    for case in (
        log_start_beyond_end, log_start_beyond_end_unclean, log_start_at_end, broken_partition_metadata,
        swap_leftover, no_epochs, clean_damage, below_recovery_point, unclean_cut_deletes,
        real_damaged_clean, real_damaged_unclean, real_below_recovery_point,
    )
}


def all_inputs(root: Path) -> dict[str, Path]:
    """Every input log directory, by name: the cases, next-start agreement's, the fixtures (read-only)."""
    import test_next_start_agreement as agreement

    found = {name: case(root / "cases" / name / "kafka-logs") for name, case in CASES.items()}
    for name, case in agreement.CASES.items():
        found[f"agreement-{name}"] = case(LogDir(root / "agreement" / name / "kafka-logs"))
    for name in FIXTURE_LOGDIRS:
        found[name] = FIXTURES / name
    return found


# -- the comparison ----------------------------------------------------------------------------------------


def _partitions(lines: list[dict]) -> dict[str, dict]:
    return {o["dir"]: o for o in lines if o["type"] == "partition"}


def _logs(loaded: dict) -> dict[str, list]:
    return {name: value for name, value in loaded["files_after"].items() if name.endswith(".log")}


def differences(kafka: list[dict], out: list[dict], salvage: bool) -> list[str]:
    """What is wrong with OUT's load (``out``) given Kafka's load of the input (``kafka``); [] when nothing."""
    found = []
    before, after = _partitions(kafka), _partitions(out)
    for name in sorted(set(before) | set(after)):
        k, o = before.get(name), after.get(name)
        if o is None:
            if k is not None and k["outcome"] != "fails":
                found.append(f"{name}: not in OUT")
            continue
        changes = {key: o[key] for key in ("files_created", "files_changed", "files_deleted",
                                             "pending_async_deletes") if o[key]}
        if o["outcome"] != "clean" or changes:
            found.append(f"{name}: OUT's load is {o['outcome']} {changes} {o['error']}")
        if k is None:
            found.append(f"{name}: in OUT but not in the input")
        elif not salvage and k["outcome"] != "fails":
            if _logs(k) != _logs(o):
                found.append(f"{name}: .log files differ: Kafka keeps {_logs(k)}, OUT has {_logs(o)}")
            for key in ("log_start_offset", "log_end_offset", "leader_epochs", "leader_epoch_checkpoint_after"):
                if k[key] != o[key]:
                    found.append(f"{name}: {key}: Kafka {k[key]!r}, OUT {o[key]!r}")
    return found


def compare(storage: KafkaStorage, inputs: dict[str, Path], out_root: Path, salvage: bool) -> dict[str, list[str]]:
    """Recover every input into ``out_root/<name>``; load inputs and outputs in one JVM; the differences."""
    outs = {}
    for name, path in inputs.items():
        outs[name] = out_root / name.replace("/", "_")
        recover_path(path, out_dir=outs[name], salvage=salvage)
    loads = storage.load([*inputs.values(), *outs.values()], "--no-kafka-log")
    kafka, out = loads[: len(inputs)], loads[len(inputs) :]
    return {name: differences(k, o, salvage) for name, k, o in zip(inputs, kafka, out)}


@pytest.mark.parametrize("salvage", [False, True], ids=["kafka", "salvage"])
def test_out_keeps_what_kafka_keeps_and_loads_unchanged(kafka_storage, tmp_path, salvage):
    inputs = all_inputs(tmp_path / "in")
    found = compare(kafka_storage, inputs, tmp_path / "out", salvage)
    assert {name: problems for name, problems in found.items() if problems} == {}

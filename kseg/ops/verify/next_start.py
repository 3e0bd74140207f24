"""Ask the one model of Kafka's log loading (:mod:`kseg.recovery.loading`) what the next start does.

Verify makes no statement of its own about what Kafka does at load: every
"the next start ..." sentence comes from the prediction made here, so verify,
``kseg recover --dry-run`` and ``kseg triage`` cannot disagree.  The model runs
once per log directory (:func:`~kseg.recovery.loading.predict_log_dir`) or, for
a partition directory verified on its own, once for that directory with the
inputs its parent log directory gives (clean-shutdown marker, recovery-point,
log-start-offset and high-watermark checkpoints), as ``LogManager.loadLog``
would pass them.  Files outside a directory Kafka would load as a partition
get no prediction, and verify says nothing about their load.

The model only reads (nothing is created or changed, not even an access
time).  It replays ``LogSegment.recover`` only for the segments Kafka would
recover, so a clean-shutdown directory costs little more than a directory listing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kseg.ops.verify.model import LoadScope
from kseg.recovery.clean_prefix import CleanPrefix
from kseg.recovery.loading import LogDirPrediction, PartitionPrediction
from kseg.recovery.loading.logdir import CLEAN_SHUTDOWN, METADATA_TOPIC, parse_topic_partition
from kseg.recovery.verdict.paths import Alone, PathPredictions, predict_paths

SPECIAL_KINDS = ("delete", "future", "stray")


@dataclass(slots=True)
class Predictions:
    """The model's answers for one verify run, keyed by absolute directory path."""

    partitions: dict[str, PartitionPrediction] = field(default_factory=dict)
    log_dirs: dict[str, LogDirPrediction] = field(default_factory=dict)
    scopes: dict[str, tuple[str, ...] | None] = field(default_factory=dict)  # partition -> files to speak of
    clean_shutdown: dict[str, bool] = field(default_factory=dict)  # partition -> its log directory had the marker
    failures: dict[str, str] = field(default_factory=dict)  # directory -> why the model could not run
    paths: PathPredictions = field(default_factory=PathPredictions)  # the shared answer the verdict is read from


def key(path: str) -> str:
    return os.path.abspath(path)


def predict_scopes(
    scopes: tuple[LoadScope, ...], prefixes: Mapping[str, CleanPrefix] | None = None, jobs: int = 1
) -> Predictions:
    """Run the model once per log directory and once per partition directory not inside one
    (:func:`~kseg.recovery.verdict.paths.predict_paths`, as txn asks it).

    ``prefixes``: recover's loop over the leading clean batches of the .log files verify walked,
    by absolute path: the model goes on from there instead of walking them again.
    """
    out = Predictions()
    log_dirs = [scope.directory for scope in scopes if scope.kind == "log-dir"]
    partitions = [scope for scope in scopes if scope.kind == "partition"]
    alone: list[Alone] = [(scope.directory, *name) for scope in partitions
                          if (name := _loaded_name(Path(scope.directory))) is not None]
    out.paths = predict_paths(log_dirs, alone, prefixes=prefixes, jobs=jobs, catch=True)
    out.log_dirs.update(out.paths.log_dirs)
    for prediction in out.paths.log_dirs.values():
        for part in prediction.partitions:
            out.partitions[key(part.path)] = part
            out.clean_shutdown[key(part.path)] = prediction.clean_shutdown
            out.scopes.setdefault(key(part.path), None)
    for scope in partitions:  # after the log directories': a partition of one stays whole
        where = key(scope.directory)
        out.scopes[where] = _wider(out.scopes, where, scope.only)
    for where, part in out.paths.alone.items():
        out.partitions[where] = part
        out.clean_shutdown[where] = (Path(where).parent / CLEAN_SHUTDOWN).exists()
    out.failures.update(out.paths.failures)
    return out


def _wider(known: dict[str, tuple[str, ...] | None], where: str, only: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """A directory verified whole (None) stays whole; lists of files given one by one add up."""
    if where in known and (known[where] is None or only is None):
        return None
    return (*(known.get(where) or ()), *(only or ()))


def _loaded_name(directory: Path) -> tuple[str, int, str] | None:
    """(topic, partition, kind) as ``LocalLog.parseTopicPartitionName`` reads the name; None for a name
    Kafka refuses (the log directory's own prediction reports it) or the KRaft metadata log, which
    ``LogManager.loadLogs`` does not load."""
    try:
        topic, partition, kind = parse_topic_partition(directory)
    except Exception:
        return None
    return None if topic == METADATA_TOPIC else (topic, partition, kind)

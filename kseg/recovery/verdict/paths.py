"""The next start of what a reading command was given: log directories and partition directories alone.

verify and txn (and any other reader of mixed paths) ask the one model the same way: each log
directory whole (:func:`~kseg.recovery.loading.predict_log_dir`), one broker's ``log.dirs``, so a
partition found in two of them stops the broker (:func:`~kseg.recovery.loading.logdir.mark_duplicates`,
R1.5); each partition directory given on its own with the inputs its parent log directory gives
(:func:`predict_alone`, as ``LogManager.loadLog`` passes them, and the parent's ``-stray`` rule); a
partition directory inside a log directory also given is that log directory's, predicted once.  The
verdict's facts are the log directories' (:func:`~.partition.broker_facts`) and then the lone
partitions' (:func:`~.partition.partition_facts`), in that order, for every command alike.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.recovery.clean_prefix import CleanPrefix
from kseg.recovery.loading import (
    BrokerPrediction,
    LoadInputs,
    LogDirPrediction,
    PartitionPrediction,
    predict_log_dir,
    predict_partition,
)
from kseg.recovery.loading.logdir import (
    CLEAN_SHUTDOWN,
    HIGH_WATERMARK,
    LOG_START,
    RECOVERY_POINT,
    mark_duplicates,
    read_offsets,
    stray_rule_alone,
)
from kseg.recovery.verdict.partition import all_partition_facts, broker_facts
from kseg.recovery.verdict.table import Verdict

#: (directory, topic, partition, kind): a partition directory given on its own, its name as the caller read it.
Alone = tuple[str | os.PathLike[str], str, int, str]


@dataclass(slots=True)
class PathPredictions:
    """The model's answers for the paths of one run, keyed by absolute directory path, in the order given."""

    log_dirs: dict[str, LogDirPrediction] = field(default_factory=dict)
    alone: dict[str, PartitionPrediction] = field(default_factory=dict)  # partitions outside the log dirs given
    failures: dict[str, str] = field(default_factory=dict)  # directory -> why the model could not run there
    jobs: int = 1  # worker processes for the verdict's partition facts, as for the predictions

    def partitions(self) -> list[PartitionPrediction]:
        """Every partition predicted: each log directory's, then those given alone."""
        return [p for d in self.log_dirs.values() for p in d.partitions] + list(self.alone.values())

    def verdict(self) -> Verdict:
        """The one verdict of these directories' next start (docs/cli.md, "One verdict"); its scope: every
        directory predicted (verify fails a run on an error outside it)."""
        log_dirs = list(self.log_dirs.values())
        facts = broker_facts(log_dirs, BrokerPrediction(log_dirs).broker_stops, self.jobs)
        facts += [fact for part in all_partition_facts(list(self.alone.values()), self.jobs) for fact in part]
        return Verdict(facts, frozenset(self.log_dirs) | {os.path.abspath(p.path) for p in self.partitions()})


def parent_inputs(directory: Path, topic: str, partition: int, kind: str = "",
                  max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> LoadInputs:
    """What ``LogManager.loadLog`` passes for this partition directory, read from its parent (R1.1, R1.2)."""
    parent, tp = directory.parent, (topic, partition)
    return LoadInputs((parent / CLEAN_SHUTDOWN).exists(), read_offsets(parent, RECOVERY_POINT).entries.get(tp, 0),
                      read_offsets(parent, LOG_START).entries.get(tp, 0),
                      read_offsets(parent, HIGH_WATERMARK).entries.get(tp), kind, max_batch_bytes)


def predict_alone(directory: Path, topic: str, partition: int, kind: str = "",
                  max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
                  prefixes: Mapping[str, CleanPrefix] | None = None) -> PartitionPrediction:
    """A partition directory given on its own: loaded with its parent's inputs, then its parent's R1.5 rule."""
    inputs = parent_inputs(directory, topic, partition, kind, max_batch_bytes)
    prediction = predict_partition(directory, topic, partition, inputs, prefixes)
    stray_rule_alone(prediction)
    return prediction


def predict_paths(
    log_dirs: Sequence[str | os.PathLike[str]],
    alone: Sequence[Alone] = (),
    *,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    prefixes: Mapping[str, CleanPrefix] | None = None,
    jobs: int = 1,
    catch: bool = False,
) -> PathPredictions:
    """Predict every log directory, mark the partitions two of them hold, then the partitions given alone.

    ``prefixes``: clean prefixes a caller's walk already found, by absolute ``.log`` path
    (:mod:`kseg.recovery.clean_prefix`); ``jobs``: worker processes for each log directory's
    partitions.  ``catch``: a directory where the model raises is recorded in ``failures`` (verify
    reports it and goes on) instead of ending the run.
    """
    out = PathPredictions(jobs=jobs)
    for directory in log_dirs:
        where = os.path.abspath(directory)
        try:
            out.log_dirs[where] = predict_log_dir(directory, max_batch_bytes, prefixes, jobs=jobs)
        except Exception as err:
            if not catch:
                raise
            out.failures[where] = f"{type(err).__name__}: {err}"
    mark_duplicates(list(out.log_dirs.values()))  # one broker's log.dirs
    for directory, topic, partition, kind in alone:
        where = os.path.abspath(directory)
        if os.path.dirname(where) in out.log_dirs or where in out.alone or where in out.failures:
            continue  # loaded as part of its log directory (or not at all), or already predicted
        try:
            out.alone[where] = predict_alone(Path(directory), topic, partition, kind, max_batch_bytes, prefixes)
        except Exception as err:
            if not catch:
                raise
            out.failures[where] = f"{type(err).__name__}: {err}"
    return out


__all__ = ["Alone", "PathPredictions", "parent_inputs", "predict_alone", "predict_paths"]

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
from kseg.recovery.loading import (
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
    METADATA_TOPIC,
    RECOVERY_POINT,
    mark_duplicates,
    parse_topic_partition,
    read_offsets,
    stray_rule_alone,
)

SPECIAL_KINDS = ("delete", "future", "stray")


@dataclass(slots=True)
class Predictions:
    """The model's answers for one verify run, keyed by absolute directory path."""

    partitions: dict[str, PartitionPrediction] = field(default_factory=dict)
    log_dirs: dict[str, LogDirPrediction] = field(default_factory=dict)
    scopes: dict[str, tuple[str, ...] | None] = field(default_factory=dict)  # partition -> files to speak of
    clean_shutdown: dict[str, bool] = field(default_factory=dict)  # partition -> its log directory had the marker
    failures: dict[str, str] = field(default_factory=dict)  # directory -> why the model could not run


def key(path: str) -> str:
    return os.path.abspath(path)


def predict_scopes(
    scopes: tuple[LoadScope, ...], prefixes: Mapping[str, CleanPrefix] | None = None, jobs: int = 1
) -> Predictions:
    """Run the model once per log directory and once per partition directory not inside one.

    ``prefixes``: recover's loop over the leading clean batches of the .log files verify walked,
    by absolute path: the model goes on from there instead of walking them again.
    """
    out = Predictions()
    for scope in scopes:
        if scope.kind == "log-dir":
            _predict_log_dir(out, scope.directory, prefixes, jobs)
    mark_duplicates(list(out.log_dirs.values()))  # verify d1 d2: one broker's log.dirs
    for scope in scopes:
        if scope.kind != "partition":
            continue
        where = key(scope.directory)
        out.scopes[where] = _wider(out.scopes, where, scope.only)
        if os.path.dirname(where) in out.log_dirs:
            continue  # its log directory was predicted whole: loaded there, or not loaded at all
        if where not in out.partitions and where not in out.failures:
            _predict_partition(out, scope.directory, prefixes)
    return out


def _wider(known: dict[str, tuple[str, ...] | None], where: str, only: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """A directory verified whole (None) stays whole; lists of files given one by one add up."""
    if where in known and (known[where] is None or only is None):
        return None
    return (*(known.get(where) or ()), *(only or ()))


def _predict_log_dir(out: Predictions, directory: str, prefixes: Mapping[str, CleanPrefix] | None,
                     jobs: int = 1) -> None:
    try:
        prediction = predict_log_dir(directory, prefixes=prefixes, jobs=jobs)
    except Exception as err:  # a model failure must not stop verify: reported as load-model instead
        out.failures[key(directory)] = f"{type(err).__name__}: {err}"
        return
    out.log_dirs[key(directory)] = prediction
    for part in prediction.partitions:
        out.partitions[key(part.path)] = part
        out.clean_shutdown[key(part.path)] = prediction.clean_shutdown
        out.scopes.setdefault(key(part.path), None)


def load_inputs(directory: Path) -> LoadInputs | None:
    """What ``LogManager.loadLog`` passes for this partition directory, read from its parent (R1.1, R1.2)."""
    try:
        topic, partition, kind = parse_topic_partition(directory)
    except Exception:  # a name Kafka refuses: the log directory's own prediction reports it
        return None
    if topic == METADATA_TOPIC:
        return None  # the KRaft metadata log is not loaded by LogManager.loadLogs
    parent = directory.parent
    tp = (topic, partition)
    points = read_offsets(parent, RECOVERY_POINT).entries
    starts = read_offsets(parent, LOG_START).entries
    marks = read_offsets(parent, HIGH_WATERMARK).entries
    clean = (parent / CLEAN_SHUTDOWN).exists()
    return LoadInputs(clean, points.get(tp, 0), starts.get(tp, 0), marks.get(tp), kind)


def _predict_partition(out: Predictions, directory: str, prefixes: Mapping[str, CleanPrefix] | None) -> None:
    path = Path(directory)
    try:
        inputs = load_inputs(path)
        if inputs is None:
            return
        topic, partition, _ = parse_topic_partition(path)
        prediction = predict_partition(path, topic, partition, inputs, prefixes)
        stray_rule_alone(prediction)
        out.partitions[key(directory)] = prediction
        out.clean_shutdown[key(directory)] = inputs.clean_shutdown
    except Exception as err:  # a model failure must not stop verify: reported as load-model instead
        out.failures[key(directory)] = f"{type(err).__name__}: {err}"

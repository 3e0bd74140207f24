"""What the next start does with a log directory's own files, as findings, from the model's prediction.

:class:`~kseg.recovery.loading.LogDirPrediction` says which checkpoint
entries have no partition directory (``checkpoint-orphan``), which partition
directories have no recovery-point entry (``checkpoint-missing-entry``),
which checkpoints ``LogManager`` cannot read (the directory then goes
offline: ``load-fails``) and whether the directory as a whole fails to load.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from kseg.ops.verify.load_findings import failure_text, tag
from kseg.ops.verify.model import ERROR, INFO, WARNING, Finding
from kseg.ops.verify.partition import PartitionFinding
from kseg.recovery.loading import LogDirPrediction
from kseg.recovery.loading.logdir import RECOVERY_POINT

LOAD_LOGS = "LogManager.loadLogs"


def log_dir_findings(pred: LogDirPrediction, files: dict[str, str]) -> Iterator[PartitionFinding]:
    """Findings about the log directory ``pred`` describes; ``files`` maps absolute paths to verify's names."""

    def finding(name: str | None, kind: str, severity: str, offset: int | None, message: str) -> PartitionFinding:
        full = os.path.abspath(os.path.join(pred.path, name) if name else pred.path)
        path = files.get(full, full if name else pred.path)
        return (path, Finding(path, kind, severity, None, offset, message), None)

    if pred.error is not None:
        yield finding(None, "load-fails", ERROR, None, failure_text(pred.error))
    for name, read in pred.checkpoints.items():
        if read.problem is not None and read.reports_offline:
            yield finding(name, "load-fails", ERROR, None,
                          f"the next start cannot read this file ({read.problem}): Kafka uses none of its entries "
                          f"and the log directory goes offline {tag('R9.4', 'CheckpointFileWithFailureHandler.read')}")
    for name, topic, partition, offset in pred.entries_without_directory:
        yield finding(name, "checkpoint-orphan", WARNING, offset,
                      f"entry {topic}-{partition} (offset {offset}) has no partition directory in this log directory: "
                      f"the next start loads nothing for it {tag('R1.1', LOAD_LOGS)}")
    points = pred.checkpoints.get(RECOVERY_POINT)
    if points is None or not points.exists or points.problem is not None:
        return  # no usable file: every partition starts from 0, and verify does not list them one by one
    for directory in pred.directories_without_entries:
        later = ("no segment is recovered now (.kafka_cleanshutdown), the next unclean start recovers the "
                 "whole log" if pred.clean_shutdown else "the next start recovers its whole log")
        yield finding(RECOVERY_POINT, "checkpoint-missing-entry", INFO, None,
                      f"no entry for {directory}: its recovery point is 0, so {later} "
                      f"{tag('R1.2', 'LogManager.loadLog')}")

"""The kseg commands ``kseg triage`` tells the on-call engineer to run next, each with why.

Every suggested command is read-only (``verify``, ``dump``, ``reindex
--check``, ``recover --dry-run``), so it is safe to paste while the broker
is down; the commands that write (``recover -o``) are the engineer's call
once these have been read (docs/triage.md says when).  Paths are shell-quoted
as given on the command line.

* a partition that **fails** to load: ``kseg verify --deep`` (every damaged
  batch and record, located), ``kseg dump`` of the file Kafka throws on
  (when its message names one), ``kseg recover --dry-run`` (what a recovery
  keeps so that the partition loads);
* a partition that **loses data**: ``kseg verify`` (where and what), then
  ``kseg recover --dry-run --salvage`` when committed offsets are lost (what
  can still be saved beyond Kafka's cut, before the broker deletes it) or
  ``kseg recover --dry-run`` otherwise; ``kseg reindex --check`` when the
  log end falls back without a recovery (a stale ``.index``, R5.5);
* a partition whose start serves what it should not -- records of a transaction the start forgets
  (``kseg txn``: which transactions, and the command that aborts them) or a damaged batch it
  serves unread (``kseg verify --deep``: where it is);
* a log directory whose checkpoint cannot be read: ``kseg dump`` of it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from kseg.recovery.loading import FAILS, LogDirPrediction, PartitionPrediction


@dataclass(frozen=True, slots=True)
class NextStep:
    """One command line and the reason to run it."""

    command: str
    why: str

    def as_json(self) -> dict[str, str]:
        return {"command": self.command, "why": self.why}


def _kseg(*words: str) -> str:
    return " ".join(["kseg", *map(shlex.quote, words)])


def failing_file(pred: PartitionPrediction) -> str | None:
    """The file of the partition that Kafka's exception message (or its cause) names, as a given path."""
    if pred.error is None:
        return None
    here = str(Path(pred.path).absolute())
    texts = [pred.error.message, pred.error.cause or ""]
    for text in texts:
        match = re.search(re.escape(here + "/") + r"([^\s/,\]]+)", text)
        if match:
            return str(Path(pred.path) / match[1].rstrip("."))
    return None


def _failure_steps(pred: PartitionPrediction, file: str | None) -> list[NextStep]:
    """A failing segment: verify deep, dump it, recover dry; a failing checkpoint or metadata file: dump it."""
    segment = file is None or file.endswith((".log", ".index", ".timeindex", ".txnindex", ".swap"))
    if not segment:
        return [NextStep(_kseg("dump", str(file)), "the file Kafka throws on, as kafka-dump-log reads it"),
                NextStep(_kseg("verify", pred.path), "the partition's other files")]
    steps = [NextStep(_kseg("verify", "--deep", pred.path),
                      "locate every damaged batch and record (byte position, offset, field)")]
    if file is not None:
        words = ("dump", "--deep-iteration", file) if file.endswith(".log") else ("dump", file)
        steps.append(NextStep(_kseg(*words), "the file Kafka throws on"))
    steps.append(NextStep(_kseg("recover", "--dry-run", pred.path),
                          "what a recovery keeps and cuts so that the partition loads"))
    return steps


def served_steps(pred: PartitionPrediction, unreadable: bool, uncommitted: bool) -> list[NextStep]:
    """A partition that loads but serves what it should not: the command that says what, for each."""
    steps = []
    if uncommitted:
        steps.append(NextStep(_kseg("txn", pred.path),
                              "the open transactions the start forgets (served as committed) and how to abort them"))
    if unreadable:
        steps.append(NextStep(_kseg("verify", "--deep", pred.path),
                              "the damaged batch the start serves unread (byte position, offset, field)"))
    return steps


def partition_steps(pred: PartitionPrediction, file: str | None, lost: bool, committed: bool,
                    unreadable: bool = False, uncommitted: bool = False) -> list[NextStep]:
    """What to run for one partition: nothing when it loses nothing and serves nothing it should not
    (healthy, or only renamed ``-stray``)."""
    if pred.outcome == FAILS or pred.error is not None:
        return _failure_steps(pred, file)
    if pred.kind == "delete":
        return []
    if not lost:
        return served_steps(pred, unreadable, uncommitted)
    steps = [NextStep(_kseg("verify", pred.path), "where the damage is and what it is")]
    cut = bool(pred.gone_offsets or pred.truncated_bytes or pred.deleted_segments)
    if cut and pred.outcome != "truncated":
        steps.append(NextStep(_kseg("reindex", "--check", pred.path),
                              "the .index that makes Kafka compute a lower log end (batches kept, never served)"))
    elif cut and committed:
        steps.append(NextStep(_kseg("recover", "--dry-run", "--salvage", pred.path),
                              "committed data is cut: the intact batches after the damage that can still be saved"))
    elif cut:
        steps.append(NextStep(_kseg("recover", "--dry-run", pred.path), "what Kafka's recovery keeps and cuts"))
    return steps + [s for s in served_steps(pred, unreadable, uncommitted) if s not in steps]


def log_dir_steps(logdir: LogDirPrediction) -> list[NextStep]:
    """``kseg dump`` of each log-directory checkpoint that cannot be read (R8.5, R9.4)."""
    steps = []
    for name, read in sorted(logdir.checkpoints.items()):
        if read.problem is not None:
            steps.append(NextStep(_kseg("dump", str(Path(logdir.path) / name)),
                                  f"{name} cannot be read: {read.problem}"))
    return steps

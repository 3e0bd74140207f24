"""The command lines every mutant is run through, and the log directory each mutant is laid out in.

Each command has a stable short name (the first part of a failure's bucket) and an argument list
with placeholders: ``{file}`` the mutant, ``{part}`` its partition directory, ``{logdir}`` the log
directory, ``{out}`` a fresh directory outside the log directory for ``-o``, ``{replica}`` the
untouched seed's partition (another replica, for ``diff``), outside the log directory too.  A .log mutant runs
every command with its main option sets; an index, snapshot or checkpoint mutant runs the commands
that read such files.  convert's target (magic, codec, drop and skip flags) is drawn per mutant
from the campaign's random stream, so every combination comes up over a campaign.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from tools.fuzz import hostile
from tools.fuzz.seeds import Seed

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
DECODERS = {
    "__consumer_offsets": "--offsets-decoder",
    "__transaction_state": "--transaction-log-decoder",
    "__cluster_metadata": "--cluster-metadata-decoder",
    "__remote_log_metadata": "--remote-log-metadata-decoder",
    "__share_group_state": "--share-group-state-decoder",
}


@dataclass(frozen=True)
class Command:
    """One kseg command line to run on a mutant."""

    name: str
    args: tuple[str, ...]

    @property
    def writes(self) -> bool:
        """Whether the command writes an output directory (``-o {out}``)."""
        return "{out}" in self.args

    def argv(self, paths: dict[str, Path]) -> list[str]:
        return [arg.format(**{k: str(v) for k, v in paths.items()}) for arg in self.args]


def _c(name: str, *args: str) -> Command:
    return Command(name, args)


DUMP_FILE = (
    _c("dump", "dump", "{file}"),
    _c("dump --deep-iteration", "dump", "--deep-iteration", "{file}"),
    _c("dump --print-data-log", "dump", "--print-data-log", "{file}"),
    _c("dump --format json", "dump", "--format", "json", "--deep-iteration", "--payload", "hex", "{file}"),
)
READ_ONLY_DIR = (
    _c("dump dir --print-data-log", "dump", "--print-data-log", "{part}"),
    _c("verify", "verify", "-j", "1", "{part}"),
    _c("verify --deep", "verify", "--deep", "--format", "json", "-j", "1", "{part}"),
    _c("reindex --check", "reindex", "--check", "{part}"),
    _c("recover --dry-run", "recover", "--dry-run", "--format", "json", "{part}"),
    _c("triage", "triage", "--all", "--format", "text", "{logdir}"),
    _c("stats --records", "stats", "--records", "--format", "json", "-j", "1", "{logdir}"),
    _c("grep --value-regex", "grep", "--value-regex", "v", "--format", "json", "{part}"),
    _c("grep --txn -c", "grep", "--txn", "aborted", "--header", "h", "-c", "{part}"),
    _c("txn", "txn", "--format", "json", "{logdir}"),
    _c("diff", "diff", "{part}", "{replica}"),
)
METADATA = (
    _c("metadata", "metadata", "--format", "json", "{part}"),
    _c("metadata check", "metadata", "check", "{logdir}"),
)
REPORT_OUT = _c("report --with-verify -o", "report", "--with-verify", "-j", "1", "{logdir}", "-o", "{out}/report.html")
RECOVER_OUT = (
    _c("recover -o", "recover", "{part}", "-o", "{out}/recovered"),
    _c("recover --salvage -o", "recover", "--salvage", "{part}", "-o", "{out}/salvaged"),
)
SIDE_FILE = (
    _c("dump", "dump", "{file}"),
    _c("dump --format json", "dump", "--format", "json", "{file}"),
    _c("dump --verify-index-only", "dump", "--verify-index-only", "{file}"),
)


def convert_command(rng: random.Random) -> Command:
    """convert with a target drawn from ``rng``; below magic 2 the drop flags let it get past refusals."""
    magic = rng.choice((0, 1, 2))
    codec = rng.choice(CODECS if magic else CODECS[:-1])
    args = ["convert", "{part}", "-o", "{out}/converted", "--to-magic", str(magic), "--compression", codec]
    if magic < 2:
        args += ["--drop-control", "--drop-headers"]
    if rng.random() < 0.5:
        args.append("--skip-corrupt")
    return Command(f"convert --to-magic {magic}", tuple(args))


def commands_for(seed: Seed, rng: random.Random) -> list[Command]:
    """The command lines for one mutant of ``seed``."""
    if seed.suffix != ".log":
        side = SIDE_FILE if seed.suffix in (".index", ".timeindex") else SIDE_FILE[:2]
        metadata = METADATA if seed.partition.startswith("__cluster_metadata-") else ()
        return [*side, *READ_ONLY_DIR, *RECOVER_OUT[:1], *metadata]
    found = [*DUMP_FILE, *READ_ONLY_DIR, *RECOVER_OUT, convert_command(rng), REPORT_OUT]
    topic = seed.partition.rsplit("-", 1)[0]
    if topic == "__cluster_metadata":
        found += METADATA
    decoder = DECODERS.get(topic)
    if decoder:
        found.append(_c(f"dump {decoder}", "dump", decoder, "{file}"))
    return found


def lay_out(seed: Seed, data: bytes, work: Path, attack: str | None = None,
            rng: random.Random | None = None) -> dict[str, Path]:
    """Write the mutant and its partition under ``work`` (with ``attack`` of :mod:`tools.fuzz.hostile`
    carried out), and the untouched seed as another replica; the placeholders' paths."""
    logdir = work / "in"
    part = logdir / hostile.partition_name(attack, seed.partition)
    target = _partition(seed, part, data)
    replica = _partition(seed, work / "replica" / seed.partition, seed.data)
    hostile.apply(attack, logdir, part, target, rng or random.Random(0))
    out = work / "out"
    out.mkdir()
    return {"file": target, "part": part, "logdir": logdir, "out": out, "replica": replica.parent}


def _partition(seed: Seed, part: Path, data: bytes) -> Path:
    """The seed's partition directory at ``part`` with ``data`` as its mutated file; that file's path."""
    part.mkdir(parents=True)
    for name, sibling in seed.siblings:
        (part / name).write_bytes(sibling)
    target = part / seed.name
    target.write_bytes(data)
    return target

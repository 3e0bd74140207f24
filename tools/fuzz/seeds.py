"""Seeds: the fixture files a campaign mutates, each with the partition around it.

A seed is one file (a .log, an index, a producer snapshot or a KRaft .checkpoint) plus the files
of its own segment (same base name) and its partition's side files, so that every command sees the
mutant where Kafka would put it: ``<logdir>/<topic>-<n>/<base offset>.<suffix>``.  Files whose name
is not a Kafka segment name (``fixtures/verify/corrupt/crc-flip.log``) are renamed to base offset 0;
files that are not inside a ``<topic>-<n>`` directory go into ``fuzz-0``.  Identical files are kept
once.  The default roots are the fixture sets of every command; ``fixtures/real`` holds Kafka-written
files, and ``--seeds`` adds others (``../shared/corpus/real`` for a longer local run).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ROOTS = tuple(
    REPO / "fixtures" / name for name in ("real", "dump", "verify", "recover", "reindex", "convert", "internal")
)
SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".checkpoint")
PARTITION_FILES = ("leader-epoch-checkpoint", "partition.metadata")
SEGMENT_STEM = re.compile(r"^\d{20}(-\d{10})?$")
PARTITION_DIR = re.compile(r"^[A-Za-z0-9._-]+-\d+$")
MAX_SEED_BYTES = 256 * 1024


@dataclass(frozen=True)
class Seed:
    """One file to mutate, under the names it gets in the mutant's log directory."""

    origin: str  # path relative to the repository (or absolute), for reports
    partition: str  # directory name inside the log directory
    name: str  # file name of the mutated file inside the partition
    data: bytes
    siblings: tuple[tuple[str, bytes], ...]  # the other files of the partition, (name, bytes)

    @property
    def suffix(self) -> str:
        return Path(self.name).suffix


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def _kafka_stem(stem: str) -> str:
    return stem if SEGMENT_STEM.match(stem) else "0" * 20


def _stem(path: Path) -> str:
    return path.name.split(".", 1)[0]


def _siblings(path: Path) -> tuple[tuple[str, bytes], ...]:
    """Files of the same segment, and the partition's side files, renamed as the seed is."""
    stem, new_stem = _stem(path), _kafka_stem(_stem(path))
    found = []
    for other in sorted(path.parent.iterdir()):
        if other == path or not other.is_file() or other.stat().st_size > MAX_SEED_BYTES:
            continue
        if other.name in PARTITION_FILES:
            found.append((other.name, other.read_bytes()))
        elif _stem(other) == stem and other.suffix in SUFFIXES:
            found.append((new_stem + other.suffix, other.read_bytes()))
    return tuple(found)


def load(path: Path) -> Seed:
    """The seed for one file."""
    parent = path.parent.name
    partition = parent if PARTITION_DIR.match(parent) else "fuzz-0"
    name = _kafka_stem(_stem(path)) + path.suffix
    return Seed(_display(path), partition, name, path.read_bytes(), _siblings(path))


def discover(roots: Iterable[Path] = DEFAULT_ROOTS) -> list[Seed]:
    """Every seed file under ``roots`` (sorted, so a campaign is reproducible), each content once."""
    seen: set[str] = set()
    seeds = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file() or path.is_symlink():
                continue
            if path.stat().st_size > MAX_SEED_BYTES:
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                seeds.append(load(path))
    return seeds

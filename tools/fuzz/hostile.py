"""Attacks on a mutant's surroundings, not its bytes: the families of tests/threats, drawn per mutant.

A mutated file tests the parsers; these test everything around them, the way
the threat campaign attacked kseg (docs/cli.md, "Threat model"):

- ``side-bomb:<name>``: a side file (``leader-epoch-checkpoint``, ``partition.metadata``, a log
  directory's offset checkpoint) grown, sparse, to 64 MiB -- kseg reads at most 16 MiB of any;
- ``index-bomb``: the segment's ``.index`` grown, sparse, to 64 MiB;
- ``forged-index``: one ``.index`` entry pointing into the middle of the segment (inside a record),
  where no batch starts;
- ``hostile-name``: the partition directory named with a terminal escape, shell syntax and a quote;
- ``large-value``: a batch holding one 12 MiB value of ``\\x1b`` bytes appended to the segment
  (each byte escapes to six in JSON).

The shrinking file (a writer truncating during the read) and the segment over 2 GiB stay in
tests/threats: the first cannot be replayed from a mutant's number, the second takes minutes.
The draw comes after the mutant's bytes and commands, from the same random stream, so adding
an attack did not change any mutant a campaign made before.
"""

from __future__ import annotations

import os
import random
import struct
from pathlib import Path

from kseg.format import encode_batch
from kseg.format.model import RecordSpec

#: Share of mutants that get one of these attacks.
RATE = 0.2
BOMB_BYTES = 64 << 20
LARGE_VALUE = 12 << 20
HOSTILE_TOPIC = "t\x1b]0;x\x07$(touch${IFS}PWNED)'q\""
PARTITION_SIDE = ("leader-epoch-checkpoint", "partition.metadata")
LOG_DIR_SIDE = ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint", "replication-offset-checkpoint")
#: Attack -> relative weight; the large value is the slowest, so the rarest.
ATTACKS = {
    **{f"side-bomb:{name}": 2 for name in PARTITION_SIDE + LOG_DIR_SIDE},
    "index-bomb": 2,
    "forged-index": 4,
    "hostile-name": 4,
    "large-value": 1,
}


def draw(rng: random.Random, suffix: str) -> str | None:
    """The attack for this mutant, or None (most mutants); the .log-only attacks only for a .log."""
    if rng.random() >= RATE:
        return None
    names = [n for n in ATTACKS if suffix == ".log" or n not in ("forged-index", "large-value")]
    return rng.choices(names, weights=[ATTACKS[n] for n in names])[0]


def partition_name(attack: str | None, partition: str) -> str:
    """The partition directory's name: under ``hostile-name`` its topic is hostile, its number kept."""
    if attack != "hostile-name":
        return partition
    return f"{HOSTILE_TOPIC}-{partition.rsplit('-', 1)[-1]}"


def apply(attack: str | None, logdir: Path, part: Path, target: Path, rng: random.Random) -> None:
    """Carry out ``attack`` on the laid-out partition (``target``: the mutated file)."""
    if attack is None or attack == "hostile-name":
        return
    if attack.startswith("side-bomb:"):
        name = attack.split(":", 1)[1]
        _sparse(part / name if name in PARTITION_SIDE else logdir / name, BOMB_BYTES)
    elif attack == "index-bomb":
        _sparse(_index_of(target), BOMB_BYTES)
    elif attack == "forged-index":
        _forge_index(target, rng)
    elif attack == "large-value":
        with target.open("ab") as handle:
            handle.write(encode_batch([RecordSpec(1 << 20, 1_700_000_000_000, b"k", b"\x1b" * LARGE_VALUE)],
                                      base_offset=1 << 20))


def _index_of(target: Path) -> Path:
    return target.with_suffix(".index")


def _sparse(path: Path, size: int) -> None:
    """``path`` (created if missing) grown to ``size`` bytes without writing them: a hole of zeros."""
    with path.open("ab"):
        pass
    os.truncate(path, max(size, path.stat().st_size))


def _forge_index(target: Path, rng: random.Random) -> None:
    """An .index of one entry: relative offset 1 at a position strictly inside the segment."""
    size = target.stat().st_size
    position = rng.randrange(1, size) if size > 1 else 0
    _index_of(target).write_bytes(struct.pack(">ii", 1, position))

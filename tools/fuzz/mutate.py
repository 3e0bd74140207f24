"""Mutation operators: blind byte damage plus attacks on the fields a parser trusts.

A mutant is one to three operators applied to a seed's bytes, then, for half the .log mutants,
every CRC recomputed: damage a parser only reaches once the CRC matches (record counts, varint
lengths, header counts, codec bits) is otherwise stopped at the CRC check.  Every choice comes from
the ``random.Random`` passed in, so a (campaign seed, mutant number) pair always gives the same bytes.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kseg.format.crc import crc32, crc32c
from tools.fuzz import fields as F
from tools.fuzz.attack import set_field
from tools.fuzz.inner import inner_attack

MAX_MUTANT_BYTES = 1 << 20
INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x07, 0x20)


@dataclass(frozen=True)
class Mutant:
    """A mutant's bytes and the operators that made it, for the failure report."""

    data: bytes
    steps: tuple[str, ...]


@dataclass(frozen=True)
class Context:
    """What an operator may look at: the kind of file and other seeds of that kind to splice from."""

    suffix: str
    donors: Sequence[bytes]


Operator = Callable[[random.Random, bytearray, Context], str]


def bit_flip(rng: random.Random, buf: bytearray, ctx: Context) -> str:
    positions = [rng.randrange(len(buf)) for _ in range(rng.choice((1, 1, 2, 4, 8)))]
    for pos in positions:
        buf[pos] ^= 1 << rng.randrange(8)
    return f"bit-flip@{positions}"


def byte_set(rng: random.Random, buf: bytearray, ctx: Context) -> str:
    pos = rng.randrange(len(buf))
    run = min(rng.choice((1, 1, 2, 4, 16, 512)), len(buf) - pos)
    value = rng.choice((*INTERESTING_BYTES, rng.randrange(256)))
    buf[pos:pos + run] = bytes([value]) * run
    return f"byte-set@{pos}x{run}={value:#x}"


def truncate(rng: random.Random, buf: bytearray, ctx: Context) -> str:
    ends = [e.end for e in F.entries(buf)] or [len(buf)]
    cut = rng.choice((rng.randrange(len(buf)), max(rng.choice(ends) - rng.randrange(1, 20), 0)))
    del buf[cut:]
    return f"truncate@{cut}"


def extend(rng: random.Random, buf: bytearray, ctx: Context) -> str:
    how = rng.choice(("zeros", "random", "copy") if buf else ("zeros", "random"))
    size = rng.choice((1, 7, 17, 61, 4096))
    if how == "zeros":
        buf.extend(bytes(size))
    elif how == "random":
        buf.extend(rng.randbytes(size))
    else:
        start = rng.randrange(len(buf))
        buf.extend(buf[start:start + size])
    return f"extend-{how}+{size}"


def field_attack(rng: random.Random, buf: bytearray, ctx: Context) -> str:
    if ctx.suffix == ".log":
        targets = F.log_fields(buf)
    elif ctx.suffix in (".index", ".timeindex", ".txnindex"):
        targets = F.index_fields(buf, ctx.suffix)
    else:
        targets = []
    targets = [f for f in targets if f.code == "varint" or f.position + struct.calcsize(f.code) <= len(buf)]
    if not targets:
        pos = rng.randrange(max(len(buf) - 3, 1)) & ~3
        targets = [F.Field("int32", pos, ">i")] if pos + 4 <= len(buf) else []
    if not targets:
        return bit_flip(rng, buf, ctx)
    return set_field(rng, buf, rng.choice(targets))


def splice(rng: random.Random, buf: bytearray, ctx: Context) -> str:
    """Insert (or overwrite with) a slice of another seed of the same kind, at an entry boundary."""
    donor = rng.choice(ctx.donors) if ctx.donors else bytes(buf)
    pieces = F.entries(donor) if ctx.suffix == ".log" else []
    if pieces:
        piece = rng.choice(pieces)
        chunk = donor[piece.position:piece.end]
    else:
        start = rng.randrange(max(len(donor), 1))
        chunk = donor[start:start + rng.choice((8, 12, 34, 64, 256))]
    bounds = [0, *[e.end for e in F.entries(buf)]]
    at = rng.choice(bounds)
    if rng.random() < 0.5:
        buf[at:at] = chunk
        return f"splice-insert@{at}+{len(chunk)}"
    buf[at:at + len(chunk)] = chunk
    return f"splice-overwrite@{at}+{len(chunk)}"


def compressed_inner(rng: random.Random, buf: bytearray, ctx: Context) -> str:
    """A field inside a compressed payload (see tools/fuzz/inner.py), else a header field."""
    step = inner_attack(rng, buf) if ctx.suffix == ".log" else None
    return step or field_attack(rng, buf, ctx)


OPERATORS: tuple[Operator, ...] = (
    bit_flip, byte_set, truncate, extend, field_attack, field_attack, splice, compressed_inner,
)


def fix_crcs(buf: bytearray) -> None:
    """Recompute the CRC of every entry framed in ``buf`` (CRC-32C for V2, CRC-32 below)."""
    for at, start, end, is_v2 in F.crc_ranges(buf):
        value = crc32c(bytes(buf[start:end])) if is_v2 else crc32(bytes(buf[start:end]))
        buf[at:at + 4] = value.to_bytes(4, "big")


def mutate(data: bytes, ctx: Context, rng: random.Random) -> Mutant:
    """One mutant of ``data``: one to three operators, then the CRCs fixed for half the .log mutants."""
    buf = bytearray(data)
    steps: list[str] = []
    if buf and ctx.suffix == ".log" and rng.random() < 0.15:  # compressed seeds are few: attack them more often
        steps.append(compressed_inner(rng, buf, ctx))
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        operator = rng.choice(OPERATORS)
        if not buf and operator is not extend:
            operator = extend
        steps.append(operator(rng, buf, ctx))
    inner = any(step.startswith("inner@") for step in steps)
    if ctx.suffix == ".log" and (inner or rng.random() < 0.5):
        fix_crcs(buf)
        steps.append("crc-fixed")
    return Mutant(bytes(buf[:MAX_MUTANT_BYTES]), tuple(steps))

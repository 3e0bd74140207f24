"""A HyperLogLog sketch: distinct keys of a partition in a fixed 4 KiB, whatever the partition holds.

Flajolet et al.'s estimator with the small-range (linear counting) correction; 2**12
registers give a standard error of about 1.6 %.  The hash is BLAKE2b (stable across runs
and processes, unlike ``hash()``), so sketches made in worker processes merge exactly.
"""

from __future__ import annotations

import math
from hashlib import blake2b

PRECISION = 12
REGISTERS = 1 << PRECISION
_ALPHA = 0.7213 / (1 + 1.079 / REGISTERS)


class HyperLogLog:
    """Registers of one sketch; :meth:`add` a key, :meth:`merge` another sketch, :meth:`estimate`."""

    __slots__ = ("registers",)

    def __init__(self, registers: bytes | None = None) -> None:
        self.registers = bytearray(registers if registers is not None else REGISTERS)

    def add(self, key: bytes) -> None:
        """Count ``key`` (bytes): the first 12 bits of its hash pick a register, the rest its rank."""
        h = int.from_bytes(blake2b(key, digest_size=8).digest(), "big")
        index = h >> (64 - PRECISION)
        rest = h & ((1 << (64 - PRECISION)) - 1)
        rank = (64 - PRECISION) - rest.bit_length() + 1
        self.registers[index] = max(self.registers[index], rank)

    def merge(self, other: HyperLogLog) -> None:
        """This sketch becomes the sketch of both key sets (register-wise maximum)."""
        self.registers = bytearray(max(a, b) for a, b in zip(self.registers, other.registers, strict=True))

    def estimate(self) -> int:
        """The estimated number of distinct keys added (exact-ish below ~2.5 * 4096 via linear counting)."""
        total = sum(2.0 ** -r for r in self.registers)
        raw = _ALPHA * REGISTERS * REGISTERS / total
        zeros = self.registers.count(0)
        if raw <= 2.5 * REGISTERS and zeros:
            return round(REGISTERS * math.log(REGISTERS / zeros))
        return round(raw)

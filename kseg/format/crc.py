"""The two checksums of Kafka's log formats.

* magic 0 and 1 messages: CRC-32 (zlib/IEEE, ``java.util.zip.CRC32``) over the
  bytes from the magic byte to the end of the message;
* magic 2 record batches and producer-state snapshots: CRC-32C (Castagnoli,
  ``Crc32C``) -- for batches over the attributes field to the end of the batch.

Both are C-speed (zlib and the ``crc32c`` extension) and accept memoryviews, so
no batch bytes are copied to check them.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import zlib
from collections.abc import Callable


def _load_crc32c() -> Callable[..., int]:
    """The ``crc32c`` package's C function, loaded without running the package's ``__init__``.

    That ``__init__`` imports ``importlib.metadata`` just to read its own
    version, which costs ~40 ms of start-up -- a fifth of verifying a 1 GiB
    segment (bench/bench_verify.py).  Falls back to the normal import if the
    package's layout is unexpected.
    """
    try:
        spec = importlib.util.find_spec("crc32c")
        for location in (spec.submodule_search_locations or []) if spec else []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                candidate = os.path.join(location, "_crc32c" + suffix)
                if os.path.isfile(candidate):
                    loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", candidate)
                    module_spec = importlib.util.spec_from_file_location("crc32c._crc32c", candidate, loader=loader)
                    if module_spec is None:
                        continue
                    module = importlib.util.module_from_spec(module_spec)
                    loader.exec_module(module)
                    return module.crc32c
    except (ImportError, OSError, AttributeError):
        pass
    from crc32c import crc32c as package_crc32c

    return package_crc32c


#: The extension's function itself: unsigned already, for the per-batch loops that cannot afford a wrapper.
crc32c_unsigned = _load_crc32c()


def crc32(data: bytes | memoryview) -> int:
    """CRC-32 as ``java.util.zip.CRC32`` computes it, unsigned."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32c(data: bytes | memoryview) -> int:
    """CRC-32C as ``org.apache.kafka.common.utils.Crc32C`` computes it, unsigned."""
    return crc32c_unsigned(data) & 0xFFFFFFFF

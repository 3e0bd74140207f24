"""kseg.pyz's start-up (copied into the archive as ``__main__.py``; standard library only).

A zip cannot hand compiled modules (kseg's core, lz4, zstandard, ...) to the import system, so the
first run extracts the payload to a cache directory named by its digest and later runs reuse it:
``$KSEG_PYZ_CACHE``, else ``$XDG_CACHE_HOME/kseg``, else ``~/.cache/kseg``, else a private
directory under the system's temporary directory. The evidence is never written: only the cache.
"""

import json
import os
import sys
import tempfile
import zipfile

MANIFEST = "kseg-pyz.json"


def _fail(message):
    sys.stderr.write("kseg.pyz: " + message + "\n")
    sys.exit(2)


def _archive():
    here = os.path.dirname(os.path.abspath(__file__))
    if zipfile.is_zipfile(here):
        return here
    return os.path.abspath(sys.argv[0])


def _private_dir(path):
    """Create ``path`` for this user only, or refuse one another user could have planted."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.stat(path)
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
        _fail("cache directory " + path + " is not this user's own; set KSEG_PYZ_CACHE")
    return path


def _cache_roots():
    if os.environ.get("KSEG_PYZ_CACHE"):
        yield os.environ["KSEG_PYZ_CACHE"]
        return
    xdg = os.environ.get("XDG_CACHE_HOME")
    yield os.path.join(xdg, "kseg") if xdg else os.path.join(os.path.expanduser("~"), ".cache", "kseg")
    uid = str(os.getuid()) if hasattr(os, "getuid") else "user"
    yield os.path.join(tempfile.gettempdir(), "kseg-" + uid)


def _extract(archive, names, target):
    """Extract ``names`` into ``target`` through a temporary sibling renamed at the end (atomic)."""
    root = os.path.dirname(target)
    work = tempfile.mkdtemp(prefix=".partial-", dir=root)
    with zipfile.ZipFile(archive) as zf:
        for name in names:
            zf.extract(name, work)
    try:
        os.rename(os.path.join(work, "payload"), target)
    except OSError:
        if not os.path.isdir(target):
            raise
    finally:
        _remove_tree(work)


def _remove_tree(path):
    for parent, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(parent, name))
        for name in dirs:
            os.rmdir(os.path.join(parent, name))
    os.rmdir(path)


def _unpacked(archive, manifest, tag):
    """The extracted payload's directory for this Python (extracting it on the first run)."""
    errors = []
    for root in _cache_roots():
        target = os.path.join(root, "pyz-" + manifest["digest"][:16] + "-" + tag)
        try:
            _private_dir(root)
            if os.path.isdir(target):
                return target
            with zipfile.ZipFile(archive) as zf:
                names = [n for n in zf.namelist() if n.startswith(("payload/common/", "payload/" + tag + "/"))]
            _extract(archive, names, target)
            return target
        except OSError as err:
            errors.append(root + ": " + str(err))
    _fail("cannot extract to a cache directory (" + "; ".join(errors) + "); set KSEG_PYZ_CACHE")
    return None


def main():
    if sys.version_info < (3, 10):
        _fail("kseg needs Python 3.10 or newer; this is " + sys.version.split()[0])
    archive = _archive()
    with zipfile.ZipFile(archive) as zf:
        manifest = json.loads(zf.read(MANIFEST).decode("utf-8"))
    tag = "cp%d%d" % sys.version_info[:2]
    if tag not in manifest["pythons"]:
        built = ", ".join(manifest["pythons"])
        _fail("this kseg.pyz holds dependencies for CPython " + built + "; this is " + sys.version.split()[0])
    target = _unpacked(archive, manifest, tag)
    sys.path[:] = [os.path.join(target, "common"), os.path.join(target, tag)] + [
        p for p in sys.path if os.path.abspath(p or ".") != archive
    ]
    from kseg.cli import main as kseg_main

    sys.argv[0] = "kseg"
    kseg_main()


main()

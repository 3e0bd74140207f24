"""The bundled real fixtures are exactly the files their provenance lists."""

import hashlib
import re

from support import FIXTURES


def test_real_fixtures_match_their_provenance():
    doc = (FIXTURES / "real" / "PROVENANCE.md").read_text()
    rows = re.findall(r"^\| `(kafka-logs/[^`]+)` \|[^|]+\| (\d+) \| `([0-9a-f]{64})` \|", doc, re.MULTILINE)
    listed = {name for name, _, _ in rows}
    on_disk = {str(p.relative_to(FIXTURES / "real")) for p in (FIXTURES / "real" / "kafka-logs").rglob("*") if p.is_file()}
    assert listed == on_disk and len(rows) == 11
    for name, size, digest in rows:
        data = (FIXTURES / "real" / name).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (int(size), digest), name


def test_broker_fixtures_match_their_provenance():
    """fixtures/broker/ (tools/make_broker_fixtures.py): every file listed with its size and sha256."""
    root = FIXTURES / "broker"
    doc = (root / "PROVENANCE.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \| (\d+) \| `([0-9a-f]{64})` \|", doc, re.MULTILINE)
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} - {"PROVENANCE.md"}
    assert {name for name, _, _ in rows} == on_disk and len(rows) > 100
    for name, size, digest in rows:
        data = (root / name).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (int(size), digest), name

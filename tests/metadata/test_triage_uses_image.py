"""Triage's stray rule (R1.5) takes its metadata half from the disk's ``__cluster_metadata-0`` when it is there
(``LogManager.isStrayKraftReplica`` on the image at the end of the log, with ``node.id`` from meta.properties),
and says what it assumed when it is not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli

BROKER = FIXTURES / "broker" / "restarted-clean"


def _triage(path: Path) -> dict[str, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["triage", str(path), "--format", "json"])
    lines = [json.loads(line) for line in result.output.splitlines()]
    return {Path(e["path"]).name: e for e in lines if e["type"] == "partition"}


def test_the_image_decides_the_stray_rename(tmp_path: Path) -> None:
    disk = tmp_path / "data"
    shutil.copytree(BROKER, disk)
    (disk / "ghost-0").mkdir()
    (disk / "ghost-0" / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAw\n")
    parts = _triage(disk)
    assert parts["ghost-0"]["disposition"] == "renamed_stray"
    assert parts["ghost-0"]["renamed_to"] == "ghost-0.<uuid>-stray"
    assert parts["orders-0"]["disposition"] == "current"
    assert all(p["assumed"] == [] for p in parts.values())


def test_without_a_metadata_log_it_is_assumed(tmp_path: Path) -> None:
    disk = tmp_path / "data"
    shutil.copytree(BROKER, disk)
    shutil.rmtree(disk / "__cluster_metadata-0")
    (disk / "ghost-0").mkdir()
    (disk / "ghost-0" / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAw\n")
    parts = _triage(disk)
    assert parts["ghost-0"]["disposition"] == "current"
    assert parts["ghost-0"]["assumed"] == [
        "the controller's metadata image knows topic id AAAAAAAAAAAAAAAAAAAAAw and lists this broker among the "
        "replicas of ghost-0; otherwise Kafka renames the directory -stray (R1.5)"]

"""The shape of the package, held by tests: layers, no cycles, sizes, byte layouts in one place.

The layers, from the bottom (README, "Layout"): ``errors`` -> ``format/`` ->
``segment``/``index`` -> ``recovery/`` -> ``ops/`` -> the edge (``render/``,
``commands/``, ``cli``, ``spark/``).  An import may only point to the same
layer or one below it -- imports inside functions count too -- and no set of
modules may import each other in a circle.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import REPO

PACKAGE = REPO / "kseg"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60

LAYERS = {
    "kseg": 0,
    "kseg.errors": 0,
    "kseg.format": 1,
    "kseg.segment": 2,
    "kseg.writing": 2,
    "kseg.index": 2,
    "kseg.decode": 2,
    "kseg.locks": 2,
    "kseg.mapguard": 2,
    "kseg.sidefile": 2,
    "kseg.listing": 2,
    "kseg.recovery": 3,
    "kseg.metadata": 3,
    "kseg.ops": 4,
    "kseg.render": 5,
    "kseg.spark": 5,
    "kseg.commands": 5,
    "kseg.cli": 5,
    "kseg.__main__": 6,
}
#: ops modules every command may use; any other ops module belongs to one command.
SHARED_OPS = {"discover"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    """The kseg module an imported dotted name lands in (a package's ``__init__`` for a package)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> Iterator[tuple[str, int]]:
    """(imported kseg module, line) for every import in the module, at any depth."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for name in names:
            target = _resolve(name) if name.startswith("kseg") else None
            if target is not None and target != module:
                yield target, node.lineno


GRAPH = {module: {target for target, _ in _imports(module)} for module in MODULES}


def _layer(module: str) -> int:
    parts = module.split(".")
    for depth in range(len(parts), 0, -1):
        prefix = ".".join(parts[:depth])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise AssertionError(f"{module} belongs to no layer: add it to LAYERS in this test")


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    return found


def test_the_package_has_no_import_cycle():
    # a package's __init__ importing its own submodules is not a cycle of the design
    cycles = [c for c in _cycles() if not all(m == c[0] or m.startswith(c[0] + ".") for m in c)]
    assert cycles == []


def test_imports_point_down_the_layers():
    upward = [
        f"{module} (layer {_layer(module)}) imports {target} (layer {_layer(target)}) at line {line}"
        for module in MODULES
        for target, line in _imports(module)
        if _layer(target) > _layer(module)
    ]
    assert upward == []


def _imports_the_core(module: str) -> bool:
    """Whether the module names ``kseg._core`` (the compiled core) in any import, at any depth."""
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import) and any(a.name.startswith("kseg._core") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (
            (node.module or "").startswith("kseg._core")
            or (node.module == "kseg" and any(a.name == "_core" for a in node.names))
        ):
            return True
    return False


def test_only_format_imports_the_compiled_core():
    """kseg._core sits behind format/ (docs/core.md): only format/_core.py, its one door, imports it."""
    assert [m for m in MODULES if _imports_the_core(m)] == ["kseg.format._core"]


def _ops_command(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) < 3 or parts[1] != "ops":
        return None
    return parts[2].split("_")[0]


def test_no_command_reaches_into_another_commands_ops():
    crossings = [
        f"{module} imports {target}"
        for module in MODULES
        for target in GRAPH[module]
        if (mine := _ops_command(module)) is not None
        and (theirs := _ops_command(target)) is not None
        and theirs not in SHARED_OPS
        and theirs != mine
    ]
    assert crossings == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_size(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{MODULES[module]} has {lines} lines"


def test_function_sizes():
    long = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {size} lines")
    assert long == []


BYTE_LAYOUT_HOMES = ("kseg/format/", "kseg/index.py")


def test_byte_layouts_are_declared_only_in_format_and_index():
    declared = re.compile(r"struct\.Struct\(|^\s*LOG_OVERHEAD\s*=|^\s*RECORD_BATCH_OVERHEAD\s*=", re.M)
    strays = [
        str(path.relative_to(REPO))
        for path in MODULES.values()
        if not str(path.relative_to(REPO)).startswith(BYTE_LAYOUT_HOMES) and declared.search(path.read_text())
    ]
    assert strays == []


def test_framing_constants_are_declared_once():
    declared = re.compile(r"^(LOG_OVERHEAD|HEADER_SIZE_UP_TO_MAGIC|MIN_RECORD_OVERHEAD)\s*=", re.M)
    homes = sorted(
        str(path.relative_to(REPO)) for path in MODULES.values() if declared.search(path.read_text())
    )
    assert homes == ["kseg/format/layout.py"]


def test_evidence_is_opened_only_through_the_segment_layer():
    """Every read of an input goes through kseg.segment (O_NOATIME, read-only mapping)."""
    raw_open = re.compile(r"\bos\.open\((?!os\.devnull)|\bmmap\.mmap\((?!-1,)|\.read_bytes\(\)|\bopen\([^)]*[\"']rb[\"']")
    strays = [
        str(path.relative_to(REPO))
        for path in MODULES.values()
        # writing.py opens only what kseg writes: an output directory to fsync it
        if path.name not in ("segment.py", "writing.py") and raw_open.search(path.read_text())
    ]
    assert strays == []

"""The layering in DEVELOPERS.md: only the UI package may import Textual."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "trainwatch"
UI_ONLY = ("textual", "textual_serve", "plotext")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_only_the_ui_package_imports_textual() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "ui" or rel.name == "demo.py":
            continue
        bad = _imports(path) & set(UI_ONLY)
        if bad:
            offenders.append(f"{rel}: {sorted(bad)}")
    assert offenders == []


def test_parsing_and_store_layers_do_not_import_views() -> None:
    for layer in ("parsers", "store", "lines", "sources"):
        for path in (PACKAGE / layer).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module:
                    assert not node.module.startswith(("trainwatch.ui", "trainwatch.views")), path

"""The layers hold: the import-linter contracts of pyproject.toml (README "How it is built"), and at
run time the commands a script runs (`summary`, `export`, `check`) load no Textual, plotext or
textual-serve: starting them stays fast, and they work where only the core is installed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "megatron__gpt2_deepspeed.log"
UI_ONLY = ("textual", "textual_serve", "plotext")

# Runs one CLI command in this interpreter, then writes which UI modules it loaded: import
# order, lazy imports and re-exports all count, which no reading of the source can promise.
_HYGIENE = """
import json, sys
from trainwatch.cli import main
out, args = sys.argv[1], sys.argv[2:]
try:
    main(args, standalone_mode=False)
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {ui})
open(out, "w").write(json.dumps(loaded))
"""


def test_the_import_contracts_are_kept() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "BROKEN" not in done.stdout


def test_the_readme_draws_the_layers_of_the_contract() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    section = (ROOT / "README.md").read_text().split("## How it is built", 1)[1]
    drawing = section.split("```", 2)[1]
    drawn = [re.split(r"\s{2,}", line)[0] for line in drawing.splitlines() if line and not line[0].isspace()]
    assert drawn == layers


def _run_command(tmp_path: Path, *args: str) -> tuple[list[str], str]:
    loaded = tmp_path / "loaded.json"
    script = _HYGIENE.replace("{ui}", repr(set(UI_ONLY)))
    done = subprocess.run(
        [sys.executable, "-c", script, str(loaded), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(loaded.read_text()), done.stdout


def test_summary_loads_no_textual(tmp_path: Path) -> None:
    loaded, out = _run_command(tmp_path, "summary", str(SAMPLE))
    assert "step 23000 of 1000000" in out  # the report was printed
    assert loaded == []


def test_summary_json_loads_no_textual(tmp_path: Path) -> None:
    loaded, out = _run_command(tmp_path, "summary", "--json", str(SAMPLE))
    assert json.loads(out)["last_step"] == {"0": 23000}
    assert loaded == []


def test_export_loads_no_textual(tmp_path: Path) -> None:
    loaded, out = _run_command(tmp_path, "export", str(SAMPLE))
    kinds = {json.loads(line)["type"] for line in out.splitlines()}
    assert "step" in kinds
    assert loaded == []


def test_export_csv_loads_no_textual(tmp_path: Path) -> None:
    loaded, out = _run_command(tmp_path, "export", "--format", "csv", str(SAMPLE))
    header, first = out.splitlines()[:2]
    assert header.startswith("source,rank,step,") and first.endswith(",0.0,,")
    assert loaded == []

"""The hostile samples give exactly what their clean originals give, and only inert text.

sample_logs/hostile__megatron_osc52_title_markup.log: lines 336-400 of
sample_logs/megatron__gpt2_deepspeed.log (seed 004) with an OSC 52 clipboard write appended to
every iteration line (BEL- and ST-terminated), and lines holding a title change, Rich markup
(`[/]`, `[@click=app.quit]`), 8-bit CSI/OSC, a clear-screen/cursor/alt-screen burst, a DCS
request, invalid UTF-8 with NUL bytes, a bidi override and an unterminated OSC inserted.
sample_logs/hostile__deepspeed_binary_garbage.log: lines 669-676 and 696-716 of
sample_logs/deepspeed__coca_4rank_zero1_sighup.log (seed 002) around 6000 random bytes.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from trainwatch.pipeline import Pipeline
from trainwatch.records import Event, Phases, Record, Step

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
HOSTILE = SAMPLES / "hostile__megatron_osc52_title_markup.log"
CLEAN = SAMPLES / "megatron__gpt2_deepspeed.log"
GARBAGE = SAMPLES / "hostile__deepspeed_binary_garbage.log"
FORBIDDEN = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _read(path: Path) -> tuple[list[Record], Pipeline]:
    records: list[Record] = []
    pipeline = Pipeline([str(path)], sink=records.extend)
    pipeline.read_to_end()
    return records, pipeline


def test_hostile_megatron_sample_gives_the_clean_numbers() -> None:
    hostile, pipeline = _read(HOSTILE)
    clean, _ = _read(CLEAN)
    clean_steps = {(r.rank, r.step): r.metrics for r in clean if isinstance(r, Step) and "loss" in r.metrics}
    steps = {(r.rank, r.step): r.metrics for r in hostile if isinstance(r, Step) and "loss" in r.metrics}
    assert sorted(step for _rank, step in steps) == [5, 10, 15, 20, 25, 30, 35, 40]
    for key, metrics in steps.items():
        assert metrics == clean_steps[key]
    # the breakdown lines around the hostile ones are all there
    assert len([r for r in hostile if isinstance(r, Phases)]) >= 40
    reader = next(iter(pipeline.readers.values()))
    assert reader.parser.stats.parser_errors == 0


def test_hostile_lines_are_kept_as_inert_text() -> None:
    _records, pipeline = _read(HOSTILE)
    recent = [text for _no, text in next(iter(pipeline.readers.values())).state.recent]
    for text in recent:
        assert FORBIDDEN.search(text) is None, text
    # nothing the log said is lost: the markup stays literal text, the real text survives
    assert "[/] [@click=app.quit]quit[/] [bold red]markup[/bold red] [link=http://evil.example]x[/link]" in recent
    assert " 8-bit CSI and OSC" in recent
    assert "\ufffd2J raw 8-bit bytes (not UTF-8)" in recent
    assert "bidi: filegnp.exe" in recent
    assert not any("pwned" in t or "aGVsbG8=" in t for t in recent)


def test_binary_garbage_sample_keeps_the_deepspeed_records() -> None:
    records, pipeline = _read(GARBAGE)
    steps = {r.step for r in records if isinstance(r, Step)}
    assert 1000 in steps  # step=1000 progress + timer.py line before the garbage
    overflows = [r for r in records if isinstance(r, Event) and r.kind == "overflow"]
    assert [e.data for e in overflows] == [
        {"attempted_scale": 65536, "new_scale": 65536},
        {"attempted_scale": 65536, "new_scale": 32768},
    ]
    assert next(iter(pipeline.readers.values())).parser.stats.parser_errors == 0


def test_summary_prints_markup_in_a_crash_message_literally(tmp_path: Path) -> None:
    """Rich renders summary text; a log's `[/]` must not be markup (MarkupError) or an action."""
    log = tmp_path / "crash.log"
    log.write_bytes(
        b"Traceback (most recent call last):\n"
        b'  File "train.py", line 1, in <module>\n'
        b"    main()\n"
        b"RuntimeError: [/] [@click=app.quit] [bold]boom[/bold]\x1b]52;c;aGVsbG8=\x07\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "trainwatch", "summary", str(log)], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    assert "RuntimeError: [/] [@click=app.quit] [bold]boom[/bold]" in proc.stdout
    assert "\x1b]52" not in proc.stdout and "aGVsbG8=" not in proc.stdout

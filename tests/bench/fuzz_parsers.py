"""Coverage-guided fuzzing (atheris) of the whole line path: bytes -> LineAssembler -> SourceParser
over every registered parser. Run by hand; not part of `make test`.

    .venv/bin/pip install atheris            # 3.0.0 has a wheel for CPython 3.11 / Linux x86-64
    .venv/bin/python tests/bench/fuzz_parsers.py -max_total_time=180 -rss_limit_mb=2048 /tmp/twfuzz
    .venv/bin/python tests/bench/fuzz_parsers.py --skip-known -max_total_time=180 /tmp/twfuzz

Each input is either raw bytes (fed in random chunks, so escape sequences, `\\r` frames and
invalid UTF-8 split across reads) or, half of the time, a few real log lines taken from
/work/shared and sample_logs (tests/hostile/_hostile_corpus.py) damaged by the same mutations
the hypothesis tests use. A finding is any exception, any `parser_errors`, or any record that
breaks the contract (non-numeric metric, non-int step, text with an escape character, not JSON).
The harness replaces the runner's per-parser `try` so a parser's exception surfaces with its
traceback. libFuzzer writes the input to `crash-<sha1>`; turn it into a test in tests/hostile/.

`--skip-known` drops inputs holding a run of more than 4300 digits (the known rank.py bug: int()
of a launcher prefix such as `[default<5000 digits>]:` raises outside the per-parser guard) so a
run can look for other bugs while that one is open.

Measured here (2 cores shared, atheris 3.0.0, Python 3.11.7): ~700-1800 execs/s; three runs of
4-5 minutes found two contract bugs (metric named '' from nanochat's and fairseq's `| : 529,882` /
`, =53627,` fields; fixed, tests in tests/hostile/test_hostile_parsers.py); the known rank.py bug
is found within seconds without --skip-known. Not a fuzz finding but measured alongside: one
1 GiB line between two Megatron iteration lines, read by `trainwatch export`, took 3.0 s and
50 MB peak RSS, and both iterations were exported.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hostile"))

with atheris.instrument_imports():
    from _hostile_corpus import contract_problems, corpus, mutate, run_lines

    from trainwatch.lines.assembler import Kind, LineAssembler
    from trainwatch.parsers.registry import parser_classes
    from trainwatch.parsers.runner import SourceParser

    parser_classes()  # imports every format module, inside the block so they are instrumented


def _raising_feed(self: SourceParser, parser, text, line) -> bool:  # type: ignore[no-untyped-def]
    """The runner swallows parser exceptions (counting them); here they surface with a traceback."""
    return bool(parser.feed(text, line, self))


SourceParser._safe_feed = _raising_feed  # type: ignore[method-assign]

_LONG_DIGITS = re.compile(r"\d{4300}")
SKIP_KNOWN = "--skip-known" in sys.argv
if SKIP_KNOWN:
    sys.argv.remove("--skip-known")
LINES = corpus()


def _raw_lines(fdp: atheris.FuzzedDataProvider) -> tuple[list[str], list[bool]]:
    data = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096))
    asm = LineAssembler()
    lines = []
    at = 0
    while at < len(data):
        step = fdp.ConsumeIntInRange(1, 512)
        lines += asm.feed(data[at : at + step])
        at += step
    lines += asm.finish() if fdp.ConsumeBool() else asm.abandon()
    texts = [line.text for line in lines if not line.display_only]
    frames = [line.kind is Kind.FRAME for line in lines if not line.display_only]
    return texts, frames


def _damaged_lines(fdp: atheris.FuzzedDataProvider) -> tuple[list[str], list[bool]]:
    start = fdp.ConsumeIntInRange(0, len(LINES) - 1)
    texts = list(LINES[start : start + fdp.ConsumeIntInRange(1, 6)])
    for i in range(len(texts)):
        for _ in range(fdp.ConsumeIntInRange(0, 3)):
            texts[i] = mutate(texts[i], fdp.ConsumeInt(2), fdp.ConsumeInt(2), fdp.ConsumeInt(2))
    frames = [fdp.ConsumeBool() for _ in texts]
    return texts, frames


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    texts, frames = _damaged_lines(fdp) if fdp.ConsumeBool() else _raw_lines(fdp)
    if SKIP_KNOWN and any(_LONG_DIGITS.search(t) for t in texts):
        return
    records, stats = run_lines(texts, frames=frames)
    if stats.parser_errors:
        raise AssertionError(f"parser_errors={stats.parser_errors} for {texts!r}"[:4000])
    problems = contract_problems(records)
    if problems:
        raise AssertionError(f"{problems[:3]} for {texts!r}"[:4000])


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

"""Megatron-LM / Megatron-DeepSpeed: iteration lines, timers, memory reports, validation loss.

The iteration line is a `|`-separated list of `label: value` (new) or `label value` (old)
fields, optionally behind a `[2024-04-06 02:59:36]` timestamp (which follows a leading space,
so it is read here rather than by the generic line-start stamp). Every numeric field is kept:
canonical names where the contract has one, snake_case otherwise; `(ms)` fields are converted
to seconds. A skipped or NaN iteration prints no `lm loss`, so its record has no loss.
Every field is printed with a closing ` |`; text after the last `|` is a line cut by a torn
write (a log read while it is written, a killed job) and is not read as a value.

Timers follow the iteration they time: a `time (ms) | forward: ..` line and a
`(min, max) time across ranks (ms):` block become phases of the last iteration seen (step null
before the first: the setup timers). A block has no end marker; it is released on the next
line offered to this parser that is not one of its rows, at end of input, or as soon as it has
the same rows as the previous complete block (so a live view is not one interval late).

`memory (MB)` is torch's allocated bytes / 2**20, so GiB = MB / 1024.

A record whose head was cut (` | learning rate: ... | lm loss: ... |`) on the first line (a pasted
excerpt, a file rotated mid-record) is read as a step with no number.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import ClassVar

from trainwatch.lines.assembler import Line
from trainwatch.names import metric_name, phase_name, snake
from trainwatch.numbers import ms_to_s, parse_number, seconds_of_ms
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.bulk import DECIMAL, NUMBER, PADDED_INT, PADDED_NUMBER, BulkTemplate, Part, Var

_STAMP = re.compile(r"^\s*\[(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?\]\s*")
# The stamp recent Megatron-LM prints (`[2024-04-06 02:56:58]`, no fraction), as a variable part of a
# bulk shape: one `_STAMP` reads. Its substrings are digit runs between single `- :T`, so that no
# trigger (`---`, `, `, `[.`) can straddle it.
_STAMP_PART = Var(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}", r"[- :T]?(?:\d+[- :T])*\d*", "2020-01-01 00:00:00")
MAX_WRAPPED = 4000  # a wrapped record longer than this is not one
_ITERATION = re.compile(r"(?<![\w-])iteration[\s=]*(?P<n>\d{1,18}(?!\d))\s*/\s*(?P<m>\d{1,18}(?!\d))\s*\|")
# (Each run of spaces has one place to go: a label ends in a non-space, then `\s*[:=]\s*` or `\s+`;
# `label?\s*(?::|=|\s)\s*` split a long run every way from each of the label's ends, minutes a line.)
_FIELD = re.compile(r"^\s*(?P<label>[A-Za-z](?:[^|:=]*?[^|:=\s])?)(?:\s*[:=]\s*|\s+)(?P<value>[-+]?[\w.+-]+)\s*$")
_TIMERS = re.compile(r"^\s*time \(ms\)\s*\|(?P<body>.*)$")
_TIMER_FIELD = re.compile(r"^\s*(?P<name>[A-Za-z](?:[\w ./-]*[\w./-])?)\s*:\s*(?P<value>\S+)\s*$")
# The timers line as Megatron prints it (`%.2f`, single spaces between words and around `|`):
# validated and split by two C-level regex calls; any other body takes the general path.
_PRINTED_TIMERS = re.compile(
    r"(?: [A-Za-z][\w./-]*(?: [\w./-]+)*: \d+\.\d+ \|)* [A-Za-z][\w./-]*(?: [\w./-]+)*: \d+\.\d+"
)
_PRINTED_TIMER = re.compile(r"([A-Za-z][\w./-]*(?: [\w./-]+)*): (\d+\.\d+)")
# Iteration-line fields as Megatron prints them (` label: 1.234E+00 |`, ` loss scale 4096.0 |`,
# Megatron-LM's right-aligned ` consumed samples:        51200 |`): words starting with a letter
# (`mtp_1 loss`; no `:` or `=`), spaces, one number `float()` reads as `parse_number` does.
_LABEL = r"[A-Za-z][\w()/-]*(?: [A-Za-z(][\w()/-]*)*"
_NUMBER = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_PRINTED_FIELDS = re.compile(rf"(?: {_LABEL}:? +{_NUMBER} \|)*")
_PRINTED_FIELD = re.compile(rf" ({_LABEL}):? +({_NUMBER}) \|")
FAST = True  # tests/perf compare both paths
_BLOCK_HEADER = re.compile(r"^\s*\(min, max\) time across ranks \(ms\):\s*$")
_BLOCK_ROW = re.compile(
    r"^\s+(?P<name>[A-Za-z][\w ./-]*?)\s*\.{2,}:?\s*\((?P<min>[^,()\s]+),\s*(?P<max>[^,()\s]+)\)\s*$"
)
_MEMORY = re.compile(
    r"(?:\[Rank (?P<rank>\d{1,18}(?!\d))\]\s*)?\(?after (?P<n>\d{1,18}(?!\d)) iterations\)? memory \(MB\)\s*\|(?P<body>.*)$"
)
_VALIDATION = re.compile(
    r"(?:validation|valid) loss at iteration (?P<n>\d{1,18}(?!\d))\s*(?:on [\w -]+?)?\s*\|(?P<body>.*)$"
)

# Megatron labels (snake_cased) the shared table does not know.
_ALIASES = {
    "samples_sec": "samples_per_s",
    "tokens_per_gpu_per_second_tgs": "tokens_per_s_per_gpu",
    "tokens_per_gpu_tokens_s_gpu": "tokens_per_s_per_gpu",
    "approx_flops_per_gpu": "tflops",
    "elapsed_time_per_iteration_s": "step_time_s",  # Megatron-DeepSpeed (BLOOM) prints it in seconds
}
_MEMORY_NAMES = {
    "allocated": "mem_gib",
    "max_allocated": "max_mem_gib",
    "reserved": "reserved_mem_gib",
    "max_reserved": "max_reserved_mem_gib",
    "cached": "reserved_mem_gib",  # torch's old name for reserved
    "max_cached": "max_reserved_mem_gib",
}


def _stamp_iso(stamp: str) -> str:
    """`2024-04-06 02:56:58` (`_STAMP_PART`) -> the time `_stamp` gives the line."""
    return f"{stamp[:10]}T{stamp[11:]}"


def _stamp(text: str) -> tuple[str | None, str]:
    m = _STAMP.match(text)
    if not m:
        return None, text
    y, mo, d, h, mi, s, frac = m.groups()
    iso = f"{y}-{mo}-{d}T{h}:{mi}:{s}" + (f".{frac}" if frac else "")
    return iso, text[m.end() :]


def _field(piece: str) -> tuple[str, float] | None:
    """One iteration-line field -> (metric, value), converting ms; None if not numeric."""
    m = _FIELD.match(piece)
    if not m:
        return None
    label, raw = m.group("label"), m.group("value")
    if raw.endswith("TFLOPS") and "flops" in label.lower():
        raw = raw[: -len("TFLOPS")]
    value = parse_number(raw)
    if value is None:
        return None
    name, in_ms = _label(label)
    return name, (ms_to_s(value) if in_ms else value)


_COUNTERS = frozenset({"epoch", "step", "steps", "iter", "iteration", "global_step"})


def _closed(tail: str, rest: str) -> list[str]:
    """The `|`-separated pieces of `tail` that a closing `|` ends: Megatron ends every field with
    ` |`, so text after the last one is a torn write (`lm loss 2.1` of `lm loss 2.149121E+00 |`)."""
    pieces = tail.split("|")
    if not rest.rstrip().endswith("|"):
        pieces.pop()
    return pieces


def _fields_into(metrics: dict[str, float], pieces: list[str]) -> None:
    for piece in pieces:
        if not piece.strip():
            continue
        found = _field(piece)
        if found is not None:
            metrics.setdefault(found[0], found[1])


@lru_cache(maxsize=1024)
def _label(label: str) -> tuple[str, bool]:
    """An iteration-line label -> (metric name, whether its value is in ms); labels repeat on every line."""
    key = snake(label)
    name = _ALIASES.get(key) or metric_name(label)
    if name.endswith("_ms") and name != "step_time_s":
        return name[:-3] + "_s", True
    return name, name == "step_time_s" and key.endswith("ms")


class MegatronParser(Parser):
    name: ClassVar[str] = "megatron"
    title: ClassVar[str] = "Megatron-LM"
    triggers: ClassVar[tuple[str, ...]] = (
        "iteration",
        "time (ms)",
        "time across ranks",
        ".: (",
        "memory (MB)",
        "lm loss",
    )
    example: ClassVar[str] = (
        " iteration      100/ 1000000 | elapsed time per iteration (ms): 907.6 | learning rate 1.500E-06 | "
        "lm loss 9.598498E+00 | loss scale 4096.0 |"
    )
    priority: ClassVar[int] = 100
    samples: ClassVar[tuple[Sample, ...]] = (
        Sample(  # seed 004 (2020 Megatron GPT-2 + DeepSpeed), lines 623-624: old `label value` fields, timers
            " iteration      200/ 1000000 | elapsed time per iteration (ms): 906.9 | learning rate 3.000E-06 | "
            "lm loss 8.844704E+00 | loss scale 4096.0 |\n"
            "time (ms) | forward: 316.26 | backward: 504.32 | allreduce: 0.00 | optimizer: 86.12 | "
            "batch generator: 1.35 | data loader: 0.16\n",
            steps=(
                (
                    200,
                    {"total_steps": 1000000, "step_time_s": 0.9069, "lr": 3e-06, "loss": 8.844704, "loss_scale": 4096},
                ),
            ),
            phases=(
                (200, {"forward": 0.31626, "backward": 0.50432, "optimizer": 0.08612, "batch_generator": 0.00135}),
            ),
        ),
        Sample(  # seed 004 lines 1762-1764: the validation report
            "-" * 82 + "\n"
            " validation loss at iteration 1000 | LM loss: 6.585178E+00 | LM PPL: 7.242798E+02\n" + "-" * 82 + "\n",
            steps=((1000, {"eval_loss": 6.585178, "eval_ppl": 724.2798}),),
        ),
        Sample(  # NVIDIA/Megatron-LM issue #756 (Megatron-Core: timestamp, `label: value`, TFLOP/s/GPU)
            " [2024-04-06 02:59:36] iteration       43/     100 | consumed samples:         5504 | elapsed time per "
            "iteration (ms): 5444.9 | throughput per GPU (TFLOP/s/GPU): 239.8 | learning rate: 8.600000E-06 | "
            "global batch size:   128 | lm loss: 1.825991E+00 | load_balancing_loss: 1.019746E+00 | loss scale: 1.0 | "
            "grad norm: 1.426 | num zeros: 0.0 | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
            steps=(
                (
                    43,
                    {
                        "total_steps": 100,
                        "step_time_s": 5.4449,
                        "tflops": 239.8,
                        "lr": 8.6e-06,
                        "loss": 1.825991,
                        "grad_norm": 1.426,
                        "consumed_samples": 5504,
                    },
                ),
            ),
        ),
        Sample(  # bigscience-workshop/Megatron-DeepSpeed issue #396: a NaN grad norm, no lm loss printed
            " iteration     5426/  250000 | consumed samples:        43408 | consumed tokens:     88899584 | "
            "elapsed time per iteration (ms): 4247.9 | learning rate: 2.999E-04 | global batch size:     8 | "
            "loss scale: 1.0 | grad norm: nan | actual seqlen:  2048 | number of skipped iterations:   0 | "
            "number of nan iterations:   0 | samples per second: 1.883 | TFLOPs: 78.36 |\n",
            steps=((5426, {"grad_norm": math.nan, "samples_per_s": 1.883, "tflops": 78.36, "step_time_s": 4.2479}),),
            events=("nan",),
        ),
    )

    def __init__(self) -> None:
        self._last_iter: int | None = None
        self._block: dict[str, float] | None = None
        self._block_rows: list[str] = []
        self._block_step: int | None = None
        self._block_line = 0
        self._known_rows: list[str] | None = None
        self._wrapped: tuple[str, int] | None = None  # an iteration line cut by a hard wrap, and its line
        self._line_no = 0  # the line being fed

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        self._line_no = line.no
        if self._wrapped is not None:
            joined = self._join(text)
            if joined is not None:
                if len(joined) < MAX_WRAPPED and not joined.rstrip().endswith("|"):
                    self._wrapped = (joined, self._wrapped[1])
                    return True
                self._wrapped = None
                return self._iteration(joined, out)
            self._wrapped = None
        if self._block is not None:
            row = _BLOCK_ROW.match(text)
            if row:
                return self._block_row(row, out)
            self._close_block(out, complete=True)
        if "time across ranks" in text:
            if _BLOCK_HEADER.match(text):
                self._block = {}
                self._block_rows = []
                self._block_step = self._last_iter
                self._block_line = line.no
                return True
            return False
        if "iteration" in text:
            if "validation loss at iteration" in text or "valid loss at iteration" in text:
                return self._validation(text, out)
            if "memory (MB)" in text:
                return self._memory(text, out)
            if not text.rstrip().endswith("|") and _ITERATION.search(text) and "|" in text:
                # a line a terminal or a paste hard-wrapped: `... per iteration (s): 105.16 | learning`,
                # then ` rate: 4.475E-05 | ...`; the record is whole at its closing `|`
                self._wrapped = (text, line.no)
                return True
            return self._iteration(text, out)
        if "time (ms)" in text:
            return self._timers(text, out)
        if "lm loss" in text:
            return self._iteration(text, out)  # (a record whose head was cut: `_headless`)
        return False

    def _join(self, text: str) -> str | None:
        """The wrapped record with this line appended, or None if the line is not its continuation."""
        assert self._wrapped is not None
        if _ITERATION.search(text) or "time (ms)" in text or not text.strip():
            return None
        head = self._wrapped[0]
        glue = "" if head.endswith(" ") or text.startswith(" ") else " "  # the space at the break was trimmed
        return head + glue + text

    def at_eof(self, out: Emitter) -> None:
        # Live follow: Megatron writes a block in one print, so what is here is the block.
        self._close_block(out, complete=False)

    def finish(self, out: Emitter) -> None:
        self._close_block(out, complete=True)

    # ----------------------------------------------------------------- bulk
    def bulk_template(self, text: str) -> BulkTemplate | None:
        """The iteration and timers lines as Megatron prints them (the iteration line with or
        without the timestamp recent versions put before it): the shapes a long run repeats.
        Steps move as `_iteration` / `_timers` move them."""
        stamp = _STAMP.match(text)
        if stamp is not None:  # (a stamped line is read with its time: a timed shape)
            return self._iteration_template(text, stamp) if "iteration" in text else None
        if "iteration" in text:
            return self._iteration_template(text, None)
        if "time (ms)" in text:
            return self._timers_template(text)
        return None

    def _bulk_ready(self) -> bool:
        # An open block is closed by the next line, a wrapped record's head waits for its next
        # line (the one that tells whether it continues): per line.
        return self._block is None and self._wrapped is None

    def _iteration_template(self, text: str, stamp: re.Match[str] | None) -> BulkTemplate | None:
        start = stamp.end() if stamp is not None else 0
        m = _ITERATION.search(text, start)
        if m is None or text[start : m.start()].strip():
            return None
        tail = text[m.end() :]
        if not _PRINTED_FIELDS.fullmatch(tail):
            return None
        if stamp is None:
            parts: list[Part] = [text[: m.start()] + "iteration"]
        else:  # ` [2024-04-06 02:56:58] iteration`: the stamp `_stamp` reads, as printed around it
            opening, closing = text.index("["), text.index("]")
            parts = [text[: opening + 1], _STAMP_PART, text[closing : m.start()] + "iteration"]
        first = len(parts) // 2  # the step's group (after the stamp's, if any)
        parts += [PADDED_INT, "/", PADDED_INT, "|"]
        values: list[tuple[int, str, bool]] = []
        for i, field in enumerate(_PRINTED_FIELD.finditer(tail)):
            name, in_ms = _label(field.group(1))
            head = tail[field.start() : field.start(2)]
            if head.endswith("  "):  # right-aligned: the padding goes with the number
                parts += [head.rstrip(" ") + " ", PADDED_NUMBER, " |"]
            else:
                parts += [head, NUMBER, " |"]
            values.append((first + 2 + i, name, in_ms))

        def on_line(groups: tuple[str, ...]) -> int | None:
            self._last_iter = int(groups[first])
            return self._last_iter

        return BulkTemplate(
            self,
            "step",
            tuple(parts),
            tuple(values),
            on_line,
            step_group=first,
            extras=(("total_steps", first + 1),),
            ready=self._bulk_ready,
            absent=("time across ranks", "validation loss at iteration", "memory (MB)"),
            last_counts=True,
            timed=stamp is not None,
            time_of=_stamp_iso if stamp is not None else None,
        )

    def _timers_template(self, text: str) -> BulkTemplate | None:
        m = _TIMERS.match(text)
        if m is None or not _PRINTED_TIMERS.fullmatch(m.group("body")):
            return None
        body = m.group("body")
        parts: list[Part] = [text[: m.start("body")]]
        values: list[tuple[int, str, bool]] = []
        for i, (name, _value) in enumerate(_PRINTED_TIMER.findall(body)):
            parts += [" | " if i else " ", f"{name}: ", DECIMAL]
            values.append((i, phase_name(name), True))

        def on_line(_groups: tuple[str, ...]) -> int | None:
            return self._last_iter

        return BulkTemplate(
            self,
            "phases",
            tuple(parts),
            tuple(values),
            on_line,
            ready=self._bulk_ready,
            absent=("time across ranks", "iteration"),
            step_of=lambda: self._last_iter,
        )

    # ------------------------------------------------------------ iteration
    def _iteration(self, text: str, out: Emitter) -> bool:
        time, rest = _stamp(text)
        m = _ITERATION.search(rest)
        if not m:
            return self._headless(rest, time, out)
        n, total = int(m.group("n")), int(m.group("m"))
        metrics: dict[str, float] = {}
        tail = rest[m.end() :]
        if FAST and not rest[: m.start()].strip() and _PRINTED_FIELDS.fullmatch(tail):
            # Every field in the printed form: the same (label, value) pairs `_field` finds.
            for label, raw in _PRINTED_FIELD.findall(tail):
                name, in_ms = _label(label)
                metrics.setdefault(name, seconds_of_ms(raw) if in_ms else float(raw))
        else:
            _fields_into(metrics, rest[: m.start()].split("|") + _closed(tail, rest))
        metrics["total_steps"] = float(total)
        self._last_iter = n
        out.step(n, metrics, time=time)
        return True

    def _headless(self, rest: str, time: str | None, out: Emitter) -> bool:
        """An iteration record whose head was cut (` | learning rate: ... | lm loss: ... |`): the
        first line of a pasted excerpt or of a file rotated mid-record, read as the run's first
        figures, with no step number. Any other line (another tool's `| epoch 3 | lm loss: 2.0 |`
        table, a record wrapped by a terminal, which is joined to its head) is not read here."""
        if self._line_no != 1 or self._last_iter is not None or not rest.lstrip().startswith("|"):
            return False
        metrics: dict[str, float] = {}
        _fields_into(metrics, _closed(rest, rest))
        if "loss" not in metrics or not metrics.keys().isdisjoint(_COUNTERS):
            return False  # (a row that counts for itself, `| epoch 3 | lm loss: 2.0 |`, is not a cut record)
        out.step(None, metrics, time=time)
        return True

    def _memory(self, text: str, out: Emitter) -> bool:
        time, rest = _stamp(text)
        m = _MEMORY.search(rest)
        if not m:
            return False
        metrics: dict[str, float] = {}
        for piece in m.group("body").split("|"):
            if not piece.strip():
                continue
            parts = piece.split(":")
            if len(parts) != 2:
                return False
            value = parse_number(parts[1])
            name = _MEMORY_NAMES.get(snake(parts[0]))
            if value is None or name is None:
                return False
            metrics[name] = value / 1024.0
        rank = m.group("rank")
        out.step(int(m.group("n")), metrics, rank=int(rank) if rank is not None else None, time=time)
        return True

    def _validation(self, text: str, out: Emitter) -> bool:
        time, rest = _stamp(text)
        m = _VALIDATION.search(rest)
        if not m:
            return False
        metrics: dict[str, float] = {}
        for piece in m.group("body").split("|"):
            if not piece.strip():
                continue
            label, sep, raw = piece.rpartition(":")
            value = parse_number(raw)
            if not sep or value is None:
                return False
            key = snake(label)
            if "ppl" in key:
                name = "eval_ppl"
            elif "loss" in key:
                name = "eval_loss"
            else:
                name = "eval_" + key
            metrics.setdefault(name, value)
        if not metrics:
            return False
        out.step(int(m.group("n")), metrics, time=time)
        return True

    # --------------------------------------------------------------- timers
    def _timers(self, text: str, out: Emitter) -> bool:
        time, rest = _stamp(text)
        m = _TIMERS.match(rest)
        if not m:
            return False
        body = m.group("body")
        if FAST and _PRINTED_TIMERS.fullmatch(body):
            out.phases(
                self._last_iter,
                {phase_name(name): seconds_of_ms(value) for name, value in _PRINTED_TIMER.findall(body)},
                time=time,
            )
            return True
        phases: dict[str, float] = {}
        for piece in body.split("|"):
            if not piece.strip():
                continue
            f = _TIMER_FIELD.match(piece)
            value = parse_number(f.group("value")) if f else None
            if f is None or value is None:
                return False
            phases[phase_name(f.group("name"))] = ms_to_s(value)
        if not phases:
            return False
        out.phases(self._last_iter, phases, time=time)
        return True

    def _block_row(self, row: re.Match[str], out: Emitter) -> bool:
        lo, hi = parse_number(row.group("min")), parse_number(row.group("max"))
        if lo is None or hi is None or self._block is None:
            return False
        name = phase_name(row.group("name"))
        self._block[name] = ms_to_s(hi)
        self._block[name + "_min"] = ms_to_s(lo)
        self._block_rows.append(name)
        if self._known_rows is not None and self._block_rows == self._known_rows:
            self._close_block(out, complete=False)
        return True

    def _close_block(self, out: Emitter, *, complete: bool) -> None:
        block, self._block = self._block, None
        if not block:
            return
        if complete:
            self._known_rows = list(self._block_rows)
        out.phases(self._block_step, block, line=self._block_line)

"""Hugging Face Trainer / TRL / Accelerate: the metric dicts the Trainer prints, and its tqdm bar.

    {'loss': 0.5047, 'grad_norm': 1.18, 'learning_rate': 6.99e-05, 'epoch': 0.05}
    {'loss': '0.2608', 'grad_norm': '6.51', 'learning_rate': '1.001e-05', 'epoch': '1'}   (>= 4.47)
    {'eval_loss': 0.5166, 'eval_runtime': 642.6, 'eval_samples_per_second': 4.587, 'epoch': 0.05}
    {'train_runtime': 96.91, 'train_samples_per_second': 10.319, 'train_loss': 0.5495, 'epoch': 1.0}
      2%|██████▊     | 200/8264 [23:37<15:44:25,  7.03s/it]{'loss': 12.4476, ...}

Which step a dict belongs to. The dict holds no step (only TFTrainer adds `'step'` and ms-swift `'global_step'`, used as is).
`ProgressCallback.on_log` prints it with `tqdm.write` to stdout while the bar goes to stderr.
- Unbuffered stdout (`python -u`, a terminal): `tqdm.write` clears the bar, prints the dict on its
  own line and redraws the bar at the current position at once, so the frame that starts the
  next line is the global step the dict was logged at. That is used, if the dict's epoch does
  not contradict it (epoch >= n/total).
- Buffered stdout (a file, a pipe, nohup; the usual case): dicts come out in bursts, long after
  their step. A dict glued to a bar (`...7.03s/it]{'loss': ...}`) or a dict followed directly by
  another is such a burst; the bar beside it is the flush time, not the step (the real
  `LMSYS` slice: a dict with `'epoch': 0.0` glued to bar 200/8264 of a 2-epoch run, whose
  learning-rate warmup says it was logged at step 10). From then on this source gets step=None
  for its dicts: the step is not known, and `epoch` (printed) stays the honest x-axis.
  Deriving a step from `epoch` x steps-per-epoch is not done: the Trainer rounds epoch to 2
  digits, so a burst would share one invented step.
- The final summary dict is logged after the last step: when the bar has reached its total, that
  total is its step. Its `train_loss` is the run's mean loss, so it keeps its own name.
The training bar is the one whose total is the banner's `Total optimization steps`. Without the
banner (a log cut after it, axolotl, LLaMA-Factory, ms-swift, Unsloth without its banner), a bar's
total is confirmed as training when a training dict (`loss`, `learning_rate`) follows a frame of it;
a total followed by an `eval_` dict is an evaluation bar and never counts. Until then its frames
are held (bounded), and released when confirmed, or at the end of what is written when it is the
only bar in progress. Each training bar frame reports progress: step n, `total_steps`, and
`step_time_s` from tqdm's (smoothed) s/it.
Unsloth's own loop (`unsloth_train`, after its banner) logs with `progress_bar.write(f"{step}, {loss}")`
(`10, 2.2398`) before the bar's `update(1)`: `step` is the 0-based index of the optimizer step just
taken, so the loss is the bar's step `step + 1`. A paste that lost tqdm's clearing `\r` glues it after
the bar (`... 12.12s/it]10, 2.2398`). A value a reporter wrapped in markdown bold (`'loss': **4.7581**`)
is read as the number it is. A paste that shows carriage returns as `^M` (`cat -v`, vim, less) is read
as the frames and the line they would have made.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, replace

from trainwatch.lines.assembler import Kind, Line
from trainwatch.names import metric_name, settle_weak, snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import named_value
from trainwatch.parsers.formats._tqdm import Bar, find_bar
from trainwatch.parsers.timestamps import line_time

_BANNER = "***** Running training *****"
_BANNER_FIELD = re.compile(
    r"(?:^|>>|\s)\s*(Num examples|Num Epochs|Total optimization steps|Gradient Accumulation steps) = ([\d,.]+)\s*$"
)
# Unsloth prints its own banner before the Trainer's bar: `==((====))==  Unsloth - 2x faster free finetuning`,
# then `Num examples = 1,760 | Num Epochs = 1 | Total steps = 220` (several fields a line).
_UNSLOTH_BANNER = "Unsloth"
_INLINE_FIELD = re.compile(r"(Num examples|Num Epochs|Total steps) = ([\d,.]+)")
# unsloth_train's `progress_bar.write(f"{step}, {round(loss, 4)}")`
_UNSLOTH_LOSS = re.compile(r"\s*(?P<step>\d{1,18}), (?P<loss>[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|nan|inf))\s*$")
_DICT_START = re.compile(r"\{\s*'[A-Za-z_]")
# A dict whose opening brace is lost (the line pasted or cut from mid-dict): `'loss': -0.0, ..., 'epoch': 0.0}`.
_DICT_TAIL = re.compile(r"\s*'[A-Za-z_][\w./()-]*': ")
# A dict printed after the name of the split it reports (`val: {'epoch': 0, 'loss': 0.686, ...}`,
# GraphGPS's `logging.info(f"{split}: {stats}")`): its figures are that evaluation's (`eval_*`, a
# test split's `test_*`), not the training series'.
_EVAL_SPLIT = re.compile(r"(?<!\w)(?P<split>val|valid|validation|eval|evaluation|test|testing)\s*[:=|-]?\s*\{", re.I)
# A carriage return as `cat -v`, vim and less show it, pasted as the two characters.
_CARET_CR = "^M"
_BANNER_LINES = 20  # the banner's fields follow it within a few lines
_MAX_DICT_CHARS = 20_000
_SUMMARY_KEY = "train_runtime"
_MAX_PENDING = 4096  # bar frames held per total before it is known to be the training bar
_COUNTER_VALUE = re.compile(r"\s*(\d{1,18})\s*/\s*(\d{1,18})\s*$")  # (a machine int: `int()` refuses 4,300 digits)


@dataclass(frozen=True)
class _Frame:
    line: int
    n: int
    seconds_per_it: float | None


@dataclass
class _Held:
    line: int
    time: str | None
    metrics: dict[str, float]
    epoch: float | None
    summary: bool


_BARE_SPECIAL = re.compile(r"([:\[,(]\s*)(-?(?:nan|inf))(?=\s*[,}\])])")
# A dict of plain string keys and number values, as Python writes it: read without `ast` (a third
# of a Trainer log's catch-up). What Python would refuse (`007`) or read otherwise (`+1`, escapes,
# nested values) is not of this form and goes to `literal_eval` (tests/parsers/test_hf_trainer.py).
_KEY = r"""(?:'[^'\\\x00-\x1f]*'|"[^"\\\x00-\x1f]*")"""
_NUMBER = r"-?(?:(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|0+|[1-9]\d*)"
_PLAIN_DICT = re.compile(rf"\{{\s*(?:{_KEY}\s*:\s*{_NUMBER}\s*,\s*)*(?:{_KEY}\s*:\s*{_NUMBER}\s*,?\s*)?\}}")
_PLAIN_ITEM = re.compile(rf"({_KEY})\s*:\s*({_NUMBER})")


def plain_dict(body: str) -> dict[str, float | int] | None:
    """`ast.literal_eval(body)` of a dict of plain string keys and number values, else None."""
    if _PLAIN_DICT.fullmatch(body) is None:
        return None
    out: dict[str, float | int] = {}
    for key, number in _PLAIN_ITEM.findall(body):
        out[key[1:-1]] = float(number) if number.strip("-0123456789") else int(number)
    return out


def parse_log_dict(text: str) -> tuple[int | None, dict[str, float], bool] | None:
    """The dict the Trainer printed: (its 'step' if any, canonical metrics, is the final summary)."""
    start_m = _DICT_START.search(text)
    tail_m = _DICT_TAIL.match(text) if start_m is None else None
    if start_m is None and tail_m is None:
        return None
    start = start_m.start() if start_m is not None else len(text) - len(text.lstrip())
    end = text.rfind("}")
    if end <= start or end - start > _MAX_DICT_CHARS:
        return None
    body = text[start : end + 1] if tail_m is None else "{" + text[start : end + 1]
    try:
        raw = plain_dict(body)
        if raw is None:
            raw = ast.literal_eval(body)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        # `'grad_norm': nan` is how Python prints a NaN float: not a literal, and the line that
        # matters most. Quote bare nan/inf and read the dict again.
        try:
            raw = ast.literal_eval(_BARE_SPECIAL.sub(r"\1'\2'", body.replace("**", "")))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(raw, dict) or not raw:
        return None
    summary = _SUMMARY_KEY in raw
    step: int | None = None
    metrics: dict[str, float] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            continue
        if isinstance(value, bool):
            continue
        if isinstance(value, float) or (isinstance(value, int) and abs(value) < 2**1023):
            number: float | None = float(value)
        elif isinstance(value, str):
            number = parse_number(value)
            counter = _COUNTER_VALUE.match(value) if number is None and "step" in key else None
            if counter is not None:  # ms-swift: `'global_step/max_steps': '56/176'`
                step = int(counter.group(1))
                metrics["total_steps"] = float(counter.group(2))
                continue
        else:
            number = None
        if number is None:
            continue
        if key in ("step", "global_step") and number.is_integer():
            step = int(number)  # (TFTrainer's `step`, ms-swift's `global_step`)
            continue
        if summary:
            metrics.setdefault(snake(key), number)
            continue
        named = named_value(key, number) if math.isfinite(number) else None
        name, number = named if named is not None else (metric_name(key), number)
        metrics.setdefault(name, number)
    if not metrics or not (summary or "epoch" in metrics or step is not None):
        return None
    if not summary:
        settle_weak(metrics)
    return step, metrics, summary


def _of_split(prefix: str, metrics: dict[str, float]) -> dict[str, float]:
    """An evaluation split's figures under its prefix (`loss` -> `eval_loss`); the epoch is the run's."""
    return {k if k == "epoch" or k.startswith(prefix) else prefix + k: v for k, v in metrics.items()}


class HFTrainerParser(Parser):
    name = "hf_trainer"
    title = "Hugging Face Trainer / TRL / Accelerate"
    triggers = ("{'", "it]", "it/s]", _BANNER, " = ", _UNSLOTH_BANNER, "': ", ", ")
    example = "{'loss': 0.5047, 'grad_norm': 1.18, 'learning_rate': 6.99e-05, 'epoch': 0.05}"
    priority = 100
    samples = (
        Sample(  # a committed Unsloth fine-tune (string values, >= 4.47): the last training dict and the eval dict
            "{'loss': '0.1601', 'grad_norm': '0.2679', 'learning_rate': '1.85e-05', 'epoch': '2.703'}\n"
            "{'eval_loss': '0.1795', 'eval_runtime': '4.458', 'eval_samples_per_second': '3.365', "
            "'eval_steps_per_second': '0.897', 'epoch': '2.703'}\n",
            steps=(
                (None, {"loss": 0.1601, "grad_norm": 0.2679, "lr": 1.85e-05, "epoch": 2.703}),
                (None, {"eval_loss": 0.1795}),
            ),
        ),
        Sample(  # SY-Xuan/Pink issue #6: grad norm nan, loss stuck at 0
            "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 0.00012142857142857143, 'epoch': 0.0}\n"
            "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 0.00012857142857142855, 'epoch': 0.0}\n",
            steps=((None, {"loss": 0.0, "lr": 0.00012142857142857143, "epoch": 0.0}),),
            events=("nan",),
        ),
    )

    def __init__(self) -> None:
        self._banner_total: int | None = None
        self._banner_epochs: float | None = None
        self._banner_line: int | None = None
        self._largest_total = 0
        self._last_bar: tuple[int, int, int] | None = None  # (line no, n, total) of the training bar
        self._buffered = False
        self._held: _Held | None = None
        self._training_total: int | None = None  # confirmed by a training dict after its bar
        self._eval_totals: set[int] = set()
        self._pending: dict[int, list[_Frame]] = {}  # frames of totals not yet known
        self._last_total: int | None = None  # the total of the last HF bar seen
        self._unsloth = False  # Unsloth's banner was printed: `step, loss` lines are unsloth_train's

    # ----------------------------------------------------------------- lines
    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if _CARET_CR in text and line.kind is Kind.LINE:
            return self._feed_carets(text, line, out)
        return self._feed_line(text, line, out)

    def _feed_carets(self, text: str, line: Line, out: Emitter) -> bool:
        """A paste that shows carriage returns as `^M`: its pieces are the frames `\\r` would have made."""
        *frames, last = text.split(_CARET_CR)
        understood = False
        for frame in frames:
            if frame.strip():
                understood = self._feed_line(frame, replace(line, text=frame, kind=Kind.FRAME), out) or understood
        if last.strip():
            understood = self._feed_line(last, replace(line, text=last), out) or understood
        return understood

    def _feed_line(self, text: str, line: Line, out: Emitter) -> bool:
        held = self._held
        if held is not None and line.no > held.line:
            self._resolve_held(text, line, out)
        if line.kind is Kind.FRAME:
            bar = find_bar(text)
            return bar is not None and self._on_bar(bar, line, out)
        if self._unsloth and text[:1].isdigit():
            loss = _UNSLOTH_LOSS.match(text)
            if loss is not None:
                return self._unsloth_loss(loss, out)
        if _BANNER in text or (_UNSLOTH_BANNER in text and "finetuning" in text):
            self._unsloth = _UNSLOTH_BANNER in text
            self._banner_line = line.no
            self._banner_total = None
            self._banner_epochs = None
            self._last_bar = None
            self._buffered = False
            self._training_total = None
            self._pending.clear()
            return True
        if " = " in text and self._banner_line is not None and line.no - self._banner_line <= _BANNER_LINES:
            m = _BANNER_FIELD.search(text)
            if m:
                self._banner_field(m.group(1), m.group(2))
                return True
            inline = list(_INLINE_FIELD.finditer(text))
            for f in inline:
                self._banner_field(f.group(1), f.group(2))
            if inline:
                return True
        if "{'" in text or (text.rstrip().endswith("}") and _DICT_TAIL.match(text)):
            return self._on_dict_line(text, line, out)
        bar = find_bar(text) if "%" in text else None
        if bar is None or not self._on_bar(bar, line, out):
            return False
        loss = _UNSLOTH_LOSS.match(text, bar.end) if self._unsloth else None
        if loss is not None:  # `... 12.12s/it]10, 2.2398`: the clearing `\r` lost in a paste
            self._unsloth_loss(loss, out)
        return True

    def _unsloth_loss(self, m: re.Match[str], out: Emitter) -> bool:
        loss = parse_number(m.group("loss"))
        if loss is None:
            return False
        out.step(int(m.group("step")) + 1, {"loss": loss})
        return True

    def at_eof(self, out: Emitter) -> None:
        self._release_held(out, self._step_before(self._held))
        self._release_running_bar(out, finished=False)

    def finish(self, out: Emitter) -> None:
        self._release_held(out, self._step_before(self._held))
        self._release_running_bar(out, finished=True)

    def _release_running_bar(self, out: Emitter, *, finished: bool) -> None:
        """No dict has said which bar trains: the one bar in progress (or, at the end, the one bar) is it."""
        if self._training_total is not None or self._banner_total is not None or self._eval_totals:
            return
        if len(self._pending) != 1:
            return
        total, frames = next(iter(self._pending.items()))
        if frames and (finished or frames[-1].n < total):
            self._confirm(total, out)

    # ---------------------------------------------------------------- banner
    def _banner_field(self, label: str, value: str) -> None:
        number = parse_number(value)
        if number is None:
            return
        if label in ("Total optimization steps", "Total steps") and number.is_integer():
            self._banner_total = int(number)
        elif label == "Num Epochs":
            self._banner_epochs = number

    # ------------------------------------------------------------------ bars
    def _is_training_total(self, total: int) -> bool:
        if self._banner_total is not None:
            return total == self._banner_total
        if self._training_total is not None:
            return total == self._training_total
        return total >= self._largest_total

    def _known_total(self) -> int | None:
        return self._banner_total if self._banner_total is not None else self._training_total

    def _confirm(self, total: int, out: Emitter) -> None:
        """`total` is the training bar's: its held frames are progress, other held totals are not."""
        self._training_total = total
        for frame in self._pending.pop(total, []):
            self._bar_step(out, frame, total)
        self._pending.clear()

    def _bar_step(self, out: Emitter, frame: _Frame, total: int) -> None:
        metrics: dict[str, float] = {"total_steps": float(total)}
        if frame.seconds_per_it is not None:
            metrics["step_time_s"] = frame.seconds_per_it
        out.step(frame.n, metrics, line=frame.line)

    def _hold_frame(self, bar: Bar, line: Line) -> None:
        if bar.total in self._eval_totals or bar.n <= 0:
            return
        frames = self._pending.setdefault(bar.total, [])
        if frames and frames[-1].n == bar.n:
            return  # the same frame redrawn
        frames.append(_Frame(line.no, bar.n, bar.seconds_per_it))
        del frames[:-_MAX_PENDING]

    def _on_bar(self, bar: Bar, line: Line, out: Emitter) -> bool:
        """True for an HF bar (training or evaluation); HF bars carry no description and no postfix."""
        if bar.desc or bar.postfix:  # `Epoch 0:` bars are Lightning's, `1/100  3.65G ...` Ultralytics',
            return False  # `[..., loss=0.706]` a custom loop's (the generic layer reads them)
        if self._banner_total is None and bar.total > self._largest_total:
            self._largest_total = bar.total
        self._last_total = bar.total
        known = self._known_total()
        if known is None:
            self._hold_frame(bar, line)
        if not self._is_training_total(bar.total):
            return True
        self._last_bar = (line.no, bar.n, bar.total)
        if known is not None and bar.n > 0:
            self._bar_step(out, _Frame(line.no, bar.n, bar.seconds_per_it), bar.total)
        return True

    def _classify_last_bar(self, metrics: dict[str, float], summary: bool, out: Emitter) -> None:
        """A dict tells which bar was running: a training dict the training bar, an eval dict an eval bar."""
        total = self._last_total
        if total is None or summary or self._known_total() is not None:
            return
        names = [k for k in metrics if k != "epoch"]
        training = not any(k.startswith("eval_") for k in names) and any(
            k in ("loss", "lr", "grad_norm") for k in names
        )
        if total in self._eval_totals:
            # training resumed after an evaluation's bar: the one other bar held before it was the training bar
            others = [t for t in self._pending if t not in self._eval_totals]
            if training and len(others) == 1:
                self._confirm(others[0], out)
            return
        if any(k.startswith("eval_") for k in names):
            self._eval_totals.add(total)
            self._pending.pop(total, None)
        elif training:
            self._confirm(total, out)

    # ----------------------------------------------------------------- dicts
    def _on_dict_line(self, text: str, line: Line, out: Emitter) -> bool:
        parsed = parse_log_dict(text)
        if parsed is None:
            return False
        printed_step, metrics, summary = parsed
        glued = text.lstrip()[:1] not in ("{", "'")  # a dict printed after a bar frame on its line
        if glued:
            head = text.find("{")
            split = _EVAL_SPLIT.search(text, max(0, head - 16), head + 1)
            if split is not None and split.end() == head + 1:
                metrics = _of_split("test_" if split.group("split").lower().startswith("test") else "eval_", metrics)
        if glued:
            bar = find_bar(text)
            if bar is not None:
                self._on_bar(bar, line, out)
            self._buffered = True
        self._classify_last_bar(metrics, summary, out)
        if printed_step is not None:
            out.step(printed_step, metrics)
            return True
        held = _Held(line.no, line_time(text), metrics, metrics.get("epoch"), summary)
        last = self._last_bar
        if not glued and not self._buffered and last is not None and last[0] == line.no:
            self._held = held  # unbuffered: the bar redrawn on the next line gives the step
        else:
            self._emit(out, held, self._fallback_step(held))
        return True

    def _resolve_held(self, text: str, line: Line, out: Emitter) -> None:
        held = self._held
        assert held is not None
        step: int | None = None
        if line.no == held.line + 1:
            if line.kind is Kind.FRAME:
                bar = find_bar(text)
                if bar is not None and not bar.desc and self._is_training_total(bar.total):
                    step = bar.n if self._consistent(held, bar.n, bar.total) else None
            elif text.lstrip().startswith("{'"):
                self._buffered = True  # two dicts in a row: a burst from a buffer
        self._release_held(out, step)

    def _step_before(self, held: _Held | None) -> int | None:
        """Nothing follows a held dict (the end of what is written): the training-bar frame printed just
        before it on its line is the step tqdm.write cleared it for, as its redraw would have said."""
        last = self._last_bar
        if held is None or last is None or last[0] != held.line or self._buffered:
            return None
        return last[1] if self._consistent(held, last[1], last[2]) else None

    def _release_held(self, out: Emitter, step: int | None) -> None:
        held, self._held = self._held, None
        if held is not None:
            self._emit(out, held, step if step is not None else self._fallback_step(held))

    def _consistent(self, held: _Held, n: int, total: int) -> bool:
        """A dict's printed epoch (rounded to 2 digits) is at least n/total when epochs >= 1."""
        if held.epoch is None or (self._banner_epochs is not None and self._banner_epochs < 1):
            return True
        return held.epoch + 0.0051 >= n / total

    def _fallback_step(self, held: _Held) -> int | None:
        last = self._last_bar
        if held.summary and last is not None and last[1] == last[2]:
            return last[2]
        return None

    def _emit(self, out: Emitter, held: _Held, step: int | None) -> None:
        out.step(step, held.metrics, time=held.time, line=held.line)

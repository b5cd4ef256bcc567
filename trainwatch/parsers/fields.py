"""The field reader: every numeric field of a log line, in every syntax training logs use.

    step 0 | loss: 10.93 | lr 6.0e-05 | norm: 27.01 | dt: 17830.71ms | tok/sec: 29403.65
    iter 120: loss 2.4410, time 61.02ms, data_time 3.11ms, mfu 14.20%
    {"step": 10, "loss": 2.1, "lr": 0.0003}          {'loss': 1.93, 'grad_norm': nan, 'epoch': 0.4}
    Epoch: [2][ 40/2502]	Time  0.412 ( 0.530)	Loss 5.1 (5.4)
    INFO:tensorflow:loss = 0.91, step = 1200 (0.982 sec)
    Epoch 3: 100% 64/64 [01:10<00:00, 1.09s/it, loss=0.112, lr=0.0002]

`read_fields` returns a `Reading`: the line's counters (step, its total, epoch, an inner `n/M`
batch counter), its metrics under canonical names (`names.py`), values converted by their units
(durations to seconds, `K`/`M`/`B` counts expanded, memory to GiB), and its shape (the text with
every value masked), which the generic layer uses to tell a repeated progress line from a one-off.

What it never reads as a metric: the logging prefix (timestamps, levels, `train.py:88`, logger
names), parts of dates and clock times, a running average printed in parentheses after the current
value (`Loss 5.1 (5.4)`: 5.1), the later elements of a list or tuple (`lr=[2e-4, 1e-4]`: 2e-4).
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass
from functools import lru_cache

from trainwatch.names import (
    BATCH_KEYS,
    COUNTER_KEYS,
    EPOCH_KEYS,
    STEP_TIME_KEYS,
    STOP_WORDS,
    field_name,
    settle_sole_loss,
    settle_weak,
    snake,
)
from trainwatch.numbers import parse_duration_s, parse_mem_gib, parse_number

# The logging prefix, one part at a time: timestamps, levels, logger and file:line labels.
# No part starts with a separator (a `.py` path not with `-` or `>`): the separators before a part,
# given back one by one when no part follows them, fail at once. When the `.py` part could start
# with a dash, it was tried from each dash of a run: a line of 3,000 dashes took seconds.
_PREFIX_PART = re.compile(
    r"""[\s|\-:>\]]*(?:
        (?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL):[\w.<>-]+:(?=\S)  # INFO:tensorflow:loss = ..., INFO:__main__:✅ Done
      | \[(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}/\d{1,2})[ T_]\d{1,2}:\d{2}(?![^\]\[\n]{0,100}?(?i:loss|=))[^\]\[\n]{0,100}\]:?
        # one bracket: `[2024-11-15 13:21:57,096  INFO  train.py  line 119  2491476]`, detectron2's
        # `[05/01 10:00:00 d2.engine.hooks]:` (not one holding figures)
      | \[(?!(?i:epoch|epochs|step|steps|iter|iters|iteration|batch|loss|lr)\])[\w.:-]{1,24}\]:  # launcher labels: [0434:0]:, [default0]: (not CoupletAI's `[epoch]: 199`)
      | (?:\[?\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[ T_,]+\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?)?(?:\s?(?:Z|[+-]\d{2}:?\d{2}|UTC))?\]?
      | \[?\d{1,2}([/-])\d{1,2}(?:\1\d{2,4})?[ ,-]+\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\]?  # `09/02 20:39:12`, `09-02 ...`
      | \[?\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\]?
      | [IWEFD]\d{4}\s+\d{1,2}:\d{2}:\d{2}\.\d+(?:\s+\d+)?
      | \[(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|NOTICE|TRACE)\b[^\]]{0,80}\]:?
      | \[?(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|NOTICE|TRACE)\]?(?::[\w.<>-]*:)?
      | \[?\(?[\w.</][\w.<>/-]*\.py(?::\d+|\(\d+\))(?:\s+in\s+\w+)?\)?\]?
      | \[?(?:rank|Rank|RANK)\s*\d+\]?:?
      | [A-Za-z_][\w.]{0,80}:[\w<>]{1,60}:\d{1,6}(?=\s+-\s)  # loguru: `trainers.base_trainer:train_epochs:256 - `
      | (?:__main__|root)(?=\s+-\s)  # logging's `%(name)s - ` of a script's own logger
      | [A-Za-z_]\w*(?:\.\w+)+(?=\s+\|\s)  # a dotted logger's name between pipes: fairseq's `| INFO | fairseq_cli.train | `
    )(?:(?=[\s|\-:\]]|$)|(?<=\]))  # (a closed bracket needs no separator: `[2022-06-27 05:56:21,505]Optimization Finished!`)
    )""",
    re.X,
)
# A number, where it is not part of a word, a version, a date, a clock time or a path. The
# lookahead is the first character a value can have (under `re.I`, as the words are matched):
# without it, the three lookbehinds were tried at every position of the line (a third more time).
_VALUE = re.compile(
    r"(?=[-+.\dni])(?<![\w.])(?<![\d][:/\-,])(?<![:/\-.][\d])"
    r"(?P<val>[-+]?(?:\d{1,3}(?:,\d{3})+(?![\d])|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+"
    r"|[-+]?(?:nan|inf(?:inity)?)(?!\w))",
    re.I,
)
# A duration written in parts (`1m 10s`, `2h 5m`, `1h2m3.5s`, `3d 4h`): CatBoost's `remaining`, humanized
# ETAs. One value in seconds; its `10s` is not a bare step time, its `1m` not a value of its own.
_DURATION_PART = r"\d+(?:\.\d+)?[dhms](?![A-Za-z])"
_COMPOUND_DURATION = re.compile(rf"{_DURATION_PART}(?: ?{_DURATION_PART}){{1,3}}(?![\w/]|\.\d)")
_PART_UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
# The rest of a `timedelta` printed with days: `27 days, 22:18:02`.
_DAYS_CLOCK = re.compile(r" days?, \d{1,2}:\d{2}")
# A unit written right after the value (`61.02ms`, `1.09s/it`, `512K`, `3.2GiB`, `14.2%`).
_UNIT_ATTACHED = re.compile(
    r"(?:%|(?:ms|us|µs|ns|sec|secs|s|min|h|hr|[KMGT]i?B|[kKMGTB](?=/)|[kKMGB])(?:/(?:s|sec|it|iter|step|batch|gpu|device)){0,2})"
    r"(?![\w/])|(?:it|tok|toks|tokens|samples?|img|imgs|images|ex|examples|seq|seqs)?/(?:s|sec)(?![\w/])"
)
# A unit after a space (`0.52 s`, `(0.982 sec)`, `29403 tok/s`, `1.2 it/s`, `3.1 GiB`).
_UNIT_SPACED = re.compile(
    r"[ \t](?:ms|sec|secs|seconds?|s|min|mins|[KMGT]i?B"
    r"|(?:it|its|tok|toks|tokens?|samples?|img|imgs|images|ex|examples|seqs?|steps?|iters?|batch(?:es)?|updates?|ups|words|wrd"
    r"|pos|positions|utts?|utterances|sents?|sentences|pairs|graphs|docs|instances|clips|videos)/(?:s|sec|second)"
    r"|(?:s|sec|ms)/(?:it|iter|step|batch))(?![\w/])"
    r"(?![ \t]*[:=])"  # (`531.2 samples/sec: 0.008`: the next field's key, not this value's unit)
)
# The label before a value, read back from the value: `loss: `, `'loss': `, `"lr": "`, `lr=[`, `loss `.
_KEY_END = re.compile(
    r"(?P<key>[A-Za-z_@\u4e00-\u9fff][\w./@%-]*(?:\s?\([^()\s]{1,20}\))?)#?(?P<q>['\"]?)"
    r"(?P<gap>[ \t]*(?P<sep>[:=]|->|:=)?[ \t]*)(?P<open>[\[(]\s*)?(?P<vq>['\"]?)\Z"
)
# A time over N steps: `Time(1000 iters): `, `time for 100 steps: `, `100 iters took `.
_STEPS_WORD = r" ?(?:iters?|iterations?|steps?|batches)"
_OVER_STEPS = re.compile(
    rf"(?:\(\s?(?P<a>\d{{1,9}}){_STEPS_WORD}\s?\)|\bfor (?P<b>\d{{1,9}}){_STEPS_WORD}|\b(?P<c>\d{{1,9}}){_STEPS_WORD} (?:took|takes?))"
    r"\s?:?\s?\Z",
    re.I,
)


# A value named before the counter it was read at: `Training loss (for one batch) at step 100: 2.79`,
# `validation loss at epoch 3 = 0.41` (the counter is read as the line's counter as well).
_NAMED_AT_COUNTER = re.compile(
    r"(?:^|(?<=[\s|,;:\]]))(?P<label>[A-Za-z][\w/-]*(?: [A-Za-z][\w/-]*){0,3}(?: \([^()]{1,30}\))?) "
    r"(?:at|@|for|after|in) (?:the )?(?:step|iteration|iter|epoch|batch) \d{1,12}\s{0,3}[:=]\s*\Z",
    re.I,
)
_ASIDE = re.compile(r"\s*\([^()]*\)")
# A time or a loss labelled `Total Time`, `Total Loss`: the word before it is a stop word for labels
# (`total 5`), not for these (`Reconstruction Loss=0.079, KL Loss=0.003, Total Loss=0.082`).
# (`Total Steps: 5000` stays a counter: the run's global step, in RL.)
# An upper-case word that may name a loss before it (`KL`, `CE`, `L1`, `MSE`, `GAN`), not a level (`INFO`).
_ACRONYM = re.compile(r"[A-Z][A-Z0-9]{1,2}")
_STEP_PART = re.compile(r"^(?:data|fwd|bwd|forward|backward|optim|optimizer|compute|comm)_(?:time_)?s$")
_TOTAL_OF = re.compile(r"\btotal[ _](?:time|loss)\W{0,3}\Z", re.I)
# What a time over N steps is not: an average's (`mean step time (100 steps)`), an ETA's, an evaluation's,
# a data wait's, a time per something (`time/iter (100 iters)`).
_NOT_OVER = re.compile(r"avg|mean|average|\beta\b|eval|valid|test|data|\bper\b|step[ _]time|/", re.I)


def _over_steps_near(text: str, near: int, start: int) -> bool:
    """Whether `_OVER_STEPS` can match before `start`: a search anchored at the window's end tries
    every position of it (a tenth more time per line), so the words it needs are looked for first."""
    return (
        text.find("ter", near, start) >= 0 or text.find("tep", near, start) >= 0 or text.find("atch", near, start) >= 0
    )


# A running average in parentheses after a value: `0.499 (1.872)`.
_AVERAGE_AFTER = re.compile(r" ?\( ?\d+\.\d+ ?\)")
# A value labelled by an evaluation set alone, beside a training loss, is that set's loss.
_EVAL_SETS = frozenset(
    v for w in ("val", "valid", "validation", "dev", "test", "eval") for v in (w, w.capitalize(), w.upper())
)
_OTHER_FIGURES = (
    "acc",
    "bleu",
    "auc",
    "map",
    "f1",
    "ppl",
    "top",
    "score",
    "iou",
    "dice",
    "wer",
    "cer",
    "prec",
    "recall",
)
_WORD_AFTER = re.compile(r" ?\(?[A-Za-z]")  # `Eval 300 samples`, `val: 0.85 (accuracy)`: a count or another figure
# A dict of one entry under a name, the value's own label no name (`grad_norm={'0_default': `).
_ONE_ENTRY = re.compile(r"(?P<key>[A-Za-z_][\w./-]*)\s?[:=]\s?\{\s?['\"]?[\w./-]{1,40}['\"]?:\s?\Z")
# Printed tensors and arrays around a value: `tensor(0.69`, `tensor([nan]`, `Array(2.1, dtype=float32)`.
_WRAPPER = re.compile(r"(?<=[\s:=])\s*(?:tensor|Tensor|array|Array|DeviceArray|np\.float\d*|float\d*)\(\[?\s*\Z")
_PHASE_LABELS = frozenset({"train", "training"})
_AVERAGE_ASIDE = frozenset({"ave", "avg", "average", "mean"})
_ASIDE_OPEN = re.compile(r"\(\s*[A-Za-z]{3,7}\s*[:=]?\s*\Z")
_EACH_AFTER = re.compile(r",? ?\((\d{1,9}(?:\.\d{1,12})?)\)")
_PER_N_STEPS = re.compile(r" ?/ ?(\d{1,9}) ?(?:iters?|iterations?|steps?|batch(?:es)?)\b")
_PHASE_HEAD = re.compile(r"(?:Train|Training|Test|Testing|Val|Valid|Validation|Eval|Evaluation) ")
_BATCH_AFTER = re.compile(r"\s*\[\s*\d+\s*/\s*\d+")
_WORD = re.compile(r"(?<![\w.])[A-Za-z][A-Za-z0-9_]*\Z")
# Patterns anchored at the window's end (`\Z`) are tried by `search` from every position of the
# window: six values a line, each with a 64-character window, were a third of the field reader's
# time. On an ASCII window the search starts where a match can start, found by `rstrip` at C
# speed (`key_end`, `word_end`; the same match: tests/parsers/test_fields_fast_search.py).
# A `_KEY_END` match is a label (`[\w./@%-]`, from a letter) and, unless a parenthesised unit
# follows it (`time (ms)`, whose contents may be anything), only quotes, blanks, `:=->` and the
# `[(` a value may open with (`_AFTER_LABEL`). So on an ASCII window whose last `)` closes no unit,
# the label holds the last character before those and starts at or after the run of label
# characters that ends there.
_BLANKS = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
_AFTER_LABEL = "'\"#" + _BLANKS + ":=->[("  # (`#`: dlib's `step#: 23016`, a number sign after its label)
_LABEL_CHARS = string.ascii_letters + string.digits + "_./@%-"
_WORD_CHARS = string.ascii_letters + string.digits + "_"
_KEY_WINDOW = 64
# `Step [100/1000]`, `iter 5/100`, `| 200/ 2983 batches`: an `n/M` counter.
_SLASH_TOTAL = re.compile(r"\s*/\s*(?P<m>\d{1,18})(?![\w.])")
_BARE_COUNTER = re.compile(r"(?<![\w/.:-])(?P<n>\d{1,18})\s*/\s*(?P<m>\d{1,18})(?![\w/.-])")
# `Train: [29/300][2670/2859]` (Swin, ConvNeXt, VMamba): the epoch of its total, then the batch of its total.
_EPOCH_BATCH = re.compile(
    r"\[\s*(?P<e>\d{1,9})\s*/\s*(?P<et>\d{1,9})\s*\]\s*\[\s*(?P<n>\d{1,18})\s*/\s*(?P<m>\d{1,18})\s*\]"
)
# `Epoch[1] Batch [100]` (MXNet's Speedometer, sockeye, gluon scripts): a counter in brackets after its label.
_BRACKET_COUNTER = re.compile(
    r"\b(?P<key>[A-Za-z][A-Za-z_]{1,20})(?::|\.{1,3})? ?(?:\[ ?(?P<n>\d{1,18})(?: ?/ ?(?P<m>\d{1,18}))? ?\]"
    r"|\( ?(?P<pn>\d{1,18}) ?/ ?(?P<pm>\d{1,18}) ?(?=[)|,]))"  # diffusers' flax: `Epoch... (39/116 | Loss: ...)`
)
_EPOCH_BATCH_PAIR = re.compile(r"\[\s*(?P<e>\d{1,6}),\s*(?P<n>\d{1,12})\]\s")
# `490 | loss 5.75 | ...`: a step printed bare at the start of a progress line.
# (`[10 | 28.41] loss=2.81 avg=2.81`: gpt-2's train.py and gpt-2-simple, the step and the seconds so far)
_LEADING_COUNTER = re.compile(
    r"(?:(?P<n>\d{1,12})\s*(?:\||:\s)|\[(?P<b>\d{1,12})\]\s|\[(?P<c>\d{1,12}) \| \d{1,9}(?:\.\d+)?\]\s)"
)
_MASK = re.compile(r"[-+]?\d+(?:[,.]\d+)*\.?(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b", re.I)
# `_MASK` without its words, for ASCII text holding neither (`re`'s case-insensitive `i` also
# matches `İ` and `ı`): the same masking, without trying the words at every position.
_MASK_NUMBERS = re.compile(r"[-+]?\d+(?:[,.]\d+)*\.?(?:[eE][-+]?\d+)?")
# An implied counter after these words counts evaluation batches, not training steps.
EVAL_WORD = re.compile(
    r"\b(?:val|valid|validation|validating|eval|evaluation|evaluating|test|testing|predict\w*)\b", re.I
)
_UNIT_IN_KEY = re.compile(
    r"^(?P<base>.*?)[ _]?(?:\((?P<p>[a-zµ/]+)\)|(?<=[a-z])_(?P<s>ms|s|sec|us|gib|gb|mb|mib)$)", re.I
)
_UNIT_WORDS = re.compile(r"^(?P<base>\w.*?)\s+in\s+(?P<u>ms|s|sec|seconds)$")
_RATE_UNITS = {
    "it/s": "it_per_s",
    "its/s": "it_per_s",
    "tok/s": "tokens_per_s",
    "toks/s": "tokens_per_s",
    "token/s": "tokens_per_s",
    "tokens/s": "tokens_per_s",
    "sample/s": "samples_per_s",
    "samples/s": "samples_per_s",
    "img/s": "samples_per_s",
    "imgs/s": "samples_per_s",
    "images/s": "samples_per_s",
    "ex/s": "samples_per_s",
    "examples/s": "samples_per_s",
    "seq/s": "samples_per_s",
    "seqs/s": "samples_per_s",
    # other data items a run counts (Leela's `(4083.19 pos/s)` board positions, speech's utterances)
    "pos/s": "samples_per_s",
    "positions/s": "samples_per_s",
    "utt/s": "samples_per_s",
    "utts/s": "samples_per_s",
    "utterances/s": "samples_per_s",
    "sent/s": "samples_per_s",
    "sents/s": "samples_per_s",
    "sentences/s": "samples_per_s",
    "pairs/s": "samples_per_s",
    "graphs/s": "samples_per_s",
    "docs/s": "samples_per_s",
    "instances/s": "samples_per_s",
    "clips/s": "samples_per_s",
    "videos/s": "samples_per_s",
    "step/s": "it_per_s",
    "steps/s": "it_per_s",
    "iter/s": "it_per_s",
    "iters/s": "it_per_s",
    "batch/s": "it_per_s",
    "batches/s": "it_per_s",
    "update/s": "it_per_s",  # sockeye, fairseq: optimizer updates per second
    "updates/s": "it_per_s",
    "ups/s": "it_per_s",
    "words/s": "tokens_per_s",  # Marian, OpenNMT, fairseq's wps: target words are its tokens
    "wrd/s": "tokens_per_s",
    # per device (InternLM's `tgs (tokens/gpu/second)=`)
    "tokens/gpu/s": "tokens_per_s_per_gpu",
    "tokens/s/gpu": "tokens_per_s_per_gpu",
    "tok/s/gpu": "tokens_per_s_per_gpu",
    "tokens/device/s": "tokens_per_s_per_gpu",
    "tokens/s/device": "tokens_per_s_per_gpu",
    "samples/gpu/s": "samples_per_s_per_gpu",
    "samples/s/gpu": "samples_per_s_per_gpu",
}
_PER_STEP_UNITS = ("/it", "/iter", "/step", "/batch")
_SCALE = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
_TIME_UNITS = frozenset({"ns", "us", "µs", "ms", "s", "sec", "secs", "second", "seconds", "min", "mins", "h", "hr"})
_MEM_UNITS = frozenset({"kb", "kib", "mb", "mib", "gb", "gib", "tb", "tib"})


@dataclass(frozen=True, slots=True)
class Reading:
    """What one line says, before any format gives it meaning."""

    shape: str  # the text after its logging prefix, values masked and spaces folded
    metrics: dict[str, float]  # canonical names (names.py); counters are not metrics
    step: int | None = None  # an explicit step/iteration counter (`step 5`, `iter: 5`, `global_step=5`)
    total: int | None = None  # its `/M`
    epoch: float | None = None
    inner: int | None = None  # an `n/M` counter without a name (batch within an epoch, `[10/1000]`)
    inner_total: int | None = None
    epoch_total: int | None = None  # `Epoch 3/10`
    evaluating: bool = False  # the counter follows `val`/`eval`/`test`: evaluation batches
    step_global: bool = False  # the step counter's name says it counts the whole run (`global_step`, `total step`)
    # its step time has no label or a clock's (`2137.9s`, `time: 299.84`, `7887 sec`), not a per-step one
    # (`time/step`, `s/it`, `batch_time`): it may be the run's clock (`generic._clock_time`)
    clock_ok: bool = False


# Labels a run's clock is printed under as well as a step time: what the number is, the reader tells from
# how it moves (`generic._clock_time`); `time/step`, `s/it`, `batch_time` say a step's own time.
_CLOCK_LABELS = frozenset(
    {"time", "elapsed", "elapsed time", "wall", "wall time", "walltime", "sec", "secs", "seconds"}
)


def prefix_end(text: str) -> int:
    """Where the line's logging prefix (timestamps, levels, `file.py:88`, rank labels) ends."""
    pos = 0
    while True:
        m = _PREFIX_PART.match(text, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
    while pos < len(text) and text[pos] in " \t|-:]>":
        pos += 1
    return pos


# A masked duration, whatever its units: a line printing `total: 70.1ms  remaining: 1m 10s`, then
# `total: 3.7s  remaining: 33s` (CatBoost, humanized times) keeps its shape as the times grow.
_SHAPE_DURATION = re.compile(r"#(?:ms|us|µs|ns|s|sec|secs|min|mins|m|h|hr|d)(?: ?#(?:ms|s|m|h))*(?![\w/])")


# A value's scale letter (`Tokens/s: 199.02`, then `1.68K`): humanized numbers keep their shape as they grow.
_SHAPE_SCALE = re.compile(r"#[KMBGTk](?![A-Za-z])")


def shape_of(text: str) -> str:
    """The text with values masked and spaces folded; the padding of a right-aligned value inside brackets
    (`Time 60.000 (60.000)`, then `Time  1.175 ( 4.022)`) is not part of the shape, nor the units of a
    duration (`#t`), nor a value's scale letter (`#K`), nor whether a clock prints its hours."""
    if "[" in text:
        text = _GLYPH_BAR.sub("[~]", text)  # `[####      ]`, `[=====>....]`: a drawn bar, whatever its fill
    mask = _MASK
    if text.isascii():
        low = text.lower()
        if "nan" not in low and "inf" not in low:
            mask = _MASK_NUMBERS
    shape = _SHAPE_SCALE.sub("#", _SHAPE_DURATION.sub("#t", " ".join(mask.sub("#", text).split())))
    if "#:#:#" in shape:  # a clock with its hours, or without them (`[00:04/1:05:18]`, then `[00:15/04:48]`)
        shape = shape.replace("#:#:#", "#:#")
    if shape.endswith(" *") and not shape.endswith("* *"):
        shape = shape[:-2]  # `Time: 0:30:31 *`: a loop's mark of its best evaluation so far
    return shape.replace("( #", "(#").replace("[ #", "[#") if "( #" in shape or "[ #" in shape else shape


def _int(raw: str) -> int | None:
    value = parse_number(raw)
    if value is None or not math.isfinite(value) or value < 0 or not value.is_integer() or value >= 1e18:
        return None
    return int(value)


@lru_cache(maxsize=4096)
def _key_parts(key: str) -> tuple[str, str | None]:
    """`time (ms)` -> ("time", "ms"); `step_time_ms` -> ("step_time", "ms"); `ms/batch` -> ("batch_time", "ms")."""
    low = key.lower()
    m = _UNIT_WORDS.match(low)
    if m:  # `train_step_timing in s`, `iter/s` in parentheses handled below
        return m.group("base"), m.group("u")
    for unit in ("ms", "s", "sec"):
        for per in _PER_STEP_UNITS:
            if low == unit + per:
                return "step_time", unit
    m = _UNIT_IN_KEY.match(key)
    if m and m.group("base"):
        unit = (m.group("p") or m.group("s") or "").lower()
        if unit in _TIME_UNITS or unit in _MEM_UNITS:
            return m.group("base"), unit
        if unit.startswith(("ms/", "s/", "sec/")) and unit.endswith(_PER_STEP_UNITS):
            return m.group("base"), unit.split("/")[0]
        if _rate(unit) is not None:  # `train_speed(iter/s)`
            return m.group("base"), unit
    return key, None


def _rate(unit: str) -> str | None:
    """`it/s`, `tokens/sec`, `img/s` -> the metric the rate is (`it_per_s` is turned into a step time)."""
    return _RATE_UNITS.get(unit.lower().replace("second", "s").replace("sec", "s"))


def _convert(key: str, raw: str, unit: str | None) -> tuple[str, float] | None:
    """A field's canonical name and value in the contract's units, or None if the unit is unknown."""
    value = parse_number(raw)
    if value is None:
        return None
    base, key_unit = _key_parts(key)
    if unit is not None and len(unit) > 2 and unit[0] in _SCALE and unit[1] == " ":
        value *= _SCALE[unit[0]]  # 512K tokens/s, 2.05K ms
        raw, unit = repr(value), unit[2:]
    if unit in _SCALE and key_unit is not None:  # `elapsed_time_per_iteration_ms: 28.2K`
        value *= _SCALE[unit]
        raw, unit = repr(value), None
    if unit is None:
        unit = key_unit
    if unit is None:
        rate = _rate(base) if "/" in base else None
        if rate is not None:  # `It/sec 2.11`, `tokens/s: 512`
            return rate, value
        name = field_name(base, "")
        return (name, value) if name else None
    if unit == "%":
        name = field_name(base, "%")
        return (name, value) if name else None
    if unit in ("/s", "/sec"):  # `201.43/s`: a throughput, in samples unless its label says what
        name = field_name(base, "/s") if base else "samples_per_s"
        return (name, value) if name else None
    low = unit.lower()
    rate = _rate(low)
    if rate is not None:
        return rate, value
    if "/" in low:  # 1.09s/it, 781us/step, 3.2ms/batch: time per step
        head, _, tail = low.partition("/")
        if "/" + tail in _PER_STEP_UNITS and head in _TIME_UNITS:
            seconds = parse_duration_s(f"{raw}{'s' if head in ('sec', 'secs') else head}")
            return ("step_time_s", seconds) if seconds is not None else None
        if head.upper() in ("K", "M", "B", "G", "T") and tail in ("s", "sec"):  # 512K/s next to its key
            name = field_name(base, "/s")
            return (name, value * _SCALE[head.upper()]) if name else None
        return None
    if low in _TIME_UNITS:
        seconds = parse_duration_s(f"{raw}{'s' if low in ('sec', 'secs', 'second', 'seconds') else low}")
        if seconds is None:
            seconds = value * 60 if low == "mins" else value * 3600 if low == "hr" else None
        name = field_name(base, "s") if base else "step_time_s"
        return (name, seconds) if name and seconds is not None else None
    if low in _MEM_UNITS:
        gib = parse_mem_gib(f"{raw}{unit}")
        name = field_name(base, "gib")
        return (name, gib) if name and gib is not None else None
    if unit in _SCALE:
        name = field_name(base, "")
        return (name, value * _SCALE[unit]) if name else None
    return None


def compound_duration(text: str, at: int) -> tuple[float, int] | None:
    """The seconds of a duration in parts starting at `at` and where it ends, or None: the parts
    go from larger units to smaller ones (`1m 10s`, not `10s 1m`), only the last with a fraction."""
    m = _COMPOUND_DURATION.match(text, at)
    if m is None:
        return None
    seconds, last = 0.0, math.inf
    parts = re.findall(r"(\d+(?:\.\d+)?)([dhms])", m.group(0))
    for i, (number, unit) in enumerate(parts):
        scale = _PART_UNITS[unit]
        if scale >= last or ("." in number and i < len(parts) - 1):
            return None
        seconds += float(number) * scale
        last = scale
    return seconds, m.end()


_ONE_DURATION = re.compile(r"\d{1,12}(?:\.\d{1,12})?(?:us|ms|s)(?=\s|$)")


def duration_at(text: str, at: int) -> tuple[float, int] | None:
    """A humanized duration starting at `at` (`70.1ms`, `3.7s`, `1m 10s`, `2h 5m`: CatBoost's `total`,
    StyleGAN's `time`): its seconds and where it ends, or None."""
    parts = compound_duration(text, at)
    if parts is not None:
        return parts
    one = _ONE_DURATION.match(text, at)
    seconds = parse_duration_s(one.group(0)) if one is not None else None
    return None if one is None or seconds is None else (seconds, one.end())


def read_group(m: re.Match[str] | None, group: str = "rest") -> Reading | None:
    """The fields of one group of a format's match, or None when there is no match or no metric:
    a format module recognises its line, the reader reads the values."""
    if m is None:
        return None
    reading = read_fields(m.group(group))
    return reading if reading is not None and reading.metrics else None


def named_value(key: str, value: float) -> tuple[str, float] | None:
    """A labelled value from a structured record (a dict, JSON) under its canonical name, its unit read
    from the label (`memory(GiB)`, `train_speed(iter/s)` -> `step_time_s`), or None when the label is
    not a metric (a process id, configuration)."""
    got = _convert(key, repr(value), None)
    if got is not None and got[0] == "it_per_s":
        return ("step_time_s", 1.0 / got[1]) if got[1] > 0 else None
    return got


_EVAL_HEAD = re.compile(
    # (Graph U-Nets' `average test of epoch 0: loss 0.53`: an average's words first)
    r"[\s\[(|*=-]*(?:(?:average|avg|mean)\s+)?(?:val|valid|validation|validating|eval|evaluation|evaluating|test|testing"
    r"|dev(?=\s*[:|\]-]|\s+(?:set|loss)\b))\b(?![-_])",  # (`Dev: loss: 0.65`, not a device's `dev 0`)
    re.I,
)
_DATE_REST = re.compile(r"-\d{1,2}-\d{1,2}(?!\d)")
_EVAL_ZH = re.compile("测试|验证")  # test, validation
# What an evaluation line prints that is not the evaluation's own figure: the run's state.
_NOT_EVALUATED = frozenset(("lr", "epoch", "total_steps", "loss_scale"))
# (an evaluation line named by its eval loss: the machine's figures stay theirs, a training figure too)
_NOT_EVALUATED_HERE = _NOT_EVALUATED | {"mem_gib", "max_mem_gib", "reserved_mem_gib", "grad_norm"}
_SET_PREFIX = re.compile(r"^(?:val|valid|validation|test|dev)_(?=.)")
_TIME_DATA = re.compile(r"\btime \(data\): (\d+\.?\d*) \((\d+\.?\d*)\)")
_GLYPH_BAR = re.compile(r"\[[#=>.\-█▏▎▍▌▋▊▉ ]{3,}\]")
_COPULAS = frozenset({"is", "was", "are", "equals"})
_MEASURES = frozenset(("fps", "sps", "per", "time", "sec", "secs", "seconds", "ms", "speed", "rate", "avg", "mean"))
_PHASE_WORDS = frozenset("train training val valid validation eval evaluation test testing dev".split())
_BRACKET_KEY = re.compile(r"(?:^|[\s|,;])\[(?P<key>[A-Za-z][A-Za-z_ ./-]{0,30})\][:=]?[ \t]+\Z")
_UPPER_LABELS = COUNTER_KEYS | EPOCH_KEYS | BATCH_KEYS | frozenset(("loss", "lr"))
_KEYWORD_AFTER = re.compile(r",\s*[A-Za-z_]\w*=")
_LAST_WORD = re.compile(r"(?<![\w.])([A-Za-z][A-Za-z0-9_]*) +$")


def key_end(window: str) -> re.Match[str] | None:
    """`_KEY_END.search(window)`, started where a match can start (see `_AFTER_LABEL`): when no
    `)` can close a unit of the label (the last `)` is followed by something no match holds)."""
    if window.isascii():
        close = window.rfind(")")
        if close < 0 or window[close + 1 :].strip(_AFTER_LABEL):
            return _KEY_END.search(window, len(window.rstrip(_AFTER_LABEL).rstrip(_LABEL_CHARS)))
    return _KEY_END.search(window)


def word_end(text: str) -> re.Match[str] | None:
    """`_WORD.search(text)`, started where a match can start: a word is a run of `_WORD_CHARS`."""
    if text.isascii():
        return _WORD.search(text, len(text.rstrip(_WORD_CHARS)))
    return _WORD.search(text)


def wrapper_end(window: str) -> re.Match[str] | None:
    """`_WRAPPER.search(window)`: only a window ending in `(` or `([` (and blanks) can hold one."""
    tail = window.rstrip()
    if tail.endswith("(") or tail.endswith("(["):
        return _WRAPPER.search(window)
    return None


def label_start(text: str, lo: int, previous: tuple[int, int] | None, start: int) -> int:
    """Where the text a value's label is read from may start, `previous` being the span of the
    value before it: the label and the words read before it lie after that value, unless the
    value may be part of a label (`Acc@1 75.3`, `lr-5: 2`: a value cannot follow a word
    character, only these; a `nan` or an exponent's `e` may begin one; a unit in parentheses may
    hold one); one character of it is kept for what precedes a label. The windows of a progress
    line's values then repeat from line to line (`| loss: `), and `label_of` is cached
    (tests/parsers/test_fields_fast_search.py: the same labels as the whole window)."""
    if previous is None:
        return lo
    value_start, value_end = previous
    if (
        (value_start > 0 and text[value_start - 1] in "/@%-")
        # a letter may begin a label (`nan` in `number of nan iterations: 0`, the `e` of `1e-4%ms/it`)
        or text[value_start:value_end].strip("0123456789.,+-")
        or text.find(")", value_end, start) >= 0  # the unit of a label (`critic/lr(1e-4): 0.1`)
    ):
        return lo
    return max(lo, value_end - 1)


@lru_cache(maxsize=8192)
def label_of(window: str) -> str | None:
    """The label at the end of `window` (the text before a value), or None."""
    wrapped = wrapper_end(window)
    if wrapped is not None:  # `loss tensor(0.69, device=...)`: the wrapper is not the label
        window = window[: wrapped.start()] + " "
    if window[-1:] in " \t" and window.rstrip(" \t").endswith(("]", "]:", "]=")):
        # LION's `| [Loss] nan | [step]  1574 |`, CoupletAI's `[epoch]: 199, [batch]: 23900`: the label in brackets
        b = _BRACKET_KEY.search(window)
        if b is not None:
            key = b.group("key")
            if key.lower() in _PHASE_WORDS or (key.isupper() and len(key) > 3 and key.lower() not in _UPPER_LABELS):
                return None  # (`[Train] 100 | loss: 0.5`: the phase, not a figure's name)
            return key
    m = key_end(window)
    if m is None:
        return None
    key = m.group("key")
    sep = bool(m.group("sep"))
    key_start = m.start()
    if (sep or m.group("gap")) and key.lower() in _COPULAS:
        # `Total loss is  29.86`, `loss was 2.1`, `the cls_loss is : 3572.3`: the word before the verb is the label
        w = _LAST_WORD.search(window, 0, m.start())
        if w is None:
            return None
        key, sep, key_start = w.group(1), True, w.start(1)
    if not sep:
        # `loss 2.31`: a plain word label and only spaces (or a quote) before the value.
        if (m.group("open") and key.lower() not in _LISTED_BARE) or (
            not m.group("gap") and not m.group("q") and not m.group("vq")
        ):
            return None  # (`lr [9.7e-06]`: a scheduler's `get_last_lr()` printed after its name)
        if key.lower() in STOP_WORDS or (key.isupper() and len(key) > 3 and key.lower() not in _UPPER_LABELS):
            return None  # (`INFO 3`, `WARNING 2`: a level, not a label; `EPOCH 1`, `LOSS 2.3` are labels)
    before = window[:key_start]
    if before.endswith((".", "-", "/")) or before[-1:].isdigit():
        return None  # the tail of a dotted/hyphenated token: `v1.2 3`, `2024-01 5`
    words = [key]
    if not m.group("q"):
        # up to three plain lower-case words before it: `train loss`, `elapsed time per iteration (ms)`
        rest = before
        for _ in range(3):
            if not rest.endswith(" ") or rest.endswith("  "):
                break
            w = word_end(rest[:-1])
            if w is None:
                break
            word = w.group(0)
            unit_in = word == "in" and words[-1] in ("s", "ms", "sec", "seconds")  # `train_step_timing in s`
            if (word.lower() in STOP_WORDS and not unit_in) or (word.isupper() and not _ACRONYM.fullmatch(word)):
                break  # (`INFO loss`: a level; `KL Loss`, `CE loss`, `L1 loss`: the loss's own name)
            prev = rest[: w.start()]
            if prev and not prev[-1].isspace() and prev[-1] not in "|,;[({":
                break
            if word.lower() in _TIME_UNITS and prev.rstrip(" ")[-1:].isdigit():
                break  # PaddleGAN's `batch_cost: 1.75 sec reader_cost: 0.94 sec`: the value before's unit
            words.insert(0, w.group(0))
            rest = prev
    return " ".join(words)


def _unit_after(text: str, end: int) -> tuple[str | None, int]:
    """The unit after a value; a scale letter may come before a spaced unit (`512K tokens/s`)."""
    m = _UNIT_ATTACHED.match(text, end)
    if m is not None:
        unit = m.group(0)
        if unit in _SCALE:
            spaced = _UNIT_SPACED.match(text, m.end())
            if spaced is not None:
                return unit + spaced.group(0), spaced.end()
        return unit, m.end()
    m = _UNIT_SPACED.match(text, end)
    if m is None:
        return None, end
    return m.group(0)[1:], m.end()


@lru_cache(maxsize=4096)
def _counter_kind(key: str) -> str | None:
    """ "step", "batch" or "epoch" when the label (or its last word) names a counter, else None."""
    head, _, tail = key.partition("/")
    words = key.split(" ")
    if len(words) > 1 and not _MEASURES.isdisjoint(w.lower() for w in words[:-1]):
        return None  # `fps step: 3574` (rl_games), `time per step`: a measure of steps, not their count
    labels = (words[-1], key, head) if "step" in tail else (words[-1], key)
    for label in labels:  # `global_step/max_steps` counts steps, `It/sec` is a rate
        norm = label.lower().replace(" ", "_").replace("-", "_")
        if norm in COUNTER_KEYS:
            return "step"
        if norm in BATCH_KEYS:
            return "batch"
        if norm in EPOCH_KEYS:
            return "epoch"
    return None


_GLOBAL_COUNTERS = frozenset(
    {"global_step", "globalstep", "global_steps", "trainer_global_step", "train_global_step", "global_iteration"}
    | {"acc_iter"}
    | {"total_train_updates", "total_updates", "num_updates"}
)


# `total step: [10/640000]`, `overall_iter 12`: a counter named for the whole run (YOLO v1's
# `epoch: [1/16000], total step: [10/640000], batch step [10/40]`), not one within the epoch.
# A step's duration printed as a clock (`dt=00:04:59`) after a label that can only mean one step's
# time (not `time`, which is as often the time since the start, nor `eta`).
_CLOCK_DURATION = re.compile(r"(\d{1,3}):([0-5]\d):([0-5]\d(?:\.\d{1,9})?)(?![\d:])")
_CLOCK_STEP_TIME = STEP_TIME_KEYS - {"time"}
# A banner's sizes (HF / PaddleNLP trainers, accelerate scripts): how many steps a phase will take, not
# the step it is at (`Total Steps: 5000`, with no phase named, stays a counter: the run's step, in RL).
_PLANNED_STEPS = re.compile(
    r"\b(?:(?:total|max|maximum)[ ]+(?:optimization|prediction|predict|evaluation|eval|validation|test|warmup|decay"
    r"|training|train|num)|max|maximum|(?:num|number[ ]+of)(?:[ ]+\w+)?)[ ]+steps\W{0,3}\Z",
    re.I,
)
_RUN_WIDE = re.compile(r"(?:total|global|overall)_(?:step|steps|iter|iters|iteration|iterations)$")
_RUN_WIDE_BEFORE = re.compile(r"(?:[Tt]otal|TOTAL|[Gg]lobal|GLOBAL|[Oo]verall)[ _]$")


@lru_cache(maxsize=1024)
def _counter_rank(key: str) -> int:
    """Which of two step counters on one line is the run's step: a global one (2), one named for
    steps (1), any other (`iter`, `updates`: 0)."""
    norm = key.lower().replace(" ", "_").replace("-", "_")
    if norm in _GLOBAL_COUNTERS or _RUN_WIDE.match(norm):
        return 2
    return 1 if norm.split("_")[-1] in ("step", "steps") else 0


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    for a, b in spans:  # (one or two spans: a loop, not a generator per value)
        if a <= at < b:
            return True
    return False


# A figure's name inside an evaluation's group or part (its value a number): it takes `val_` (`_segment_key`).
_SEGMENT_KEY = re.compile(r"(?<![\w.])(?P<key>[A-Za-z_]\w*)(?=\s?[:=]\s*(?:[-+]?\.?\d|nan\b|inf\b))")


# A group of figures under an evaluation set's name (DALI's ImageNet example: `train=[top1: 63.7, loss: 1.35],
# val=[top1: 0.98, loss: 6.21]`): its figures are the evaluation's.
_EVAL_GROUP = re.compile(
    r"\b(?P<set>val|valid|validation|test|eval|dev)\s?(?:=|: )(?P<open>[\[{])(?P<body>[^\]}\[{]{1,400})[\]}]"
)


def _eval_group(m: re.Match[str]) -> str:
    return m.group("set") + "=" + m.group("open") + _SEGMENT_KEY.sub(_segment_key, m.group("body")) + m.group(0)[-1]


# An evaluation's part of a line, after a bar (GAT's `Training: loss = 1.63, acc = 0.51 | Val: loss = 1.71,
# acc = 0.47 | Time: ...`): its figures are the evaluation's.
# (The pattern opens with its literal `|`: the regex engine skips to each `|` in C.)
_EVAL_SEGMENT = re.compile(r"\|(?P<head>\s*(?:val|valid|validation|test|eval|dev)\s?:\s)(?P<body>[^|]{1,400})", re.I)


def _eval_segment(m: re.Match[str]) -> str:
    return "|" + m.group("head") + _SEGMENT_KEY.sub(_segment_key, m.group("body"))


def _segment_key(m: re.Match[str]) -> str:
    """An evaluation's figure takes `val_`; its counter (`step=500`) stays the line's counter."""
    key = m.group("key")
    return key if _counter_kind(key) is not None or not field_name(key, "") else "val_" + key


_SPACED_COUNTER = re.compile(r"\b(batch|iter|step|sample)[ ](id|idx)\b", re.I)
_WEEKDAYS = ("Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun ")
_CTIME = re.compile(
    r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}\d{1,2}"
    r" \d{2}:\d{2}:\d{2}(?: \d{4})?"
)


_LISTED_BARE = frozenset(("lr", "lrs"))  # names read before a list with only a space between
# How many batches a figure was averaged over, between its label and its value.
_OVER_BATCHES = re.compile(
    r" (?:of|over) (?:the (?:last )?)?\d+ (?:batch(?:es)?|steps?|iter(?:ation)?s?|samples|examples|images|sentences)(?=\s*[:=])",
    re.I,
)


def read_fields(text: str) -> Reading | None:
    """Every field of `text`, or None when it holds no number with a label."""
    if "：" in text or "，" in text:
        text = text.replace("：", ": ").replace("，", ", ")  # full-width punctuation (`训练次数：100, Loss：1.98`)
    if "=[" in text or "={" in text or ": [" in text:
        text = _EVAL_GROUP.sub(_eval_group, text)
    if " id " in text or " idx " in text:
        text = _SPACED_COUNTER.sub(r"\1_\2", text)  # KoBERT's `epoch 1 batch id 201 loss 0.92`: one label
    if "|" in text and _EVAL_SEGMENT.search(text) is not None:
        text = _EVAL_SEGMENT.sub(_eval_segment, text)
    if " of " in text or " over " in text:
        text = _OVER_BATCHES.sub("", text)  # 2s-AGCN's `Mean test loss of 865 batches: 2.545`: the label is the rest
    lo = prefix_end(text)
    metrics: dict[str, float] = {}
    step = total = inner = inner_total = epoch_total = None
    step_rank = 0
    epoch: float | None = None
    counted_ends: list[tuple[int, int]] = []  # spans of values used as counters
    it_per_s: float | None = None
    plain_time = False  # the step time came from a bare `time` with a unit
    step_time_key: str | None = None  # the label the step time was printed under
    listed: set[str] = set()  # names whose value is the first of a printed list
    bare_time: float | None = None  # a duration with no label: the step time if nothing else says
    evaluating = False
    eval_bare: list[tuple[str, str]] = []  # values labelled only by an evaluation set's name
    epoch_by_ep = False  # the epoch came from a label `ep` (which may count episodes)
    braces = "}" in text
    if (" 20" in text or " 19" in text) and any(map(text.__contains__, _WEEKDAYS)):
        ctime = _CTIME.search(text, lo)
        if ctime is not None:  # `..., Wed Jul  3 17:13:58 2019` (C's ctime, TF1 loops): a date, no value
            counted_ends.append(ctime.span())
    if "[" in text or "(" in text:
        for bc in _BRACKET_COUNTER.finditer(text, lo):
            bkind, bn = _counter_kind(bc.group("key")), int(bc.group("n") or bc.group("pn"))
            m_raw = bc.group("m") or bc.group("pm")
            of = int(m_raw) if m_raw else None
            if of is not None and bn > of:
                continue
            if bkind == "epoch" and epoch is None:
                epoch, epoch_total = float(bn), of  # `Epoch [648/650]`: the epoch of its total
            elif bkind == "batch" and inner is None:
                inner, inner_total = bn, of
            elif bkind == "step" and step is None:
                step, total, step_rank = bn, of, _counter_rank(bc.group("key"))
                if _RUN_WIDE_BEFORE.search(text, max(lo, bc.start() - 8), bc.start()):
                    step_rank = 2  # `total step: [10/640000]` (the pattern's key is the last word)
            else:
                continue
            counted_ends.append(bc.span("n") if bc.group("n") else (bc.start("pn"), bc.end("pm")))
    if "time (data)" in text:
        td = _TIME_DATA.search(text, lo)
        if td is not None:  # BasicSR's MessageLogger: `time (data): 2.013 (0.522)`, the step and its data wait
            metrics["step_time_s"], metrics["data_time_s"] = float(td.group(1)), float(td.group(2))
            counted_ends.append((td.start(1), td.end(2)))
    previous: tuple[int, int] | None = None  # the span of the value before
    parts_end = -1  # the end of the last duration in parts: its later parts are not values of their own
    for m in _VALUE.finditer(text, lo):
        start, end = m.span("val")
        before = previous
        cut, previous = label_start(text, lo, previous, start), (start, end)
        if start < parts_end or (counted_ends and _inside(start, counted_ends)):
            continue
        raw = m.group("val")
        if text.startswith(":", end) and text[end + 1 : end + 2].isdigit():
            clock = _CLOCK_DURATION.match(text, start) if raw.isdigit() else None
            if clock is not None:  # llama.cpp `dt=00:04:59`: a step's time as a clock
                key = label_of(text[max(cut, start - _KEY_WINDOW) : start])
                if key is not None and key.lower() in _CLOCK_STEP_TIME:
                    h, mi, sec = clock.groups()
                    metrics.setdefault("step_time_s", int(h) * 3600 + int(mi) * 60 + float(sec))
                    parts_end = clock.end()
            continue  # a clock time (`ETA 00:04:16`), a ratio or a port, not a value
        if text.startswith("-", end) and _DATE_REST.match(text, end):
            continue  # a date (`TIME: 2025-08-19 14:22:56`), not a value
        if text.startswith(" day", end) and _DAYS_CLOCK.match(text, end):
            continue  # the days of a duration (`eta: 27 days, 22:18:02`, Python's timedelta)
        if text[end : end + 1] in _PART_UNITS and not text[end + 1 : end + 2].isalpha():  # (`1m 10s`, not `1ms`)
            parts = compound_duration(text, start)
            if parts is not None:
                seconds, parts_end = parts  # (not a span of `counted_ends`: thousands of them were quadratic)
                label = label_of(text[max(cut, start - _KEY_WINDOW) : start])
                got = _convert(label, repr(seconds), "s") if label is not None else None
                if got is not None and _counter_kind(label) is None:  # (unlabelled: an ETA or a total, not read)
                    metrics.setdefault(*got)
                continue
        unit, _after = _unit_after(text, end)
        if unit is not None and unit.lower() in _TIME_UNITS and text.startswith(("/", " /"), _after):
            per = _PER_N_STEPS.match(text, _after)
            if per is not None:  # torchcv's `Time 91.554s / 100iters`, `Data load 0.018s / 100iters`: over N steps
                label = label_of(text[max(cut, start - _KEY_WINDOW) : start]) or ""
                got = _convert("", raw, unit)
                count = int(per.group(1))
                if got is not None and count > 0 and got[0] == "step_time_s":
                    name = "data_time_s" if "data" in label.lower() else "step_time_s"
                    each = _EACH_AFTER.match(text, per.end())  # `(0.916)`: the time of one, as printed
                    metrics.setdefault(name, float(each.group(1)) if each is not None else got[1] / count)
                    parts_end = each.end() if each is not None else per.end()
                    continue
        if unit is not None and unit.lower() in _TIME_UNITS and _over_steps_near(text, max(lo, start - 40), start):
            over = _OVER_STEPS.search(text, max(lo, start - 40), start)
            if over is not None and _NOT_OVER.search(text, max(lo, over.start() - 24), over.start()) is not None:
                over = None  # (`mean step time (100 steps):`, `ETA for 1000 steps:`: not the time the N steps took)
            if over is not None:  # HugeCTR's `Time(1000 iters): 5.38s`: the time of N steps
                over_n = int(over.group("a") or over.group("b") or over.group("c"))
                got = _convert("", raw, unit)
                if got is not None and over_n > 0:
                    metrics.setdefault("step_time_s", got[1] / over_n)
                continue
        window = text[max(cut, start - _KEY_WINDOW) : start]
        key = label_of(window)
        if (
            key is not None
            and before is not None
            and "(" in window
            and key.lower() in _AVERAGE_ASIDE
            and _ASIDE_OPEN.search(window)
        ):
            # torchcv's `Loss = 213.2 (ave = 149.97)`, `Loss:0.564 (Avg 0.5566)`: the running average of
            # the value before it, under that value's name
            owner = label_of(text[max(lo, before[0] - _KEY_WINDOW) : before[0]])
            if owner is not None and _counter_kind(owner) is None:
                # (only a name kept as printed or the loss: `Time 0.5 (avg 0.6)` stays `avg`, its value
                # being stored as the step time)
                own = field_name(owner, "")
                if own in (snake(owner), "loss", "eval_loss"):
                    key = f"{own} avg"
        if key is not None and key.lower() in ("time", "loss") and _TOTAL_OF.search(window):
            # `| Total Time 5.3s |`: the run's or the epoch's time so far, not a step's; `Total Loss=`
            # beside its terms (`total` is no label word: `total 5`)
            key = f"total {key.lower()}"
        if braces and text.startswith("}", end) and (key is None or _convert(key, raw, unit) is None):
            one = _ONE_ENTRY.search(text, max(lo, start - _KEY_WINDOW), start)
            if one is not None:  # InternLM's `grad_norm={'0_default': 61.58}`: the one entry is the value
                key = one.group("key")
        if key is None and window.rstrip(" \t")[-1:] in (":", "=") and window.rstrip(" \t:=")[-1:].isdigit():
            named = _NAMED_AT_COUNTER.search(text, max(lo, start - _KEY_WINDOW), start)
            if named is not None:  # `Training loss (for one batch) at step 0: 2.59` (TF's guide to custom loops)
                key = _ASIDE.sub("", named.group("label")).strip()
        if key is None:
            # A value named by its unit alone: `29403.65 tok/s`, `1.09s/it`, `(1.2 ms, ...)`.
            if unit is not None and unit != "%":
                got = _convert("", raw, unit)
                if got is not None and got[0] == "it_per_s":
                    it_per_s = got[1]
                elif got is not None and got[0] == "step_time_s":
                    if bare_time is None or unit.endswith(("/step", "/it", "/iter")):
                        bare_time = got[1]  # (Keras: `52s 158ms/step`, the epoch's time then the step's)
                elif got is not None and got[0] in ("tokens_per_s", "samples_per_s"):
                    metrics.setdefault(got[0], got[1])
            continue
        kind = _counter_kind(key)
        if kind == "step" and key[-5:].lower() == "steps" and _PLANNED_STEPS.search(window):
            continue  # `Total optimization steps = 1000`, `Total prediction steps = 192`: a size, not a counter
        if kind is None and key.lower() in _PHASE_LABELS and _BATCH_AFTER.match(text, end):
            kind = "epoch"  # timm: `Train: 3 [ 350/5004 (7%)]`, the epoch before its batch counter
        elif (
            kind is None
            and start - lo < 12
            and raw.isdigit()
            and len(raw) <= 4
            and text.startswith(", ", end)
            and _PHASE_HEAD.fullmatch(text, lo, start)
        ):
            kind = "epoch"  # DGCNN's `Train 0, loss: 1.79, train acc: ...` / `Test 0, loss: 1.62`: the loop's epoch
        if kind is not None:
            if text.startswith(",", end) and window.rstrip(" \t").endswith(("=[", ":[", "= [", ": [")):
                continue  # 2s-AGCN's config `'step': [30, 40]`: the epochs the lr drops at, not a counter
            value = parse_number(raw)
            if value is None or not math.isfinite(value):
                continue
            t = _SLASH_TOTAL.match(text, end)
            of = int(t.group("m")) if t is not None else None
            n = _int(raw)
            if kind == "step" and n is not None and (step is None or _counter_rank(key) > step_rank):
                # ParlAI `'updates': 81, ..., 'total_train_updates': 151`, litgpt `iter 120 | step 30`:
                # the run's global counter over a per-report one, optimizer steps over micro-batches
                # `STEP: 0/3984 -- GLOBAL_STEP: 0`: the same count, its total kept
                total = of if of is not None or n != step else total
                step, step_rank = n, _counter_rank(key)
            elif kind == "batch" and inner is None and n is not None:
                inner, inner_total = n, of
            elif kind == "epoch" and (epoch is None or (epoch_by_ep and key.lower() in ("epch", "epoch"))):
                # (LeRobot's `ep:9 epch:0.03`: its `ep` counts episodes when an epoch is printed beside it)
                epoch, epoch_total, epoch_by_ep = value, of, key.lower() == "ep"
            elif kind == "batch" and n is None and "step_time_s" not in metrics and _AVERAGE_AFTER.match(text, end):
                # Pointcept's `Data 0.008 (1.045) Batch 0.499 (1.872)`: the batch's time and its average
                metrics.setdefault("step_time_s", value)
            else:
                continue
            counted_ends.append((start, t.end() if t is not None else end))
            continue
        if _SLASH_TOTAL.match(text, end) and unit is None:
            continue  # `loss 3/4`: a fraction or a counter with a label we do not know
        if unit is None and key in _EVAL_SETS and not _WORD_AFTER.match(text, end):
            # `loss: 3.07 | val: 2.96`: the held-out set's loss, named by the set alone (decided below)
            eval_bare.append((key, raw))
            continue
        got = _convert(key, raw, unit)
        if got is None:
            continue
        name, value = got
        if name == "it_per_s":
            it_per_s = value
            continue
        if name == "step_time_s" and key is not None and key.lower() == "time" and unit is not None:
            plain_time = True  # (a bare `time: 50s`: maybe the logging interval's, which a rate corrects)
        if name == "step_time_s" and name not in metrics:
            step_time_key = key
        if (
            name not in metrics
            and text[max(lo, start - 2) : start].strip()[-1:] in ("[", "(")
            and (text[end : end + 2].lstrip().startswith(","))
            and not _KEYWORD_AFTER.match(text, end)  # (`tensor(3572.3, device='cuda:0')`: one value, not a list)
        ):
            listed.add(name)  # `Losses: [1.27, 4.04, ...]`: the first of several, not the whole
        metrics.setdefault(name, value)
    if step is None and inner is None and metrics:
        lead = _LEADING_COUNTER.match(text, lo)
        if lead is not None:
            step = int(lead.group("n") or lead.group("b") or lead.group("c"))
        elif epoch is None and text.startswith("[", lo):
            pair = _EPOCH_BATCH_PAIR.match(text, lo)
            if pair is not None:  # PyTorch's CIFAR-10 tutorial: `[2, 12000] loss: 1.247`, the epoch and its batch
                epoch, inner = float(pair.group("e")), int(pair.group("n"))
    if step is None and inner is None and epoch is None and ("][" in text or "] [" in text or "]  [" in text):
        pair = _EPOCH_BATCH.search(text, lo)
        if (
            pair is not None
            and int(pair.group("e")) <= int(pair.group("et"))
            and int(pair.group("n")) <= int(pair.group("m"))
        ):
            epoch, epoch_total = float(pair.group("e")), int(pair.group("et"))
            inner, inner_total = int(pair.group("n")), int(pair.group("m"))
            evaluating = EVAL_WORD.search(text, lo, pair.start()) is not None
    if step is None and inner is None:
        for bare in _BARE_COUNTER.finditer(text, lo):
            if any(a <= bare.start() < b for a, b in counted_ends):
                continue
            n, mm = int(bare.group("n")), int(bare.group("m"))
            if mm == 0 or n > mm:
                continue
            inner, inner_total = n, mm
            evaluating = EVAL_WORD.search(text, lo, bare.start()) is not None
            break
    if step is None and inner is not None and inner_total is None and text.startswith("[", lo):
        lead = _BARE_COUNTER.match(text, lo + 1)
        if lead is not None and 0 < int(lead.group("m")) and int(lead.group("n")) <= int(lead.group("m")):
            # `[000500/50000] X4K | loss 0.0488 | ... | batch 16`: the counter the line opens with,
            # against its total, over a `batch` with none (a batch size)
            inner, inner_total = int(lead.group("n")), int(lead.group("m"))
            evaluating = EVAL_WORD.search(text, lo, lead.start()) is not None
    clock_ok = step_time_key is not None and step_time_key.strip().lower() in _CLOCK_LABELS
    if "step_time_s" not in metrics:
        if bare_time is not None:
            metrics["step_time_s"] = bare_time
            clock_ok = True
        elif it_per_s and it_per_s > 0:
            metrics["step_time_s"] = 1.0 / it_per_s
    elif plain_time and it_per_s and it_per_s > 0 and metrics["step_time_s"] * it_per_s > 1.5:
        # MMF's `ups: 2.00, time: 50s 136ms`: updates per second, and the time of the last 100 of them
        metrics["step_time_s"] = 1.0 / it_per_s
    if eval_bare:
        first = parse_number(eval_bare[0][1])
        if (
            len(eval_bare) == 1
            and first is not None
            and "loss" in metrics
            and "eval_loss" not in metrics
            # (`acc: 0.9 | val: 0.85`, `dev_bleu 20 dev 25.1`: the set's other figure, maybe)
            and not any(f in n for n in metrics for f in _OTHER_FIGURES)
        ):
            metrics["eval_loss"] = first
        else:  # (DGL's `Train: 0.7351, Val: 0.7079, Test: 0.6753`: accuracies, under their own names)
            for key, raw in eval_bare:
                got = _convert(key, raw, None)
                if got is not None:
                    metrics.setdefault(*got)
    if not metrics and step is None and epoch is None and inner is None:
        return None
    if "total_time_s" in metrics and "step_time_s" not in metrics and any(map(_STEP_PART.search, metrics)):
        # `data time 0.01s | total time 0.35s`: a total beside the parts of one step is the step's time
        metrics["step_time_s"] = metrics.pop("total_time_s")
    settle_weak(metrics, listed)
    if step is not None or inner is not None or epoch is not None:
        settle_sole_loss(metrics, listed)
    if (
        "loss" in metrics
        and "eval_loss" not in metrics
        and (_EVAL_HEAD.match(text, lo) or _EVAL_ZH.search(text, lo, lo + 16))
    ):
        # `Valid Summary | Epoch 1 | ce=6.651`, `Eval Epoch: 12 ... Loss: 6.9`, `Test: [ 0/79] Loss 0.52`:
        # the line reports an evaluation, its loss is the evaluation loss, its other figures the
        # evaluation's (`Validation Results - Epoch[1] Avg accuracy: 0.95 Avg loss: 0.15`)
        metrics["eval_loss"] = metrics.pop("loss")
        for name in [n for n in metrics if not n.startswith("eval_") and n not in _NOT_EVALUATED]:
            metrics[f"eval_{name}"] = metrics.pop(name)
    elif "eval_loss" in metrics and "loss" not in metrics and (head := _EVAL_HEAD.match(text, lo)) is not None:
        # `| Eval   2 at step  8000 | time: 2484.77s | valid loss  7.39 | valid ppl 1616.1`: the
        # evaluation's time and figures, not a step's; its own count (`Eval 2`) is no figure
        metrics.pop(head.group(0).strip(" \t[(|*=-").lower(), None)
        for name in [n for n in metrics if not n.startswith(("eval_", "train_")) and n not in _NOT_EVALUATED_HERE]:
            own = _SET_PREFIX.sub("", name)  # (`valid ppl` is the evaluation's `eval_ppl`, not `eval_valid_ppl`)
            metrics[f"eval_{own}"] = metrics.pop(name)
    if step is not None and "loss" not in metrics and EVAL_WORD.search(text, lo, lo + 40):
        evaluating = True
    return Reading(
        shape=shape_of(text[lo:]),
        metrics=metrics,
        step=step,
        total=total,
        epoch=epoch,
        inner=inner,
        inner_total=inner_total,
        epoch_total=epoch_total,
        evaluating=evaluating,
        step_global=step_rank == 2,
        clock_ok=clock_ok and "step_time_s" in metrics,
    )

"""Sentences about non-finite numbers and fp16 loss scaling: a NaN/inf loss or gradient norm,
and a gradient overflow that lowers the loss scale.

A helper of `events.py`, not a parser. Step lines carrying `loss=nan` already raise `nan` events
where they are read (the runner); these are the lines that are not steps:

    Loss is nan, stopping training                      (torchvision references, DETR, MAE, DeiT)
    WARNING: grad norm is nan. Do not update model.      (ESPnet1)
      eval_loss               =        nan               (HF Trainer's metrics summary)
    NOTE: overflow detected, setting loss scale to: 64.0 (fairseq)
    Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0 (apex amp)
    overflow, still update, loss scale adjust to 1024.0 (MindSpore)

A loop that stops on the non-finite loss (`stopping training`) exits: that is a `crash` too.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.names import metric_name
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter

# Every line this module reads contains one of these (part of the events pre-filter).
PREFILTER = (
    r"(?i:\bis\s+[-+]?(?:nan|inf)|[=:]\s*[-+]?(?:nan|inf)\s*$|overflow"
    r"|\b(?:nan|inf)\b[\w /]{0,40}?\b(?:detected|found|encountered)\b|\b(?:detected|found|encountered|received|got) (?:an? )?(?:nan|inf)\b"
    r"|\bdue to (?:an? )?(?:nan|inf)\b)"
)

_VALUE = r"(?P<value>[-+]?(?:nan|inf(?:inity)?))\b"
_SENTENCE = re.compile(
    r"(?<![\w.])(?P<what>(?:(?:train(?:ing)?|val(?:idation)?|eval(?:uation)?|valid)[ _])?loss"
    r"|grad(?:ient)?[ _]?norm)\s+(?:is|was|became|becomes)\s+" + _VALUE + r"(?P<rest>.*)$",
    re.I,
)
# A loop's own check: `NaN or Inf detected in model parameters after step 2361 in epoch 0.`, `Detected NaN
# in the loss`, `Stopping training due to NaN or Inf ... at step 2361` (its step, when it names one).
_DETECTED = re.compile(
    r"\b(?:NaN|nan|NAN|Inf|inf|INF)\b(?:\s*(?:or|/|and)\s*(?:Inf|inf|INF|NaN|nan))?[\w /]{0,40}?\b(?:detected|found|encountered)\b"
    # (deepspeech.pytorch: `WARNING: received a nan loss, setting loss value to 0`)
    r"|\b(?:[Dd]etected|[Ff]ound|[Ee]ncountered|[Rr]eceived|[Gg]ot) (?:an? )?(?:NaN|nan|NAN|Inf|inf)\b"
    r"|\b(?P<stop>[Ss]top(?:ping|ped)?|[Aa]bort(?:ing|ed)?|[Tt]erminat(?:ing|ed)) (?:the )?(?:training |run )?due to (?:an? )?(?:NaN|nan|Inf|inf)\b"
)
# (`No NaN detected`, `NaN values found: 0`, `skipping the check for NaN found in inputs` is no incident)
_NONE_FOUND = re.compile(r"\b(?:[Nn]o|NO|[Nn]ot|[Ww]ithout|[Zz]ero|[Nn]one)\b|[:=]\s*0\b|\b0 (?:NaN|nan|Inf|inf)")
_AT_STEP = re.compile(r"\b(?:at|after|in) (?:step|iteration|iter) (\d{1,12})\b")
_STOPS = re.compile(r"\b(?:stop(?:ping)?|terminat(?:e|ing)|exit(?:ing)?|abort(?:ing)?)\b", re.I)
# An indented line of a summary block holding one field: `  eval_loss = nan`, `  train_loss: inf`
# (a loop's own unindented `training loss: nan`, printed again and again, is read as its steps).
_KEY_LINE = re.compile(r"^\s+(?P<key>[A-Za-z][\w/ .-]{0,60}?)\s*[=:]\s*" + _VALUE + r"\s*$", re.I)
_WATCHED = ("loss", "eval_loss", "grad_norm")
# (MindSpore / MindYOLO: `overflow, still update, loss scale adjust to 1024.0`)
_OVERFLOW = re.compile(
    r"\boverflow\b.*?(?:\b(?:setting|reducing|reduce|set) (?:the )?loss scale(?:r)? to"
    r"|\bloss scale(?:r)? (?:adjust(?:ed)?|reduced|lowered|set) to):?\s*(?P<scale>\d[\d.eE+-]*)",
    re.I,
)


_OVERFLOW_WORD = re.compile(r"\boverflow\b", re.I)


def _sentence_metric(what: str) -> str:
    words = what.lower().replace(" ", "_")
    if "norm" in words:
        return "grad_norm"
    return "loss" if words.endswith("loss") and words.startswith(("loss", "train")) else "eval_loss"


class Numerics:
    """Reads NaN/inf sentences and overflow notes of one source."""

    def __init__(self) -> None:
        self._detected_at = -2  # the line of the last `NaN detected` sentence read

    def line(self, body: str, text: str, line: Line, out: Emitter, rank: int | None) -> tuple[bool, bool]:
        """(understood, stopped): whether the line was one of these, and whether the loop said it stops.

        `body` is stripped, `text` as printed (its indentation tells a summary block)."""
        m = _SENTENCE.search(body)
        if m:
            metric = _sentence_metric(m.group("what"))
            out.event("nan", "error", body, {"metric": metric}, rank=rank, line=line.no)
            return True, bool(_STOPS.search(m.group("rest")))
        m = _DETECTED.search(body)
        if m and _NONE_FOUND.search(body) is None:
            stopped = m.group("stop") is not None
            if (
                self._detected_at == line.no - 1
            ):  # (`NaN detected ...` then `Stopping training due to NaN`: one incident)
                self._detected_at = line.no
                return True, stopped
            self._detected_at = line.no
            at = _AT_STEP.search(body)
            step = int(at.group(1)) if at is not None else None
            low = body.lower()
            metric = "loss" if "loss" in low else "grad_norm" if "grad" in low else "parameters"
            out.event("nan", "error", body, {"metric": metric}, rank=rank, line=line.no, step=step)
            return True, stopped
        m = _KEY_LINE.match(text)
        if m and metric_name(m.group("key")) in _WATCHED:
            metric = metric_name(m.group("key"))
            out.event("nan", "error", body.strip(), {"metric": metric}, rank=rank, line=line.no)
            return False, False  # the line is still a field of whatever block it belongs to
        at = _OVERFLOW_WORD.search(body)  # (from its first `overflow` only: each later start is a suffix of it,
        m = _OVERFLOW.match(body, at.start()) if at is not None else None  # and trying them all was quadratic)
        if m:
            scale = parse_number(m.group("scale").rstrip("."))
            data = {"new_scale": int(scale) if scale is not None and scale.is_integer() else scale}
            out.event("overflow", "warning", body, data if scale is not None else {}, rank=rank, line=line.no)
            return True, False
        return False, False

"""tqdm progress bars as several frameworks print them (HF Trainer, Lightning, Ultralytics).

    Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]
      2%|██████▊     | 200/8264 [23:37<15:44:25,  7.03s/it]{'loss': 12.4476, ...}
    Epoch 0:  34% 1020/3000 [01:04<02:05, 15.73it/s, loss=1.2, v_num=1024]      (notebook, no bar)

A helper, not a parser: it has no Parser subclass, so the registry registers nothing from it.
The rate tqdm prints is its smoothed estimate; `seconds_per_it` turns `it/s` into `s/it`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainwatch.numbers import parse_eta_s, parse_number, parse_rate

# The percentage and bar may be missing: a print without newline overwrote the bar's left part
# (`...grad_fn=<SqueezeBackward1>)      | 1/100 [00:01<03:15,  1.97s/it, acc=0]`).
_BAR = re.compile(
    r"(?:(?P<pct>\d{1,3})%(?:\|(?P<bar>[^|]*)\||\s)|\|)\s*(?P<n>\d{1,18}(?!\d))/(?P<total>\d{1,18}(?!\d))\s*\[(?P<inner>[^\]]*)\]"
)
# A bar without a total: `| 4540/? [07:57<00:00,  9.51it/s]`, `50001it [00:40, 1244.54it/s, loss=0.1]`.
_OPEN_BAR = re.compile(
    r"(?:(?:\|[^|]*\|\s*)?(?P<n>\d{1,18}(?!\d))/\?|(?<![\w.])(?P<n2>\d{1,18})it)\s*\[(?P<inner>[^\]]*<[^\]]*|[^\]<]*(?:it/s|s/it)[^\]]*)\]"
)
_CLOCK = re.compile(r"^\d{1,18}(?::\d{2}){1,2}$")
# The rate's unit, where it is not `it`: `3200.11 examples/s`, `60.1MB/s`, `1.2s/file`, `?B/s`.
_UNIT_RATE = re.compile(r"^(?:[\d.]+|\?)\s*(?P<unit>[A-Za-z][A-Za-z ]{0,20})/s$|^[\d.]+\s*s/(?P<per>[A-Za-z]{1,20})$")


@dataclass(frozen=True, slots=True)
class Bar:
    desc: str  # text before the percentage, stripped of its trailing colon: "Epoch 0"
    n: int
    total: int
    seconds_per_it: float | None
    elapsed_s: float | None
    remaining_s: float | None
    postfix: tuple[tuple[str, str], ...]  # ("loss", "0.234"), ("v_num", "12")
    unit: str  # what the bar counts, from its rate: "it" (tqdm's default), "examples", "MB", "batch"
    start: int  # match span in the text (what is glued after the bar starts at `end`)
    end: int
    # postfix text that is no `key=value` (`set_postfix_str`): ai-toolkit's `lr: 2.0e-04 loss: 5.226e-01`
    postfix_text: tuple[str, ...] = ()


def _clock_s(text: str) -> float | None:
    t = text.strip()
    if not _CLOCK.match(t):
        return None
    parts = [int(p) for p in t.split(":")]
    if len(parts) == 2:
        parts.insert(0, 0)
    return parse_eta_s(f"{parts[0]}:{parts[1]:02d}:{parts[2]:02d}")


def find_bar(text: str, *, open_total: bool = False) -> Bar | None:
    """The first tqdm bar in the text, or None. `open_total`: a bar whose total is unknown (an
    iterable without `len`: `Epoch 0: |  | 4540/? [07:57<00:00, 9.51it/s]`, `50001it [00:40, ...]`)
    too, with `total` 0."""
    if "[" not in text:
        return None  # (both forms hold `[`: most lines are not bars and skip two searches)
    m = _BAR.search(text)
    if not m and open_total:
        m = _OPEN_BAR.search(text)
    if not m:
        return None
    groups = m.groupdict()
    n, total = int(groups["n"] or groups.get("n2") or 0), int(groups.get("total") or 0)
    if (total <= 0 and not open_total) or (total > 0 and n > total):
        return None
    parts = [p.strip() for p in m.group("inner").split(",")]
    if not parts or ("<" not in parts[0] and (total > 0 or _clock_s(parts[0]) is None)):
        return None
    elapsed, _, remaining = parts[0].partition("<")
    seconds_per_it: float | None = None
    unit = "it"
    postfix: list[tuple[str, str]] = []
    postfix_text: list[str] = []
    for i, part in enumerate(parts[1:]):
        if i == 0:
            rate = parse_rate(part)
            if rate is not None:
                name, speed = rate
                if name == "s_per_it":
                    seconds_per_it = speed
                elif speed > 0:
                    seconds_per_it = 1.0 / speed
                continue
            if part.endswith(("it/s", "s/it")):  # `?it/s`: no rate yet
                continue
            other = _UNIT_RATE.match(part)
            if other is not None:
                unit = (other.group("unit") or other.group("per")).strip()
                continue
        key, eq, value = part.partition("=")
        if eq and key.strip():
            postfix.append((key.strip(), value.strip()))
        elif ":" in part:
            postfix_text.append(part)
    desc = text[: m.start()].rstrip()
    if desc.endswith(":"):
        desc = desc[:-1]
    return Bar(
        desc=desc.strip(),
        n=n,
        total=total,
        seconds_per_it=seconds_per_it,
        elapsed_s=_clock_s(elapsed),
        remaining_s=_clock_s(remaining),
        postfix=tuple(postfix),
        unit=unit,
        start=m.start(),
        end=m.end(),
        postfix_text=tuple(postfix_text),
    )


# A bar somewhere before a message glued after it (`... 500/500 [06:52<00:00]Model weights saved`).
# Not from inside a number: `\d+/\d+` tried from every digit of a long digit run backtracks through
# the whole run each time (a damaged line of 5,000-digit numbers took a second per search).
BAR_BEFORE = re.compile(r"(?<!\d)\d+/\d+ \[[^\]]*\]")
_BLANKS = re.compile(r"^(?:\s|\^M)+")  # spaces and a literal `^M` that a pasted log carries
_RATE_END = ("it]", "it/s", "s/it", "/s]")


def glued_after_bar(text: str) -> int | None:
    """Where a message printed over a tqdm bar starts (`...| 379/2724 [14:00<86:09, 132.28s/it][2023-06-07 ...`,
    `...7.69it/s]Iter 20: Train loss 3.142`), or None. Redraws of the bar stay together, and a dict
    glued after the last one stays with it: the HF Trainer prints its logs there and reads them with
    the bar's step."""
    if "]" not in text or not any(end in text for end in _RATE_END):
        return None
    at = 0
    for _ in range(64):
        bar = find_bar(text[at:], open_total=True)
        if bar is None:
            break
        at += bar.end
    else:
        return None
    if at == 0 or at >= len(text):
        return None
    rest = _BLANKS.sub("", text[at:])
    if len(rest) < 4 or rest.startswith("{"):
        return None
    return at


def postfix_number(value: str) -> float | None:
    """A postfix value (`0.234`, `'0.234'`, `1.2e-05`); None for text such as `v_num=ph0c`."""
    return parse_number(value)

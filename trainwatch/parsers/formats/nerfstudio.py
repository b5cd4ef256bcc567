"""nerfstudio's step table (its LocalWriter), and the same table through rich's logging:

    Step (% Done)       Train Iter (time)    ETA (time)           Train Rays / Sec     Test Rays / Sec
    --------------------------------------------------------------------------------------------------------
    3710 (1.24%)        30.652 ms            2 h, 31 m, 21 s      1.05 K
    4090 (81.78%)       43.140 ms            39 s, 300.687 ms     14.86 M                                    latfacto.py:566

A row is a step: its number, the share of the run done, the time of one training iteration, the
time left (`eta_s`) and the rays per second (`train_rays_per_s`, its `K`/`M` expanded). Rich's
logging puts the caller's `file.py:line` at the right edge: it is not a value. The table is redrawn
under its header every few steps; a row goes on being read after the header is gone from view.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_HEADER = re.compile(r"^\s*Step \(% Done\)\s+Train Iter \(time\)")
_RULE = re.compile(r"^\s*-{20,}\s*(?:\S+\.py:\d+\s*)?$")
_UNIT_S = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "us": 1e-6, "µs": 1e-6}
_DURATION = r"\d+(?:\.\d+)? (?:ms|µs|us|s|m|h|d)(?:, \d+(?:\.\d+)? (?:ms|µs|us|s|m|h|d))*"
_ROW = re.compile(
    rf"^\s*(?P<step>\d{{1,12}}) \((?P<pct>\d+(?:\.\d+)?)%\)\s+(?P<iter>{_DURATION})"
    rf"(?:\s+(?P<eta>{_DURATION}))?(?:\s+(?P<rays>\d+(?:\.\d+)?)(?: (?P<scale>[KMGB]))?)?"
    r"(?:\s+(?P<test>\d+(?:\.\d+)?)(?: (?P<tscale>[KMGB]))?)?(?:\s+\S+\.py:\d+)?\s*$"
)
_SCALE = {None: 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9}


def _seconds(text: str) -> float:
    total = 0.0
    for part in text.split(", "):
        number, unit = part.split(" ")
        total += float(number) * _UNIT_S[unit]
    return round(total, 9)


class NerfstudioParser(Parser):
    name = "nerfstudio"
    title = "nerfstudio step table"
    triggers = ("Step (% Done)", "%)  ")
    example = "3710 (1.24%)        30.652 ms            2 h, 31 m, 21 s      1.05 K"
    priority = 100
    samples = (
        Sample(  # jkulhanek/tetra-nerf issue #12
            "Step (% Done)       Train Iter (time)    ETA (time)           Train Rays / Sec     Test Rays / Sec\n"
            "--------------------------------------------------------------------------------------------------------\n"
            "3710 (1.24%)        30.652 ms            2 h, 31 m, 21 s      1.05 K\n"
            "3720 (1.24%)        31.427 ms            2 h, 35 m, 11 s      1.02 K\n",
            steps=(
                (3710, {"step_time_s": 0.030652, "eta_s": 9081.0, "train_rays_per_s": 1050.0}),
                (3720, {"step_time_s": 0.031427}),
            ),
        ),
        Sample(  # maturk/dn-splatter issue #110: through rich's logging, its caller at the right edge
            "Step (% Done)       Train Iter (time)    ETA (time)           Train Rays / Sec                           latfacto.py:604\n"
            "-----------------------------------------------------------------------------------                      latfacto.py:554\n"
            "4090 (81.78%)       43.140 ms            39 s, 300.687 ms     14.86 M                                    latfacto.py:566\n",
            steps=((4090, {"step_time_s": 0.04314, "eta_s": 39.300687, "train_rays_per_s": 14860000.0}),),
        ),
    )

    def __init__(self) -> None:
        self._seen_header = False

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if _HEADER.match(text):
            self._seen_header = True
            return True
        if not self._seen_header:
            return False
        if _RULE.match(text):
            return True
        m = _ROW.match(text)
        if m is None:
            return False
        metrics: dict[str, float] = {"step_time_s": _seconds(m.group("iter"))}
        if m.group("eta"):
            metrics["eta_s"] = _seconds(m.group("eta"))
        for group, scale, name in (("rays", "scale", "train_rays_per_s"), ("test", "tscale", "test_rays_per_s")):
            value = parse_number(m.group(group) or "")
            if value is not None:
                metrics[name] = round(value * _SCALE[m.group(scale)], 6)
        out.step(int(m.group("step")), metrics)
        return True

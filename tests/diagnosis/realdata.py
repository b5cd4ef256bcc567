"""Stores built directly from real record values, so diagnosis tests do not depend on the parsers.

Every number below is transcribed from a real log; the source is named next to it. Records are
built the way the parser runner builds them (canonical metric names, seconds, ISO local times).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from trainwatch.records import Event, Phases, Record, Step
from trainwatch.store.store import Store

SEED002 = "nohup.out"
SEED004 = "gpt2.log"

# seed 002 (4-rank torchrun + DeepSpeed ZeRO-1, open_clip CoCa): the `Global Steps` lines, as
# (line, time, step, loss, grad_norm, loss_scale, lr, data_time_s, step_time_s, samples_per_s)
SEED002_STEPS = [
    (2025, "2024-02-20T09:55:01", 1, 29.341, 4.9168, 65536.0, 0.0, 18.972, 38.165, 53.6611),
    (2326, "2024-02-20T09:58:06", 101, 29.299, 4.7007, 65536.0, 0.0, 0.001, 1.856, 1057.47),
    (2628, "2024-02-20T10:01:13", 201, 29.231, 4.3722, 65536.0, 0.0, 0.002, 1.869, 981.397),
    (2931, "2024-02-20T10:04:14", 301, 29.014, 5.9928, 65536.0, 0.000001, 0.001, 1.806, 1204.03),
    (3233, "2024-02-20T10:07:12", 401, 28.624, 7.5315, 65536.0, 0.000001, 0.001, 1.780, 1171.44),
    (3534, "2024-02-20T10:10:22", 501, 28.336, 8.5119, 65536.0, 0.000001, 0.013, 1.902, 1214.25),
    (3836, "2024-02-20T10:13:40", 601, 28.062, 9.2736, 32768.0, 0.000001, 0.002, 1.981, 1178.83),
    (4137, "2024-02-20T10:16:48", 701, 27.745, 11.774, 32768.0, 0.000002, 0.012, 1.882, 1191.04),
    (4439, "2024-02-20T10:19:53", 801, 27.534, 11.197, 32768.0, 0.000002, 0.015, 1.850, 1102.82),
    (4741, "2024-02-20T10:22:56", 901, 27.174, 10.655, 32768.0, 0.000002, 0.068, 1.834, 1195.85),
    (5048, "2024-02-20T10:25:59", 1001, 26.946, 10.639, 32768.0, 0.000002, 0.003, 1.827, 1189.62),
    (5350, "2024-02-20T10:29:00", 1101, 26.626, 13.170, 32768.0, 0.000003, 0.001, 1.807, 1129.28),
    (5652, "2024-02-20T10:31:59", 1201, 26.250, 14.140, 32768.0, 0.000003, 0.001, 1.795, 1229.59),
    (5955, "2024-02-20T10:35:02", 1301, 25.842, 12.297, 32768.0, 0.000003, 0.001, 1.830, 1216.95),
    (6261, "2024-02-20T10:38:01", 1401, 25.439, 11.407, 32768.0, 0.000003, 0.001, 1.783, 1205.89),
    (6563, "2024-02-20T10:41:03", 1501, 24.896, 11.593, 32768.0, 0.000004, 0.001, 1.826, 1164.08),
    (6864, "2024-02-20T10:44:03", 1601, 24.314, 11.969, 32768.0, 0.000004, 0.001, 1.800, 966.353),
]
# seed 002: `OVERFLOW! Rank 0 Skipping step. Attempted loss scale: A, reducing to B` (line, time, step, A, B)
SEED002_OVERFLOWS = [
    (3553, "2024-02-20T10:10:34.404", 501, 65536.0, 65536.0),
    (3709, "2024-02-20T10:12:20.361", 501, 65536.0, 32768.0),
    (6777, "2024-02-20T10:43:14.704", 1501, 65536.0, 65536.0),
    (6792, "2024-02-20T10:43:23.252", 1501, 65536.0, 32768.0),
]
# seed 002: DeepSpeed wall_clock_breakdown lines near the end, ms (forward, backward, backward_allreduce, step)
SEED002_PHASES_MS = [
    (362.57, 1050.81, 20.90, 251.02),
    (362.61, 1044.92, 18.43, 168.36),
    (367.05, 1040.97, 14.15, 176.97),
    (379.12, 1173.08, 7.95, 113.03),
    (361.91, 1039.07, 8.48, 179.50),
    (362.24, 1046.30, 7.93, 102.49),
]
# seed 002, last lines 7054-7080
# (severities as the events parser gives them: the agent's death-signal line is an error, its SIGHUPs to the workers warnings)
SEED002_TAIL = [
    (7054, "signal", "error", "Received 1 death signal, shutting down workers", {"signal": "SIGHUP"}),
    (7055, "signal", "warning", "Sending process 3664692 closing signal SIGHUP", {"signal": "SIGHUP"}),
    (7056, "signal", "warning", "Sending process 3664693 closing signal SIGHUP", {"signal": "SIGHUP"}),
    (7057, "signal", "warning", "Sending process 3664694 closing signal SIGHUP", {"signal": "SIGHUP"}),
    (7058, "signal", "warning", "Sending process 3664695 closing signal SIGHUP", {"signal": "SIGHUP"}),
    (
        7059,
        "traceback",
        "error",
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 3664596 got signal: 1",
        {"exception": "SignalException"},
    ),
]


def seed002_records(with_tail: bool = True) -> list[Record]:
    out: list[Record] = []
    overflows = list(SEED002_OVERFLOWS)
    for line, t, step, loss, gn, scale, lr, data, batch, sps in SEED002_STEPS:
        while overflows and overflows[0][0] < line:
            o_line, o_time, o_step, a, b = overflows.pop(0)
            out.append(
                Event(
                    SEED002,
                    0,
                    o_step,
                    o_time,
                    o_line,
                    "overflow",
                    "warning",
                    f"OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {a}, reducing to {b}",
                    {"attempted_scale": a, "new_scale": b},
                )
            )
        metrics = {
            "loss": loss,
            "grad_norm": gn,
            "loss_scale": scale,
            "lr": lr,
            "data_time_s": data,
            "step_time_s": batch,
            "samples_per_s": sps,
        }
        if step == 1:
            metrics["total_steps"] = 1191600.0  # `total_steps: 1191600` (line 2020)
        out.append(Step(SEED002, 0, step, t, line, metrics))
    for i, (f, b, ar, st) in enumerate(SEED002_PHASES_MS):
        out.append(
            Phases(
                SEED002,
                0,
                1601,
                None,
                7000 + i,
                {"forward": f / 1000, "backward": b / 1000, "backward_allreduce": ar / 1000, "step": st / 1000},
            )
        )
    if with_tail:
        for line, kind, sev, msg, data in SEED002_TAIL:
            out.append(Event(SEED002, None, 1601, None, line, kind, sev, msg, data))  # type: ignore[arg-type]
    return out


# seed 004 (DeepSpeed + Megatron GPT-2): the `iteration N/ 1000000 | elapsed time per iteration (ms) ...`
# lines; DeepSpeed's `[Rank 0] step=N` line (with a timestamp) precedes every 100th iteration.
SEED004_TIMES = {
    22800: "2020-12-12T05:55:33.385",
    22900: "2020-12-12T05:57:03.953",
    23000: "2020-12-12T05:58:34.376",
}
_ITER = re.compile(
    r"iteration\s+(\d+)/\s*(\d+) \| elapsed time per iteration \(ms\): ([\d.]+) \| learning rate ([\dE.+-]+) \| "
    r"lm loss ([\dE.+-]+) \| loss scale ([\d.]+)"
)
# seed 004 lines 32803-33087: every iteration line from 22800 to 23000, verbatim, as (line number, text)
SEED004_ITERATIONS = [
    (
        32803,
        " iteration    22800/ 1000000 | elapsed time per iteration (ms): 904.2 | learning rate 1.499E-04 | lm loss 2.190858E+00 | loss scale 4096.0 |",
    ),
    (
        32810,
        " iteration    22805/ 1000000 | elapsed time per iteration (ms): 920.3 | learning rate 1.499E-04 | lm loss 2.122734E+00 | loss scale 4096.0 |",
    ),
    (
        32817,
        " iteration    22810/ 1000000 | elapsed time per iteration (ms): 900.9 | learning rate 1.499E-04 | lm loss 2.195639E+00 | loss scale 4096.0 |",
    ),
    (
        32824,
        " iteration    22815/ 1000000 | elapsed time per iteration (ms): 901.0 | learning rate 1.499E-04 | lm loss 2.133983E+00 | loss scale 4096.0 |",
    ),
    (
        32831,
        " iteration    22820/ 1000000 | elapsed time per iteration (ms): 901.1 | learning rate 1.499E-04 | lm loss 2.148095E+00 | loss scale 4096.0 |",
    ),
    (
        32838,
        " iteration    22825/ 1000000 | elapsed time per iteration (ms): 911.1 | learning rate 1.499E-04 | lm loss 2.103675E+00 | loss scale 4096.0 |",
    ),
    (
        32845,
        " iteration    22830/ 1000000 | elapsed time per iteration (ms): 898.3 | learning rate 1.499E-04 | lm loss 2.165011E+00 | loss scale 4096.0 |",
    ),
    (
        32852,
        " iteration    22835/ 1000000 | elapsed time per iteration (ms): 904.4 | learning rate 1.499E-04 | lm loss 2.153223E+00 | loss scale 4096.0 |",
    ),
    (
        32859,
        " iteration    22840/ 1000000 | elapsed time per iteration (ms): 912.9 | learning rate 1.499E-04 | lm loss 2.183348E+00 | loss scale 4096.0 |",
    ),
    (
        32866,
        " iteration    22845/ 1000000 | elapsed time per iteration (ms): 907.0 | learning rate 1.499E-04 | lm loss 2.095435E+00 | loss scale 4096.0 |",
    ),
    (
        32873,
        " iteration    22850/ 1000000 | elapsed time per iteration (ms): 905.6 | learning rate 1.499E-04 | lm loss 2.149998E+00 | loss scale 4096.0 |",
    ),
    (
        32880,
        " iteration    22855/ 1000000 | elapsed time per iteration (ms): 907.3 | learning rate 1.499E-04 | lm loss 2.173990E+00 | loss scale 4096.0 |",
    ),
    (
        32887,
        " iteration    22860/ 1000000 | elapsed time per iteration (ms): 909.3 | learning rate 1.499E-04 | lm loss 2.207277E+00 | loss scale 4096.0 |",
    ),
    (
        32894,
        " iteration    22865/ 1000000 | elapsed time per iteration (ms): 905.1 | learning rate 1.499E-04 | lm loss 2.157955E+00 | loss scale 4096.0 |",
    ),
    (
        32901,
        " iteration    22870/ 1000000 | elapsed time per iteration (ms): 907.8 | learning rate 1.499E-04 | lm loss 2.075252E+00 | loss scale 4096.0 |",
    ),
    (
        32908,
        " iteration    22875/ 1000000 | elapsed time per iteration (ms): 905.5 | learning rate 1.499E-04 | lm loss 2.177911E+00 | loss scale 4096.0 |",
    ),
    (
        32915,
        " iteration    22880/ 1000000 | elapsed time per iteration (ms): 905.3 | learning rate 1.499E-04 | lm loss 2.186544E+00 | loss scale 4096.0 |",
    ),
    (
        32922,
        " iteration    22885/ 1000000 | elapsed time per iteration (ms): 906.5 | learning rate 1.499E-04 | lm loss 2.185715E+00 | loss scale 4096.0 |",
    ),
    (
        32929,
        " iteration    22890/ 1000000 | elapsed time per iteration (ms): 900.2 | learning rate 1.499E-04 | lm loss 2.190137E+00 | loss scale 4096.0 |",
    ),
    (
        32936,
        " iteration    22895/ 1000000 | elapsed time per iteration (ms): 903.5 | learning rate 1.499E-04 | lm loss 2.256623E+00 | loss scale 4096.0 |",
    ),
    (
        32945,
        " iteration    22900/ 1000000 | elapsed time per iteration (ms): 900.5 | learning rate 1.499E-04 | lm loss 2.207223E+00 | loss scale 4096.0 |",
    ),
    (
        32952,
        " iteration    22905/ 1000000 | elapsed time per iteration (ms): 905.2 | learning rate 1.499E-04 | lm loss 2.191513E+00 | loss scale 4096.0 |",
    ),
    (
        32959,
        " iteration    22910/ 1000000 | elapsed time per iteration (ms): 904.8 | learning rate 1.499E-04 | lm loss 2.196494E+00 | loss scale 4096.0 |",
    ),
    (
        32966,
        " iteration    22915/ 1000000 | elapsed time per iteration (ms): 896.9 | learning rate 1.499E-04 | lm loss 2.135450E+00 | loss scale 4096.0 |",
    ),
    (
        32973,
        " iteration    22920/ 1000000 | elapsed time per iteration (ms): 897.4 | learning rate 1.499E-04 | lm loss 2.210922E+00 | loss scale 4096.0 |",
    ),
    (
        32980,
        " iteration    22925/ 1000000 | elapsed time per iteration (ms): 907.0 | learning rate 1.499E-04 | lm loss 2.179235E+00 | loss scale 4096.0 |",
    ),
    (
        32987,
        " iteration    22930/ 1000000 | elapsed time per iteration (ms): 898.7 | learning rate 1.499E-04 | lm loss 2.232044E+00 | loss scale 4096.0 |",
    ),
    (
        32994,
        " iteration    22935/ 1000000 | elapsed time per iteration (ms): 901.3 | learning rate 1.499E-04 | lm loss 2.136318E+00 | loss scale 4096.0 |",
    ),
    (
        33001,
        " iteration    22940/ 1000000 | elapsed time per iteration (ms): 908.6 | learning rate 1.499E-04 | lm loss 2.191026E+00 | loss scale 4096.0 |",
    ),
    (
        33008,
        " iteration    22945/ 1000000 | elapsed time per iteration (ms): 900.3 | learning rate 1.499E-04 | lm loss 2.217595E+00 | loss scale 4096.0 |",
    ),
    (
        33015,
        " iteration    22950/ 1000000 | elapsed time per iteration (ms): 908.8 | learning rate 1.499E-04 | lm loss 2.160289E+00 | loss scale 4096.0 |",
    ),
    (
        33022,
        " iteration    22955/ 1000000 | elapsed time per iteration (ms): 906.3 | learning rate 1.499E-04 | lm loss 2.216081E+00 | loss scale 4096.0 |",
    ),
    (
        33029,
        " iteration    22960/ 1000000 | elapsed time per iteration (ms): 908.6 | learning rate 1.499E-04 | lm loss 2.198861E+00 | loss scale 4096.0 |",
    ),
    (
        33036,
        " iteration    22965/ 1000000 | elapsed time per iteration (ms): 901.7 | learning rate 1.499E-04 | lm loss 2.149551E+00 | loss scale 4096.0 |",
    ),
    (
        33043,
        " iteration    22970/ 1000000 | elapsed time per iteration (ms): 904.8 | learning rate 1.499E-04 | lm loss 2.159220E+00 | loss scale 4096.0 |",
    ),
    (
        33050,
        " iteration    22975/ 1000000 | elapsed time per iteration (ms): 907.1 | learning rate 1.499E-04 | lm loss 2.149531E+00 | loss scale 4096.0 |",
    ),
    (
        33057,
        " iteration    22980/ 1000000 | elapsed time per iteration (ms): 900.6 | learning rate 1.499E-04 | lm loss 2.166841E+00 | loss scale 4096.0 |",
    ),
    (
        33064,
        " iteration    22985/ 1000000 | elapsed time per iteration (ms): 904.9 | learning rate 1.499E-04 | lm loss 2.149121E+00 | loss scale 4096.0 |",
    ),
    (
        33071,
        " iteration    22990/ 1000000 | elapsed time per iteration (ms): 903.7 | learning rate 1.499E-04 | lm loss 2.167126E+00 | loss scale 4096.0 |",
    ),
    (
        33078,
        " iteration    22995/ 1000000 | elapsed time per iteration (ms): 905.0 | learning rate 1.499E-04 | lm loss 2.178469E+00 | loss scale 4096.0 |",
    ),
    (
        33087,
        " iteration    23000/ 1000000 | elapsed time per iteration (ms): 913.0 | learning rate 1.499E-04 | lm loss 2.133970E+00 | loss scale 4096.0 |",
    ),
]


def seed004_records(with_times: bool = True, source: str = SEED004) -> list[Record]:
    out: list[Record] = []
    for line_no, text in SEED004_ITERATIONS:
        m = _ITER.search(text)
        assert m is not None
        step = int(m.group(1))
        metrics = {
            "step_time_s": float(m.group(3)) / 1000,
            "lr": float(m.group(4)),
            "loss": float(m.group(5)),
            "loss_scale": float(m.group(6)),
            "total_steps": float(m.group(2)),
        }
        t = SEED004_TIMES.get(step) if with_times else None
        out.append(Step(source, 0, step, t, line_no, metrics))
    return out


def epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def store_of(records: Iterable[Record], *, mtime: float | None = None, lines: int = 0) -> Store:
    store = Store()
    records = list(records)
    store.add_many(records)
    for name in {r.source for r in records}:
        st = store.source(name)
        st.mtime = mtime
        st.lines = lines
        st.ended = True
    return store

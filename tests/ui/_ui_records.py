"""Real records transcribed from seed 004 (DeepSpeed ZeRO-Offload + Megatron GPT-2, 4 GPUs,
/work/shared/seeds/004_ebeb0ca8d46e579b.txt) and seed 002 (torchrun + DeepSpeed CoCa,
/work/shared/seeds/002_34462940a265b8f9.txt), built straight into a Store so the dashboard
snapshots do not move when a parser changes. Each tuple is copied from the line cited."""

from __future__ import annotations

from trainwatch.records import Event, Phases, Step
from trainwatch.store.store import SourceState, Store

SOURCE = "logs/gpt2_megatron.log"

# seed 004 lines 345.. (` iteration N/ 1000000 | elapsed time per iteration (ms): T | learning rate LR |
# lm loss L | loss scale 4096.0 |` and the following `time (ms) | forward: ... ` line)
# (iteration, elapsed ms, lr, lm loss, forward, backward, allreduce, optimizer, batch generator, data loader)
ITERATIONS = (
    (5, 1196.2, 7.500e-08, 1.098990e01, 567.42, 516.25, 0.00, 112.33, 224.32, 222.92),
    (10, 930.5, 1.500e-07, 1.098910e01, 312.64, 516.45, 0.00, 101.03, 1.34, 0.17),
    (15, 928.2, 2.250e-07, 1.098057e01, 317.30, 521.93, 0.00, 88.76, 1.56, 0.22),
    (20, 941.1, 3.000e-07, 1.095696e01, 319.46, 534.36, 0.00, 87.05, 1.46, 0.24),
    (22975, 907.1, 1.499e-04, 2.149531e00, 318.57, 504.32, 0.00, 84.01, 1.17, 0.15),
    (22980, 900.6, 1.499e-04, 2.166841e00, 317.18, 497.32, 0.00, 85.82, 1.28, 0.18),
    (22985, 904.9, 1.499e-04, 2.149121e00, 317.43, 503.22, 0.00, 84.03, 1.17, 0.14),
    (22990, 903.7, 1.499e-04, 2.167126e00, 316.74, 501.44, 0.00, 85.31, 1.12, 0.13),
    (22995, 905.0, 1.499e-04, 2.178469e00, 318.68, 501.83, 0.00, 84.29, 1.14, 0.14),
    (23000, 913.0, 1.499e-04, 2.133970e00, 317.51, 509.83, 0.00, 85.42, 1.15, 0.14),
)
# seed 004, last lines: `[2020-12-12 05:58:34,376] ... [Rank 0] step=23000, ...` and
# `[2020-12-12 05:58:34,376] [INFO] [timer.py:166:stop] 0/23000, SamplesPerSec=424.55898924486206`
LAST_TIME = "2020-12-12T05:58:34.376"
SAMPLES_PER_S = 424.55898924486206

# seed 002 line 3709 and 7054 (events, as the contract writes them)
OVERFLOW = (
    "[2024-02-20 10:12:20,361] [INFO] [stage_1_and_2.py:1784:step] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
    "Attempted loss scale: 65536, reducing to 32768.0"
)
SIGNAL = "WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers"

RAW_LINES = (
    (
        353,
        " iteration       10/ 1000000 | elapsed time per iteration (ms): 930.5 | learning rate 1.500E-07 | lm loss 1.098910E+01 | loss scale 4096.0 |",
    ),
    (
        354,
        "time (ms) | forward: 312.64 | backward: 516.45 | allreduce: 0.00 | optimizer: 101.03 | batch generator: 1.34 | data loader: 0.17",
    ),
)


def build_store(ranks: int = 1, events: bool = True) -> Store:
    """The seed-004 numbers for `ranks` ranks (ranks > 0 repeat rank 0's real values); with
    `events`, seed 002's overflow and death-signal events too (the run then reads as crashed)."""
    store = Store()
    records = []
    line = 345
    for rank in range(ranks):
        for it, ms, lr, loss, fwd, bwd, ar, opt, bg, dl in ITERATIONS:
            t = LAST_TIME if it == 23000 else None
            metrics = {"loss": loss, "lr": lr, "step_time_s": ms / 1000, "loss_scale": 4096.0, "total_steps": 1_000_000}
            if it == 23000:
                metrics["running_avg_samples_per_s"] = SAMPLES_PER_S  # DeepSpeed's SamplesPerSec
            records.append(Step(SOURCE, rank, it, t, line, metrics))
            records.append(
                Phases(
                    SOURCE,
                    rank,
                    it,
                    None,
                    line + 1,
                    {
                        "forward": fwd / 1000,
                        "backward": bwd / 1000,
                        "allreduce": ar / 1000,
                        "optimizer": opt / 1000,
                        "batch_generator": bg / 1000,
                        "data_loader": dl / 1000,
                    },
                )
            )
            line += 7
    if events:
        records += _events()
    store.add_many(records)
    with store.lock:
        state = store.sources.setdefault(SOURCE, SourceState(SOURCE))
        state.formats = ["deepspeed", "megatron"]
        state.recent.extend(RAW_LINES)
    return store


def _events() -> list[Event]:
    records = []
    records.append(
        Event(
            SOURCE,
            0,
            22990,
            "2020-12-12T05:58:00",
            3709,
            "overflow",
            "warning",
            OVERFLOW[OVERFLOW.index("OVERFLOW") :],
            {"attempted_scale": 65536, "new_scale": 32768},
        )
    )
    records.append(Event(SOURCE, None, 23000, None, 7054, "signal", "error", SIGNAL, {"signal": "SIGHUP"}))
    return records

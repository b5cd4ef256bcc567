"""DeepSpeed engine lines, golden. Every line is real; its source is named beside it.

Sources:
  seed002  ../shared/seeds/002_* (DeepSpeed 0.8.2, ZeRO-1, EVA-CLIP CoCa, 4 ranks)
  seed004  ../shared/seeds/004_* (DeepSpeed 0.3.8 + Megatron GPT-2)
  ds1436   github.com/deepspeedai/DeepSpeed/issues/1436 (0.5.x, `[Rank 0] rank=0 time (ms)`)
  ds255    github.com/deepspeedai/DeepSpeed/issues/255 (2020, bare `time (ms)`, `0/450, SamplesPerSec=`)
  ds3742   github.com/deepspeedai/DeepSpeed/issues/3742 (Megatron-DeepSpeed, timer.py new form, mom list of lists)
  ds5779   github.com/deepspeedai/DeepSpeed/issues/5779 (OVERFLOW with hysteresis)
  ed7      github.com/dredwardhyde/gpt-neo-fine-tuning-example/issues/7 ([deepscale] OVERFLOW glued to a tqdm bar)
  bobo1    github.com/bobo0810/LearnDeepSpeed/issues/1 (terminal-wrapped OVERFLOW line)
  hf27820  github.com/huggingface/transformers/pull/27820 (DeepSpeed checkpoint save)
  alcf     github.com/samanta-amit/Megatron-DeepSpeed ALCF/README.md (DeepSpeed 0.12/0.14 `fwd_microstep` names)
  comms    ../shared/real_logs/deepspeed__saforem2_vault__* (comms logger)
"""

from __future__ import annotations

from collections.abc import Iterable

from conftest import SAMPLES

from trainwatch.lines.assembler import Line
from trainwatch.parsers.formats.deepspeed import DeepSpeedParser
from trainwatch.parsers.formats.megatron import MegatronParser
from trainwatch.parsers.runner import SourceParser
from trainwatch.pipeline import Pipeline
from trainwatch.records import Event, Phases, Record, Step


def run(lines: Iterable[str], *, with_megatron: bool = False) -> list[Record]:
    records: list[Record] = []
    parsers = [DeepSpeedParser(), MegatronParser()] if with_megatron else [DeepSpeedParser()]
    runner = SourceParser("t.log", parsers, records.append)
    runner.feed_lines(Line(no, text) for no, text in enumerate(lines, 1))
    runner.finish()
    return records


def phases(records: list[Record]) -> list[Phases]:
    return [r for r in records if isinstance(r, Phases)]


def steps(records: list[Record]) -> list[Step]:
    return [r for r in records if isinstance(r, Step)]


def events(records: list[Record]) -> list[Event]:
    return [r for r in records if isinstance(r, Event)]


# seed004 line 220 (step=0 at engine init, lr list + mom tuples); seed002 lines 2022-2024 and others.
SEED004_STEP0 = (
    "[2020-12-11 23:59:47,853] [INFO] [logging.py:60:log_dist] [Rank 0] step=0, skipped=0, lr=[0.0, 0.0], "
    "mom=[(0.9, 0.999), (0.9, 0.999)]"
)
SEED002_OPT = (
    "[2024-02-20 09:55:01,105] [INFO] [logging.py:77:log_dist] [Rank 0] rank=0 time (ms) | "
    "optimizer_allgather: 1138.24 | optimizer_gradients: 14.24 | optimizer_step: 14.29"
)
SEED002_MICRO = (
    "[2024-02-20 09:55:01,108] [INFO] [logging.py:77:log_dist] [Rank 0] rank=0 time (ms) | "
    "forward_microstep: 6475.24 | backward_microstep: 3422.95 | backward_inner_microstep: 3105.30 | "
    "backward_allreduce_microstep: 317.44 | step_microstep: 8489.25"
)
SEED002_GLOBAL = (
    "[2024-02-20 09:55:01,108] [INFO] [logging.py:77:log_dist] [Rank 0] rank=0 time (ms) | "
    "forward: 6475.32 | backward: 3422.89 | backward_inner: 3105.27 | backward_allreduce: 317.44 | step: 8489.29"
)
SEED002_TIMER = (
    "[2024-02-20 10:25:57,892] [INFO] [timer.py:198:stop] epoch=0/micro_step=1000/global_step=1000, "
    "RunningAvgSamplesPerSec=1126.8026294283802, CurrSamplesPerSec=1211.289158780771, MemAllocated=5.29GB, "
    "MaxMemAllocated=28.74GB"
)
SEED002_OVERFLOW = (
    "[2024-02-20 10:12:20,361] [INFO] [stage_1_and_2.py:1784:step] [deepspeed] OVERFLOW! Rank 0 Skipping step. "
    "Attempted loss scale: 65536, reducing to 32768.0"
)
SEED002_MEMORY = (
    "[2024-02-20 09:50:10,832] [INFO] [utils.py:830:see_memory_usage] MA 1.2 GB         Max_MA 1.44 GB         "
    "CA 1.55 GB         Max_CA 2 GB "
)
SEED004_OPT = "rank=0 time (ms) | optimizer_gradients: 18.83 | optimizer_step: 132.81 | optimizer_allgather: 21.99"
ALCF_OPT = (
    "[2024-04-04 09:09:53,311] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | optimizer_allgather: 884.11 | "
    "optimizer_gradients: 6.43 | optimizer_step: 23.44"
)
ALCF_STEP1 = (
    "[2024-04-04 09:09:53,312] [INFO] [logging.py:96:log_dist] [Rank 0] step=1, skipped=0, "
    "lr=[0.00029999999999267505, 0.00029999999999267505], mom=[(0.9, 0.999), (0.9, 0.999)]"
)
ALCF_MICRO = (
    "[2024-04-04 09:09:53,313] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd_microstep: 6567.68 | "
    "bwd_microstep: 17950.36 | bwd_inner_microstep: 17711.20 | bwd_allreduce_microstep: 239.11 | step_microstep: 1139.27"
)
ALCF_GLOBAL = (
    "[2024-04-04 09:09:53,313] [INFO] [logging.py:96:log_dist] [Rank 0] time (ms) | fwd: 6567.66 | bwd: 17950.35 | "
    "bwd_inner: 17711.19 | bwd_allreduce: 239.11 | step: 1139.29"
)


def test_wall_clock_breakdown_old_names_seconds_and_rank() -> None:
    got = phases(run([SEED004_STEP0, SEED002_OPT, SEED002_MICRO, SEED002_GLOBAL]))
    assert [p.step for p in got] == [1, 1, 1]
    assert all(p.rank == 0 for p in got)
    assert got[0].phases_s == {
        "optimizer_allgather": 1.13824,
        "optimizer_gradients": 0.01424,
        "optimizer_step": 0.01429,
    }
    assert got[1].phases_s["forward_microstep"] == 6.47524
    assert got[1].phases_s["step_microstep"] == 8.48925
    assert got[2].phases_s == {
        "forward": 6.47532,
        "backward": 3.42289,
        "backward_inner": 3.10527,
        "backward_allreduce": 0.31744,
        "step": 8.48929,
    }
    assert got[2].time == "2024-02-20T09:55:01.108"


def test_newer_fwd_bwd_names_are_expanded_and_step_follows_step_line() -> None:
    recs = run([ALCF_OPT, ALCF_STEP1, ALCF_MICRO, ALCF_GLOBAL])
    got = phases(recs)
    # The optimizer timers come before the first step=N: their step is not known.
    assert [p.step for p in got] == [None, 1, 1]
    assert got[1].phases_s == {
        "forward_microstep": 6.56768,
        "backward_microstep": 17.95036,
        "backward_inner_microstep": 17.7112,
        "backward_allreduce_microstep": 0.23911,
        "step_microstep": 1.13927,
    }
    assert got[2].phases_s == {
        "forward": 6.56766,
        "backward": 17.95035,
        "backward_inner": 17.71119,
        "backward_allreduce": 0.23911,
        "step": 1.13929,
    }
    (s,) = steps(recs)
    assert (s.step, s.rank, s.metrics) == (1, 0, {"lr": 0.00029999999999267505, "skipped": 0})


def test_0_5_lines_in_a_tqdm_stream() -> None:
    # ds1436: the bar frame is glued before the log line.
    line = (
        " 51%|█████▊     | 507/1000 [15:32<16:42,  2.03s/it][2021-10-08 20:18:48,232] [INFO] "
        "[logging.py:68:log_dist] [Rank 0] rank=0 time (ms) | optimizer_allgather: 3.30 | optimizer_gradients: 76.24 | "
        "optimizer_step: 574.38"
    )
    (p,) = phases(run([line]))
    assert p.phases_s == {"optimizer_allgather": 0.0033, "optimizer_gradients": 0.07624, "optimizer_step": 0.57438}
    assert p.rank == 0


def test_bare_2020_microstep_line_is_deepspeed_but_megatron_timers_are_not() -> None:
    ds255 = (
        "time (ms) | forward_microstep: 193.65 | backward_microstep: 329.25 | backward_inner_microstep: 329.14 | "
        "backward_allreduce_microstep: 0.05 | step_microstep: 0.92"
    )
    (p,) = phases(run([ds255]))
    assert p.phases_s["backward_microstep"] == 0.32925
    ds3742_megatron = (
        "time (ms) | forward: 659.86 | backward: 2164.69 | backward-backward: 2164.66 | backward-allreduce: 0.00 | "
        "optimizer: 1172.51 | batch generator: 0.83"
    )
    seed004_megatron = (
        "time (ms) | forward: 567.42 | backward: 516.25 | allreduce: 0.00 | optimizer: 112.33 | "
        "batch generator: 224.32 | data loader: 222.92"
    )
    assert run([ds3742_megatron, seed004_megatron]) == []


def test_step_counting_resyncs_on_step_lines() -> None:
    # seed004: ZeRO-2 + Megatron prints only optimizer timers, one per step.
    lines = [SEED004_STEP0, SEED004_OPT, SEED004_OPT, SEED004_OPT]
    assert [p.step for p in phases(run(lines))] == [1, 2, 3]
    # A later step=N wins over the count (e.g. lines lost in between).
    lines = [SEED004_STEP0, SEED004_OPT, *_seed004_step100(), SEED004_OPT]
    assert [p.step for p in phases(run(lines))] == [1, 101]


def _seed004_step100() -> list[str]:
    return [
        "[2020-12-12 00:01:20,672] [INFO] [logging.py:60:log_dist] [Rank 0] step=100, skipped=0, "
        "lr=[1.5e-06, 1.5e-06], mom=[(0.9, 0.999), (0.9, 0.999)]",
        "[2020-12-12 00:01:20,672] [INFO] [timer.py:166:stop] 0/100, SamplesPerSec=421.75204796909713",
    ]


def test_step_line_and_old_timer_merge_into_one_record() -> None:
    (s,) = steps(run(_seed004_step100()))
    assert s.step == 100
    assert s.rank == 0
    assert s.time == "2020-12-12T00:01:20.672"
    # The old timer.py prints DeepSpeed's running average, not the current rate.
    assert s.metrics == {"lr": 1.5e-06, "skipped": 0, "running_avg_samples_per_s": 421.75204796909713, "epoch": 0}


def test_2020_timer_line_without_log_header() -> None:
    (s,) = steps(run([">[INFO 2020-06-08 06:02:19] 0/450, SamplesPerSec=7.458824487454903"]))  # ds255
    assert (s.step, s.metrics["running_avg_samples_per_s"]) == (450, 7.458824487454903)


def test_new_timer_line_and_list_of_lists_mom() -> None:
    lines = [  # ds3742
        "[2023-07-25 21:03:21,037] [INFO] [logging.py:96:log_dist] [Rank 0] step=35, skipped=0, "
        "lr=[2.1731931451279077e-06, 2.1731931451279077e-06], mom=[[0.9, 0.95], [0.9, 0.95]]",
        SEED002_TIMER,
    ]
    (s,) = steps(run(lines))
    # The timer's own counter restarts each launch; the engine's step=35 is the step.
    assert s.step == 35
    assert s.metrics["lr"] == 2.1731931451279077e-06
    assert s.metrics["samples_per_s"] == 1211.289158780771
    assert s.metrics["running_avg_samples_per_s"] == 1126.8026294283802
    # DeepSpeed divides by 1024**3 and prints "GB": the number is GiB already.
    assert (s.metrics["mem_gib"], s.metrics["max_mem_gib"]) == (5.29, 28.74)
    # Alone, the timer line gives its own global_step.
    (alone,) = steps(run([SEED002_TIMER]))
    assert alone.step == 1000


def test_overflow_forms() -> None:
    hysteresis = (  # ds5779
        "[2024-07-17 19:44:06,829] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
        "step. Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1"
    )
    deepscale = (  # ed7
        "  0%|                                      | 9/63645 [00:19<37:53:00,  2.14s/it][2021-06-08 12:02:45,001] "
        "[INFO] [stage3.py:2323:_overflow_clean_up] [deepscale] OVERFLOW! Rank 0 Skipping step. Attempted loss "
        "scale: 16777216.0, reducing to 8388608.0"
    )
    got = events(run([SEED002_OVERFLOW, hysteresis, deepscale]))
    assert [(e.kind, e.severity, e.rank) for e in got] == [("overflow", "warning", 0)] * 3
    assert got[0].data == {"attempted_scale": 65536, "new_scale": 32768}
    assert got[0].message == "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768.0"
    assert got[1].data == {"attempted_scale": 65536, "hysteresis": 2, "new_hysteresis": 1}
    assert got[2].data == {"attempted_scale": 16777216, "new_scale": 8388608}


def test_overflow_takes_the_place_of_a_step_in_the_count() -> None:
    # seed002 lines 3550-3558: optimizer timers are missing on the overflow step.
    lines = [SEED004_STEP0, SEED002_OPT, SEED002_MICRO, SEED002_GLOBAL, SEED002_OVERFLOW, SEED002_MICRO, SEED002_GLOBAL]
    recs = run(lines)
    assert [p.step for p in phases(recs)] == [1, 1, 1, 2, 2]
    assert [e.step for e in events(recs)] == [2]
    # Without global lines (ZeRO-2 + Megatron) the overflow also uses up its step.
    recs = run([SEED004_STEP0, SEED004_OPT, SEED002_OVERFLOW, SEED004_OPT])
    assert [p.step for p in phases(recs)] == [1, 3]
    assert [e.step for e in events(recs)] == [2]


def test_see_memory_usage_needs_a_known_step() -> None:
    assert steps(run([SEED002_MEMORY])) == []  # init time (seed002 line 1843): no step, no record
    recs = run([*_seed004_step100(), SEED002_OPT, SEED002_MEMORY])
    mem = [s for s in steps(recs) if "mem_gib" in s.metrics]
    assert [(s.step, dict(s.metrics)) for s in mem] == [
        (100, {"mem_gib": 1.2, "max_mem_gib": 1.44, "reserved_mem_gib": 1.55, "max_reserved_mem_gib": 2.0})
    ]


def test_checkpoint_save_event_with_path_and_tag_step() -> None:
    line = (  # hf27820
        "[2023-12-12 06:20:12,266] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model checkpoint: "
        "/scratch/sanitycheck-20231211/tmp-checkpoint-10/global_step10/zero_pp_rank_0_mp_rank_00_model_states.pt"
    )
    (e,) = events(run([line]))
    assert (e.kind, e.severity, e.rank, e.step) == ("checkpoint", "info", 0, 10)
    assert e.data == {
        "path": "/scratch/sanitycheck-20231211/tmp-checkpoint-10/global_step10/zero_pp_rank_0_mp_rank_00_model_states.pt"
    }


def test_checkpoint_load_forgets_the_step_count() -> None:
    load = (  # github.com/TsinghuaAI/CPM-1-Finetune/issues/6
        "[2021-01-06 12:08:42,985] [INFO] [engine.py:1348:_load_checkpoint] rank: 3 loading checkpoint: "
        "/UserData/model/cpm-model-v2/80000/mp_rank_01_model_states.pt"
    )
    recs = run([SEED004_STEP0, SEED004_OPT, load, SEED004_OPT])
    assert [p.step for p in phases(recs)] == [1, None]


def test_half_matching_lines_yield_nothing() -> None:
    lines = [
        # comms: `time (ms): 4138.40` is one collective call, not a step phase
        "[2023-01-11 13:27:07,209] [INFO] [logging.py:68:log_dist] [Rank 0] rank=0 | comm op: broadcast | "
        "[Caller Func: _broadcast_model] | time (ms): 4138.40 | msg size: 1.12 KB | algbw (Gbps): 0.00  | busbw (Gbps): 0.00",
        # bobo1: a terminal wrap inside "scale"
        "[2024-11-04 11:41:27,623] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
        "step. Attempted loss scal                                 e: 8192, reducing to 4096",
        # another framework's step= (real_logs mlprof)
        "[2023-01-11 13:28:13,846][mlprof.trainers.pytorch.trainer][INFO] - [0] [1/10: 0/1875 (0%)] epoch=1.0000 "
        "step=1.0000 dt=0.3665 batch_acc=0.1094 batch_loss=0.0090 acc=0.0149 running_loss=0.0012",
        # a timer line cut in the middle of a field (seed002 line 2022, truncated)
        "[2024-02-20 09:55:01,105] [INFO] [logging.py:77:log_dist] [Rank 0] rank=0 time (ms) | optimizer_allgather: 1138.24 | optimizer_gradi",
        "[2024-02-20 09:50:10,670] [INFO] [utils.py:838:see_memory_usage] CPU Virtual Memory:  used = 543.42 GB, percent = 57.5%",
    ]
    assert run(lines) == []


def test_sample_log_through_the_pipeline() -> None:
    records: list[Record] = []
    Pipeline([str(SAMPLES / "deepspeed__coca_4rank_zero1_sighup.log")], sink=records.extend).read_to_end()
    recs = [r for r in records if not isinstance(r, Event) or r.kind == "overflow"]
    forward = [p for p in phases(recs) if "forward" in p.phases_s]
    # The sample keeps the first 102 steps whole: counted from the engine's step=0.
    assert [p.step for p in forward[:102]] == list(range(1, 103))
    # After the cut, step=1000 re-syncs: its breakdown lines are step 1000's.
    after = [p for p in forward if p.line > 671]
    assert after[0].step == 1000
    assert len([e for e in recs if isinstance(e, Event)]) == 2
    assert all(p.rank == 0 for p in phases(recs))

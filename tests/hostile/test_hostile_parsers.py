"""No line can make a parser raise, and every number a parser reports is a number.

Everything goes through the real entry point: `SourceParser` over `registry.new_parsers()`,
so the runner's own per-line work (prefix stripping, rank, time, merging) is exercised too.
Lines are real ones from /work/shared/seeds, /work/shared/real_logs and sample_logs/
(`_hostile_corpus.corpus()`), mutated the way torn writes, terminal damage and attackers do.
"""

from __future__ import annotations

import math

import pytest
from _hostile_corpus import contract_problems, corpus, mutate, run_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainwatch.records import Event, Phases, Profile, Step

_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _ok(texts: list[str], frames: list[bool] | None = None) -> list:
    records, stats = run_lines(texts, frames=frames or [])
    assert stats.parser_errors == 0, texts
    assert contract_problems(records) == []
    return records


@given(st.lists(st.text(max_size=200), min_size=1, max_size=8), st.lists(st.booleans(), max_size=8))
@_SETTINGS
def test_random_text_never_breaks_a_parser(texts: list[str], frames: list[bool]) -> None:
    _ok(texts, frames)


_MUTATION = st.tuples(st.integers(0, 30), st.integers(0, 10_000), st.integers(0, 10_000))


@st.composite
def _damaged_run(draw: st.DrawFn) -> list[str]:
    """A few consecutive real lines (context matters: blocks, held dicts, tracebacks), some damaged."""
    lines = corpus()
    start = draw(st.integers(0, len(lines) - 1))
    run = list(lines[start : start + draw(st.integers(1, 5))])
    for i in range(len(run)):
        for op, where, what in draw(st.lists(_MUTATION, max_size=3)):
            run[i] = mutate(run[i], op, where, what)
    return run


@given(_damaged_run(), st.lists(st.booleans(), max_size=5))
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_damaged_real_lines_never_break_a_parser(texts: list[str], frames: list[bool]) -> None:
    _ok(texts, frames)


@pytest.mark.slow  # every corpus line, damaged: ~30 s
def test_every_corpus_line_and_its_standard_damage_parse_cleanly() -> None:
    """Deterministic sweep (the fuzz corpus): every real line x every mutation kind x 3 variants."""
    for text in corpus():
        texts = [text] + [mutate(text, op, 7 * k + 3, k) for op in range(9) for k in (0, 9, 20)]
        _ok(texts)


# ---------------------------------------------------------------- regressions found by fuzzing
# Real lines: sample_logs/megatron__gpt2_deepspeed.log (seed 004, DeepSpeed + Megatron GPT-2),
# sample_logs/deepspeed__coca_4rank_zero1_sighup.log (seed 002), HF Trainer LMSYS slice 1.
MEGATRON = (
    " iteration        5/ 1000000 | elapsed time per iteration (ms): 1196.2 | learning rate 7.500E-08 |"
    " lm loss 1.098990E+01 | loss scale 4096.0 |"
)
DS_TIMER = (
    "[2024-02-20 10:25:57,892] [INFO] [timer.py:198:stop] epoch=0/micro_step=1000/global_step=1000, "
    "RunningAvgSamplesPerSec=1126.8026294283802, CurrSamplesPerSec=1211.289158780771, MemAllocated=5.29GB, "
    "MaxMemAllocated=28.74GB"
)
DS_MEMORY = (
    "[2024-02-20 09:50:10,670] [INFO] [utils.py:830:see_memory_usage] MA 0.72 GB         Max_MA 0.95 GB"
    "         CA 0.83 GB         Max_CA 1 GB "
)
DS_PROGRESS = "[2024-02-20 09:55:01,108] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, lr=[4e-06], mom=[(0.9, 0.98)]"
HF_DICT = "{'loss': 12.4476, 'grad_norm': 35.838836669921875, 'learning_rate': 2.333333333333333e-05, 'epoch': 0.0}"
HUGE = "1" + "0" * 5000  # beyond Python's 4300-digit int() limit
BIG = "9" * 400  # int() fine, float(int) overflows


def _steps(records: list) -> list[Step]:
    return [r for r in records if isinstance(r, Step)]


@pytest.mark.parametrize(
    "bad",
    [
        MEGATRON.replace("5/", HUGE + "/", 1),
        MEGATRON.replace("1000000", BIG, 1),
        DS_TIMER.replace("global_step=1000", "global_step=" + HUGE),
        DS_TIMER.replace("epoch=0", "epoch=" + BIG),
        DS_TIMER.replace("MemAllocated=5.29GB", "MemAllocated=1.2.3GB"),
        DS_MEMORY.replace("MA 0.72 GB", "MA 0..72 GB"),
        DS_PROGRESS.replace("skipped=0", "skipped=" + BIG),
        DS_PROGRESS.replace("step=10", "step=" + HUGE),
        HF_DICT.replace("12.4476", BIG),
        "step=1e999 loss=2.0",
        "step=nan loss=2.0",
        "  2%|██▋      | 199/8264 [" + HUGE + ":37<15:44:25,  7.03s/it]",
        "[03/15 07:48:04 d2.utils.events]:  eta: " + HUGE + ":01:23  iter: 19  total_loss: 1.2",
        "Epoch " + HUGE + ": 100%|██████████| 18/18 [00:17<00:00, loss=10.0]",
    ],
    ids=lambda s: repr(s[:40]),
)
def test_absurd_numbers_yield_nothing_not_an_exception(bad: str) -> None:
    records = _ok([MEGATRON, DS_PROGRESS, bad, MEGATRON.replace("5/", "10/", 1)])
    for step in _steps(records):
        assert step.step is None or step.step < 10**18
        for value in step.metrics.values():
            assert abs(value) < 1e300 or math.isnan(value) or math.isinf(value)
    # the real lines around the bad one are still there
    assert {s.step for s in _steps(records) if "loss" in s.metrics} >= {5, 10}


def test_lightning_cprofile_row_with_a_broken_time_is_not_a_row() -> None:
    # Lightning AdvancedProfiler (cProfile) rows, as in the Lightning docs' example output.
    header = "   ncalls  tottime  percall  cumtime  percall filename:lineno(function)"
    good = "       20    0.002    0.000    0.005    0.000 {built-in method torch.cat}"
    bad = "       20    1.2.3    0.000    0.005    0.000 {built-in method torch.cat}"
    records = _ok(["Profile stats for: run_training_batch", header, good, bad])
    for profile in (r for r in records if isinstance(r, Profile)):
        for row in profile.rows:
            assert all(not k.endswith("_s") or isinstance(v, float) for k, v in row.items())


def test_unicode_digits_do_not_become_a_wrong_iteration() -> None:
    """`\\d` matches ARABIC-INDIC digits; whatever a parser makes of them, it is a plain int."""
    records = _ok([MEGATRON.replace("5/", "٥/", 1)])
    for step in _steps(records):
        assert step.step is None or isinstance(step.step, int)


# ---------------------------------------------------------------- rank.py (ranks helper's file)
# A launcher prefix or a rank in the text with a number beyond int()'s 4300-digit limit makes
# trainwatch/parsers/rank.py raise ValueError. split_prefix and mentioned_rank are called by
# SourceParser._process OUTSIDE the per-parser try, so the exception escapes the runner and
# `trainwatch summary` dies with "internal error" on one crafted line.


@pytest.mark.parametrize(
    "bad",
    [
        "[default" + HUGE + "]: hello",  # split_prefix
        "[rank" + HUGE + "]: Traceback (most recent call last):",  # split_prefix
        "[Rank " + HUGE + "] Completed store-based barrier",  # mentioned_rank
        "rank=" + HUGE + " time (ms) | forward: 1.0 | backward: 2.0",  # text_rank (inside a parser)
    ],
    ids=["default_prefix", "rank_prefix", "mentioned_rank", "text_rank"],
)
def test_absurd_rank_numbers_do_not_escape_the_runner(bad: str) -> None:
    records = _ok([MEGATRON, bad, MEGATRON.replace("5/", "10/", 1)])
    assert {s.step for s in _steps(records)} >= {5, 10}


def test_phases_and_events_are_numbers_for_damaged_deepspeed_lines() -> None:
    lines = [
        "rank=0 time (ms) | optimizer_gradients: 18.83 | optimizer_step: 132.81 | optimizer_allgather: 21.99",
        "rank=0 time (ms) | optimizer_gradients: nan | optimizer_step: 1e999 | optimizer_allgather: 2.1.9",
        "rank=0 time (ms) | optimizer_gradients: 18.83 | optimizer_step: | optimizer_allgather: 21.99",
        "[2024-02-20 10:10:34,404] [INFO] [logging.py:96:log_dist] [Rank 0] [deepspeed] OVERFLOW! Rank 0 Skipping"
        " step. Attempted loss scale: 1e999, reducing to 32768",
    ]
    records = _ok(lines)
    phases = [r for r in records if isinstance(r, Phases)]
    # only the intact breakdown; a line with a field that is not a number is no breakdown at all
    assert [p.phases_s for p in phases] == [
        {"optimizer_gradients": 0.01883, "optimizer_step": 0.13281, "optimizer_allgather": 0.02199}
    ]
    assert [e for e in records if isinstance(e, Event) and e.kind == "overflow"] == []


def test_a_field_without_a_label_is_not_a_metric_named_empty() -> None:
    """Found by tests/bench/fuzz_parsers.py: nanochat's line (karpathy/nanochat#147, sample_logs/
    nanochat__pr147_a100.log) with `|` inserted before `: 529,882` gave metric ''."""
    line = "step 00004/21400 (0.02%) | loss: 8.893647 | lrm: 1.00 | dt: 989.44ms | tok/sec | : 529,882 | :mfu: 74.13"
    (step,) = _steps(_ok([line]))
    assert step.metrics["loss"] == 8.893647
    assert "" not in step.metrics


def test_fairseq_pair_without_a_key_is_not_a_metric_named_empty() -> None:
    """Found by tests/bench/fuzz_parsers.py: fairseq's legacy line (pytorch/fairseq#940, sample_logs/
    fairseq__issue940_legacy.log shape) with a key deleted: `, =53627,`."""
    line = (
        "| epoch 001:    550 / 1891 loss=10.9, nll_loss=10.492, =53627, ups=0.5, wpb=104800, bsz=5311,"
        " num_updates=545, lr=0.000109086, gnorm=1.469, clip=0%, oom=0, loss_scale=2.000, wall=1065, train_wall=925"
    )
    (step,) = _steps(_ok([line]))
    assert step.step == 545 and step.metrics["nll_loss"] == 10.492
    assert "" not in step.metrics


# Found when the corpus took in the formats' sample lines: fields `isdigit()` or `\d+` let through
# to `int()` (5,000 digits, or `²`, which `isdigit()` passes and `int()` refuses).
WATCHDOG = (
    "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation"
    " timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168,"
    " Timeout(ms)=600000) ran for 600060 milliseconds before timing out."
)


@pytest.mark.parametrize("bad", [HUGE, "²", "١٢٣"], ids=["huge", "superscript", "arabic_indic"])
def test_a_watchdog_timeout_with_a_broken_count_is_still_the_timeout(bad: str) -> None:
    records = _ok([WATCHDOG.replace("SeqNum=1580", "SeqNum=" + bad).replace("=600000", "=" + bad)])
    (event,) = [r for r in records if isinstance(r, Event) and r.kind == "nccl_timeout"]
    assert event.data["op"] == "ALLREDUCE" and "seq" not in event.data and "timeout_ms" not in event.data


def test_a_system_exit_with_a_huge_code_is_a_crash_with_code_1() -> None:
    note = "An exception has occurred, use %tb to see the full traceback."  # (IPython's)
    records = _ok([note, "SystemExit: " + HUGE])
    (crash,) = [r for r in records if isinstance(r, Event) and r.kind == "crash"]
    assert crash.data["exitcode"] == 1


def test_a_deepspeed_chat_step_beyond_a_machine_int_is_not_a_step() -> None:
    good = "epoch: 0|step: 7|ppo_ep: 1|act_loss: 0.2099609375|cri_loss: 0.12042236328125|unsuper_loss: 0.0"
    records = _ok([good, good.replace("step: 7", "step: " + HUGE), good.replace("step: 7", "step: 8")])
    assert [s.step for s in _steps(records) if "loss" in s.metrics] == [7, 8]


def test_an_ms_swift_step_counter_beyond_a_machine_int_is_not_a_step() -> None:
    """ms-swift's `'global_step/max_steps': '56/176'` (issue 4146) with 5,000 digits: the dict is read, the counter not."""
    good = "{'loss': 0.23179118, 'learning_rate': 8.6e-07, 'epoch': 0.64, 'global_step/max_steps': '56/176'}"
    records = _ok([good, good.replace("'56/", "'" + HUGE + "/"), good.replace("'56/", "'57/")])
    steps = [s.step for s in _steps(records) if "loss" in s.metrics]
    assert steps[0] == 56 and steps[-1] == 57 and all(s is None or s < 10**18 for s in steps)


def test_a_launcher_failure_with_a_huge_exit_code_is_still_the_failure() -> None:
    """torchrun's `Root Cause (first observed failure)` block with a 5,000-digit exit code."""
    block = [  # (tests/corpus/custom_loop_q/llm_kd_torchrun_eaddrinuse_traceback.log)
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        "src/train_distr.py FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2025-02-10_14:23:37",
        "  host      : a100.cm.cluster",
        "  rank      : 2 (local_rank: 2)",
        "  exitcode  : 1 (pid: 3032304)",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "============================================================",
    ]
    assert any(isinstance(r, Event) and r.kind == "crash" and r.data.get("exitcode") == 1 for r in _ok(block))
    block[13] = "  exitcode  : " + HUGE + " (pid: 3032304)"
    records = _ok(block)
    assert any(isinstance(r, Event) and r.kind == "crash" and r.rank == 2 for r in records)

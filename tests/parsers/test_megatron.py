"""Megatron-LM / Megatron-DeepSpeed lines, golden. Every line is real; its source is named beside it.

Sources:
  seed004  ../shared/seeds/004_* (2020 Megatron GPT-2 + DeepSpeed 0.3.8, old `label value` fields)
  ml756    github.com/NVIDIA/Megatron-LM/issues/756 (Megatron-Core, `[2024-..]` stamp, num zeros, TFLOP/s/GPU)
  nccl743  github.com/NVIDIA/nccl/issues/743 (Megatron-LM 2022: skipped iterations without lm loss, timers)
  epfl11   github.com/epfLLM/Megatron-LLM/issues/11 (grad norm)
  bs396    github.com/bigscience-workshop/Megatron-DeepSpeed/issues/396 (grad norm: nan, no lm loss)
  ds3742   github.com/deepspeedai/DeepSpeed/issues/3742 (Megatron-DeepSpeed: samples/sec prefix, approx flops)
  alcf     github.com/samanta-amit/Megatron-DeepSpeed ALCF/README.md (memory report, tgs, TFLOPs, (min, max) block)
  bc28     github.com/bigcode-project/Megatron-LM/issues/28 ((min, max) rows)
"""

from __future__ import annotations

from collections.abc import Iterable

from conftest import SAMPLES

from trainwatch.lines.assembler import Line
from trainwatch.parsers.formats.megatron import MegatronParser
from trainwatch.parsers.registry import new_parsers
from trainwatch.parsers.runner import SourceParser
from trainwatch.pipeline import Pipeline
from trainwatch.records import Event, Phases, Record, Step


def run(lines: Iterable[str], *, all_parsers: bool = False) -> list[Record]:
    records: list[Record] = []
    runner = SourceParser("t.log", new_parsers() if all_parsers else [MegatronParser()], records.append)
    runner.feed_lines(Line(no, text) for no, text in enumerate(lines, 1))
    runner.finish()
    return records


def steps(records: list[Record]) -> list[Step]:
    return [r for r in records if isinstance(r, Step)]


def phases(records: list[Record]) -> list[Phases]:
    return [r for r in records if isinstance(r, Phases)]


SEED004_ITER = (
    " iteration        5/ 1000000 | elapsed time per iteration (ms): 1196.2 | learning rate 7.500E-08 | "
    "lm loss 1.098990E+01 | loss scale 4096.0 |"
)
SEED004_MEMORY = (
    "after 5 iterations memory (MB) | allocated: 294.60595703125 | max allocated: 14566.3486328125 | "
    "cached: 20508.0 | max cached: 20508.0"
)
SEED004_TIMERS = (
    "time (ms) | forward: 567.42 | backward: 516.25 | allreduce: 0.00 | optimizer: 112.33 | batch generator: 224.32 | "
    "data loader: 222.92"
)


def test_old_iteration_memory_and_timers() -> None:
    recs = run([SEED004_ITER, SEED004_MEMORY, SEED004_TIMERS])
    (s,) = steps(recs)
    assert s.step == 5
    assert dict(s.metrics) == {
        "step_time_s": 1.1962,
        "lr": 7.5e-08,
        "loss": 10.9899,
        "loss_scale": 4096.0,
        "total_steps": 1000000,
        # memory (MB) is MiB: / 1024 -> GiB; `cached` is torch's old name for reserved
        "mem_gib": 294.60595703125 / 1024,
        "max_mem_gib": 14566.3486328125 / 1024,
        "reserved_mem_gib": 20508.0 / 1024,
        "max_reserved_mem_gib": 20508.0 / 1024,
    }
    (p,) = phases(recs)
    assert p.step == 5
    assert p.phases_s == {
        "forward": 0.56742,
        "backward": 0.51625,
        "allreduce": 0.0,
        "optimizer": 0.11233,
        "batch_generator": 0.22432,
        "data_loader": 0.22292,
    }


def test_core_line_with_timestamp() -> None:
    line = (  # ml756
        " [2024-04-06 02:59:36] iteration       43/     100 | consumed samples:         5504 | elapsed time per "
        "iteration (ms): 5444.9 | throughput per GPU (TFLOP/s/GPU): 239.8 | learning rate: 8.600000E-06 | global batch "
        "size:   128 | lm loss: 1.825991E+00 | load_balancing_loss: 1.019746E+00 | loss scale: 1.0 | grad norm: 1.426 | "
        "num zeros: 0.0 | number of skipped iterations:   0 | number of nan iterations:   0 |"
    )
    (s,) = steps(run([line]))
    assert (s.step, s.time) == (43, "2024-04-06T02:59:36")
    assert dict(s.metrics) == {
        "consumed_samples": 5504,
        "step_time_s": 5.4449,
        "tflops": 239.8,
        "lr": 8.6e-06,
        "global_batch_size": 128,
        "loss": 1.825991,
        "load_balancing_loss": 1.019746,
        "loss_scale": 1.0,
        "grad_norm": 1.426,
        "num_zeros": 0.0,
        "number_of_skipped_iterations": 0,
        "number_of_nan_iterations": 0,
        "total_steps": 100,
    }


def test_skipped_iteration_has_no_loss_and_timers_follow_it() -> None:
    lines = [  # nccl743
        "time (ms) | model-and-optimizer-setup: 294.00 | train/valid/test-data-iterators-setup: 3654.81",
        " iteration       10/ 1000000 | consumed samples:           40 | elapsed time per iteration (ms): 356.2 | "
        "learning rate: 0.000E+00 | global batch size:     4 | loss scale: 8388608.0 | number of skipped iterations:  "
        "10 | number of nan iterations:   0 |",
        "time (ms) | forward-compute: 193.77 | backward-compute: 73.02 | backward-params-all-reduce: 20.10 | "
        "backward-layernorm-all-reduce: 0.02 | backward-embedding-all-reduce: 0.04 | backward-reduce-model-grads: 20.22 | "
        "optimizer-copy-to-main-grad: 12.19 | optimizer-unscale-and-check-inf: 50.71 | optimizer: 63.01 | "
        "batch-generator: 25.27",
    ]
    recs = run(lines)
    (s,) = steps(recs)
    assert s.step == 10
    assert "loss" not in s.metrics
    assert s.metrics["number_of_skipped_iterations"] == 10
    setup, timers = phases(recs)
    assert setup.step is None  # before the first iteration
    assert setup.phases_s == {"model_and_optimizer_setup": 0.294, "train_valid_test_data_iterators_setup": 3.65481}
    assert timers.step == 10
    assert timers.phases_s["forward_compute"] == 0.19377
    assert timers.phases_s["backward_params_all_reduce"] == 0.0201
    assert timers.phases_s["batch_generator"] == 0.02527


def test_grad_norm_nan_becomes_a_nan_event() -> None:
    line = (  # bs396
        " iteration     5426/  250000 | consumed samples:        43408 | consumed tokens:     88899584 | elapsed time "
        "per iteration (ms): 4247.9 | learning rate: 2.999E-04 | global batch size:     8 | loss scale: 1.0 | grad norm: "
        "nan | actual seqlen:  2048 | number of skipped iterations:   0 | number of nan iterations:   0 | samples per "
        "second: 1.883 | TFLOPs: 78.36 |"
    )
    recs = run([line])
    (s,) = steps(recs)
    assert s.metrics["grad_norm"] != s.metrics["grad_norm"]  # NaN, as printed
    assert s.metrics["samples_per_s"] == 1.883
    assert s.metrics["tflops"] == 78.36
    (e,) = [r for r in recs if isinstance(r, Event)]
    assert (e.kind, e.step, e.data) == ("nan", 5426, {"metric": "grad_norm"})


def test_megatron_deepspeed_prefix_fields_and_approx_flops() -> None:
    line = (  # ds3742
        " samples/sec: 7.799 | iteration       34/   10000 | elapsed time per iteration (ms): 4103.1 | learning rate: "
        "2.111E-06 | approx flops per GPU: 112.9TFLOPS | lm_loss: 1.118665E+01 | number of skipped iterations:   0 | "
        "number of nan iterations:   0 |"
    )
    (s,) = steps(run([line]))
    assert s.step == 34
    assert s.metrics["samples_per_s"] == 7.799
    assert s.metrics["tflops"] == 112.9
    assert s.metrics["loss"] == 11.18665
    assert s.metrics["step_time_s"] == 4.1031


def test_alcf_memory_report_merges_with_its_iteration_and_minmax_block() -> None:
    lines = [  # alcf
        "[Rank 0] (after 1 iterations) memory (MB) | allocated: 18244.640625 | max allocated: 41299.50146484375 | "
        "reserved: 46764.0 | max reserved: 46764.0",
        " iteration        1/  317892 | consumed samples:           96 | consumed tokens:       393216 | elapsed time per "
        "iteration (ms): 25849.1 | learning rate: 3.000E-04 | global batch size:    96 | lm loss: 1.117136E+01 | loss "
        "scale: 1.0 | actual seqlen:  4096 | number of skipped iterations:   0 | number of nan iterations:   0 | "
        "samples per second: 3.714 | tokens per gpu per second(tgs): 633.832 | TFLOPs: 38.61 |",
        "(min, max) time across ranks (ms):",
        # bc28 rows
        "    forward-backward ...............................: (5164.84, 5177.15)",
        "    batch-generator ................................: (408.98, 817.78)  ",
        "    optimizer ......................................: (72.92, 73.13)",
    ]
    recs = run(lines)
    (s,) = steps(recs)
    assert (s.step, s.rank, s.line) == (1, 0, 1)
    assert s.metrics["mem_gib"] == 18244.640625 / 1024
    assert s.metrics["max_reserved_mem_gib"] == 46764.0 / 1024
    assert s.metrics["loss"] == 11.17136
    assert s.metrics["tokens_per_s_per_gpu"] == 633.832
    assert s.metrics["consumed_tokens"] == 393216
    (p,) = phases(recs)
    assert (p.step, p.line) == (1, 3)
    assert p.phases_s == {
        "forward_backward": 5.17715,
        "forward_backward_min": 5.16484,
        "batch_generator": 0.81778,
        "batch_generator_min": 0.40898,
        "optimizer": 0.07313,
        "optimizer_min": 0.07292,
    }


class _Recorder:
    """Just enough Emitter to watch when the parser releases phases (no runner buffering)."""

    def __init__(self) -> None:
        self.phases_s: list[dict[str, float]] = []

    def phases(self, step: int | None, phases_s: dict[str, float], **_: object) -> None:
        self.phases_s.append(dict(phases_s))


def test_block_is_released_early_once_its_shape_is_known() -> None:
    header = "(min, max) time across ranks (ms):"
    rows = [  # alcf setup block
        "    model-and-optimizer-setup ......................: (64818.18, 64858.22)",
        "    train/valid/test-data-iterators-setup ..........: (1968.10, 2288.56)",
    ]
    parser, out = MegatronParser(), _Recorder()
    for no, text in enumerate([header, *rows], 1):
        assert parser.feed(text, Line(no, text), out)  # type: ignore[arg-type]
    assert out.phases_s == []  # shape not known yet: the block may go on
    parser.feed(header, Line(4, header), out)  # type: ignore[arg-type]
    assert len(out.phases_s) == 1  # closed by the next header
    for no, text in enumerate(rows, 5):
        parser.feed(text, Line(no, text), out)  # type: ignore[arg-type]
    # Same rows as the previous block: released at its last row, not one interval later.
    assert [p["model_and_optimizer_setup"] for p in out.phases_s] == [64.85822, 64.85822]
    assert out.phases_s[1]["train_valid_test_data_iterators_setup_min"] == 1.9681


def test_validation_loss() -> None:
    (s,) = steps(run([" validation loss at iteration 1000 | LM loss: 6.585178E+00 | LM PPL: 7.242798E+02"]))  # seed004
    assert (s.step, dict(s.metrics)) == (1000, {"eval_loss": 6.585178, "eval_ppl": 724.2798})


def test_half_matching_lines_yield_nothing() -> None:
    lines = [
        # a DeepSpeed breakdown line is not a Megatron timer line (seed004 line 340)
        "rank=0 time (ms) | optimizer_gradients: 18.83 | optimizer_step: 132.81 | optimizer_allgather: 21.99",
        # prose that mentions iterations (seed 003, a profiling tutorial)
        "Typically, recording only a few iterations/spans is enough. In very particular cases, you might be "
        "interested how the speed develops over time. Then, it is useful to record and inspect multiple spans.",
        # a `(min, max)` row with no block open (bc28 row alone)
        "    optimizer ......................................: (72.92, 73.13)",
        # an iteration line cut before its first field separator
        " iteration        5/ 100",
        # a validation line whose value is cut
        " validation loss at iteration 1000 | LM loss: 6.585178E+",
    ]
    assert run(lines) == []


def test_sample_log_through_the_pipeline() -> None:
    records: list[Record] = []
    Pipeline([str(SAMPLES / "megatron__gpt2_deepspeed.log")], sink=records.extend).read_to_end()
    loss = [s for s in steps(records) if "loss" in s.metrics]
    # the sample keeps iterations 5-300, the validation at 1000 and the last lines (22935-23000)
    assert [s.step for s in loss] == [*range(5, 301, 5), 1000, 1005, *range(22935, 23001, 5)]
    assert loss[-1].metrics["loss"] == 2.13397
    evals = [s for s in steps(records) if "eval_loss" in s.metrics]
    assert [(s.step, s.metrics["eval_loss"]) for s in evals] == [(1000, 6.585178)]


def test_hard_wrapped_iteration_lines_in_seconds_and_valid_loss() -> None:
    # bigscience BLOOM-176B chronicles: Megatron-DeepSpeed lines wrapped at the terminal's width
    from _feed import feed, steps

    # (each piece a parser is offered holds `iteration`: the wrap falls inside Megatron's long line)
    lines = [
        "[default7]: iteration   42780/ 115311 | consumed samples:    71455664 | elapsed time per iteration (s): 105.16 | "
        "learning",
        " rate: 4.475E-05 | global batch size: 2048 | lm loss: 2.117073E+00 | grad norm: 0.150 | number of skipped "
        "iterations:  0 | number of nan",
        "iterations:  0 | samples per second: 19.474 | TFLOPs: 149.10 |",
        "[default7]:valid loss at iteration 45000 | lm loss value: 2.327091E+00 | lm loss PPL: 1.024782E+01 |",
    ]
    got = {s.step: s.metrics for s in steps(feed(lines))}
    assert got[42780]["step_time_s"] == 105.16 and got[42780]["lr"] == 4.475e-05
    assert got[42780]["loss"] == 2.117073 and got[42780]["tflops"] == 149.1
    assert got[45000]["eval_loss"] == 2.327091


# NVIDIA/Megatron-LM issue 1880: the pasted excerpt starts after the iteration's head
HEADLESS = (
    " | learning rate: 5.333333E-06 | global batch size:     4 | lm loss: 1.420515E+00 | loss scale: 1.0 | "
    "grad norm: 13.636 | number of skipped iterations:   0 | number of nan iterations:   0 | "
)


def test_a_record_whose_head_was_cut_is_the_runs_first_figures() -> None:
    got = steps(run([HEADLESS, "Traceback (most recent call last):"], all_parsers=True))
    assert [(s.step, s.line) for s in got] == [(None, 1)]
    assert got[0].metrics["loss"] == 1.420515
    assert got[0].metrics["lr"] == 5.333333e-06
    assert got[0].metrics["grad_norm"] == 13.636
    assert got[0].metrics["loss_scale"] == 1.0


def test_a_headless_fragment_after_iterations_or_without_a_loss_is_not_read() -> None:
    after = run([SEED004_ITER, HEADLESS])
    assert [s.step for s in steps(after)] == [5]
    assert run([" | learning rate: 5.3E-06 | global batch size:     4 | lm loss: 1.4E+", "x"]) == []  # torn, no loss
    assert run(["see | lm loss: 1.4 | for details"]) == []  # not a record's tail
    # another tool's table that counts for itself, on the first line too
    table = ["| epoch 3 | lm loss: 2.0 | ppl: 7.4 |", "| epoch 4 | lm loss: 1.9 | ppl: 6.7 |"]
    assert [s.step for s in steps(run(table))] == []

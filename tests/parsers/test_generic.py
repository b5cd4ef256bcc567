"""Generic fallback. Sources: /work/shared/real_logs/deepspeed__saforem2_vault__* (custom loop),
a public build-nanogpt style log (`step 0 | loss: ... | tokens/sec: ...`), modula-systems/modula PR #1
(`step: 10  train loss: 3.11 ... MFU: 63.91%`), karpathy/llm.c issue #77 (`iteration 0, loss: ..., time: ...ms`),
NVIDIA/Megatron-LM issue #449 (argument dump), the modded-nanogpt real log (argument overrides)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _feed import feed, steps
from _pipeline import read
from conftest import REAL_LOGS, SAMPLES

from trainwatch.parsers.formats.generic import GenericParser, parse_fields


def test_custom_loop_real_log_yields_steps() -> None:
    path = next(REAL_LOGS.glob("deepspeed__saforem2_vault__*"))
    records, _ = read(path)
    got = steps(records)
    assert [s.step for s in got] == [1, 6, 9, 14]
    assert [s.line for s in got] == [10, 11, 18, 19]
    first = got[0].metrics
    assert first == {
        "epoch": 1.0,
        "step_time_s": 0.3665,
        "batch_acc": 0.1094,
        "batch_loss": 0.009,
        "acc": 0.0149,
        "running_loss": 0.0012,
    }


def test_pipe_separated_loop() -> None:
    records, _ = read(SAMPLES / "generic__build_nanogpt_tokens_sec.log")
    got = steps(records)
    assert [s.step for s in got] == [0, 1, 2, 3]
    assert got[1].metrics == {
        "loss": 9.649478,
        "lr": 0.00012,
        "grad_norm": 9.5112,
        "step_time_s": pytest.approx(4.43157),
        "tokens_per_s": 118307.47,
    }


def test_colon_fields_and_percent() -> None:
    # modula-systems/modula PR #1
    fields = parse_fields(
        "step: 10         train loss: 3.11        test loss: 3.05         tokens/gpu/sec: 9378.40         MFU: 63.91%"
    )
    assert fields == (10, {"loss": 3.11, "eval_loss": 3.05, "tokens_per_s_per_gpu": 9378.4, "mfu_pct": 63.91})


def test_held_lines_emitted_in_order_once_template_repeats() -> None:
    # karpathy/llm.c#77 (python reference loop)
    lines = [
        "iteration 0, loss: 2.86417818069458, time: 2833.053ms",
        "wrote gpt2_124M.bin",
        "iteration 1, loss: 2.071094512939453, time: 224.394ms",
        "iteration 2, loss: 1.5036660432815552, time: 211.509ms",
    ]
    got = steps(feed(lines, [GenericParser()]))
    assert [(s.step, s.line) for s in got] == [(0, 1), (1, 3), (2, 4)]
    assert got[0].metrics == {"loss": pytest.approx(2.86417818069458), "step_time_s": pytest.approx(2.833053)}


def test_one_off_line_is_a_step_only_when_the_log_has_no_other() -> None:
    """A line whose shape never repeats is no step while the log goes on; at the end of the input, a
    run that printed one report (Lingvo's first `step:` line before minutes of `Steps/second`) has
    that step, unless the line mentions a step rather than reports it, or the log has other steps."""
    lone = "iteration 0, loss: 2.86417818069458, time: 2833.053ms"
    assert [(s.step, s.metrics) for s in steps(feed([lone], [GenericParser()]))] == [
        (0, {"loss": 2.86417818069458, "step_time_s": 2.833053})
    ]
    assert steps(feed(["Resuming from step 5000, loss 2.3"], [GenericParser()])) == []
    after = ["step 5000 | loss 2.0", "step 5100 | loss 1.9", "Model at step 3000: loss 1.2, eval 1.1"]
    assert [s.step for s in steps(feed(after, [GenericParser()]))] == [5000, 5100]


def test_a_lone_report_against_its_total_is_a_step() -> None:
    # kaldi-asr/kaldi issue 2847: steps/nnet3/chain/train.py reports its first iteration, then a
    # sub-process aborts: the shape never prints again, and the report is what the run got to
    lines = [
        "2018-11-15 18:42:56,288 [steps/nnet3/chain/train.py:451 - train - INFO ] Training will run for 4.0 epochs"
        " = 2496 iterations",
        "2018-11-15 18:42:56,289 [steps/nnet3/chain/train.py:493 - train - INFO ] Iter: 0/2495    Epoch: 0.00/4.0"
        " (0.0% complete)    lr: 0.000100",
        "bash: line 1: 23670 Aborted                 (core dumped) ( nnet3-chain-compute-prob ...",
    ]
    got = steps(feed(lines, [GenericParser()]))
    assert [(s.step, s.line) for s in got] == [(0, 2)]
    assert got[0].metrics == {"lr": 0.0001, "epoch": 0.0, "total_steps": 2495.0}


@pytest.mark.parametrize(
    "line",
    [
        "Resumed at step 500, lr 0.0003",  # no total: a one-off mention
        "Eval step 10/100: loss 0.52",  # an evaluation's batches
        "step 3/10: accuracy 0.91",  # no training figure
    ],
)
def test_a_lone_line_without_a_report_against_its_total_is_not_a_step(line: str) -> None:
    assert steps(feed([line], [GenericParser()])) == []


def test_a_line_of_another_shape_inside_the_confirmed_progress_goes_out_with_it() -> None:
    # yuhuan-wu/P2T issue 13 (DeiT's log.txt): epoch 250 adds its test figures between 249 and 251
    lines = [
        '{"train_lr": 8.16e-05, "train_loss": 3.2029, "epoch": 249, "n_parameters": 11590840}',
        '{"train_lr": 7.89e-05, "train_loss": 3.1954, "test_loss": 0.9325, "test_acc1": 78.83, "epoch": 250,'
        ' "n_parameters": 11590840}',
        '{"train_lr": 7.63e-05, "train_loss": 3.2019, "epoch": 251, "n_parameters": 11590840}',
    ]
    got = steps(feed(lines, [GenericParser()]))
    assert [(s.step, s.line) for s in got] == [(249, 1), (250, 2), (251, 3)]
    assert got[1].metrics["eval_loss"] == 0.9325


def test_a_line_of_another_shape_outside_the_confirmed_progress_stays_held() -> None:
    lines = [
        "step 10 | loss 2.0",
        "setting: step 40 | warmup 0.1",  # its counter is not between the steps the progress proves
        "step 20 | loss 1.9",
    ]
    got = steps(feed(lines, [GenericParser()]))
    assert [s.step for s in got] == [10, 20]


def test_an_evaluation_printed_without_a_counter_reports_on_the_last_step() -> None:
    # foamliu/End-to-end-ASR-Transformer issue 39: the VALID line names no epoch; the first one comes
    # while the epoch line's shape is still held, the second after it is confirmed
    lines = [
        "2020-11-13 09:32:47,406 - (Epoch 20) TRAIN LOSS:0.1903 CER:6.53% LR:0.0000167",
        "2020-11-13 09:32:47,461 - VALID",
        "2020-11-13 09:33:31,062 - VALID SET 0 LOSS:0.1780 CER:5.78%",
        "2020-11-13 13:55:36,838 - (Epoch 21) TRAIN LOSS:0.1832 CER:6.25% LR:0.0000163",
        "2020-11-13 13:56:31,427 - VALID SET 0 LOSS:0.1735 CER:5.59%",
    ]
    got = steps(feed(lines, [GenericParser()]))
    evals = [(s.step, s.metrics["eval_loss"]) for s in got if "eval_loss" in s.metrics]
    assert evals == [(20, 0.178), (21, 0.1735)]
    assert all(s.metrics.get("cer_pct") in (6.53, 6.25, None) for s in got)  # the training CER stays the step's


def test_counter_must_increase() -> None:
    line = "iteration 0, loss: 2.86417818069458, time: 2833.053ms"
    assert steps(feed([line, line, line], [GenericParser()])) == []


@pytest.mark.parametrize(
    "lines",
    [
        # NVIDIA/Megatron-LM#449: argument dump
        [
            "  log_interval .................................... 100",
            "  loss_scale_window ............................... 1000",
            "  lr .............................................. 0.0003",
            "  lr_decay_iters .................................. 320000",
        ],
        # modded-nanogpt real log: argument overrides (numbers, `=`, no step counter)
        ["  --train_seq_len = 4096", "  --val_seq_len = 4096", "  --train_steps = 20000", "  --grad_acc_steps = 8"],
        # /work/shared/real_logs/mmengine__*_L1394-1432: validation batches are not training steps
        [
            "2023/06/04 12:10:25 - mmengine - INFO - Epoch(val)  [5][ 1/22]    eta: 0:00:08  time: 0.4120  data_time: 0.2596  memory: 1264  ",
            "2023/06/04 12:10:25 - mmengine - INFO - Epoch(val)  [5][ 2/22]    eta: 0:00:05  time: 0.2780  data_time: 0.1318  memory: 1125  ",
        ],
        # saforem2 real log: repeated key=value without a counter
        [
            "[2023-01-11 13:28:15,367][mlprof.trainers.pytorch.trainer][INFO] - [TRAIN]  loss=0.0003  acc=1%",
            "[2023-01-11 13:28:15,367][mlprof.trainers.pytorch.trainer][INFO] - [TRAIN]  loss=0.0002  acc=2%",
        ],
    ],
)
def test_never_fires_on_config_dumps_or_counterless_lines(lines: list[str]) -> None:
    assert steps(feed(lines, [GenericParser()])) == []


def test_specific_parsers_win() -> None:
    # the torchtitan sample is understood by its own parser, never by the fallback
    records, pipeline = read(SAMPLES / "torchtitan__pr1287_dcp_llama3.log")
    state = pipeline.store.sources[str(SAMPLES / "torchtitan__pr1287_dcp_llama3.log")]
    assert "generic" not in state.formats
    assert len(steps(records)) == 6


def test_nested_epoch_and_step_bars_give_the_run_total(tmp_path: Path) -> None:
    # OpenRLHF SFTTrainer: tqdm(desc="Train epoch") around tqdm(desc="Train step of epoch %d"), postfix set per step
    path = tmp_path / "sft.log"
    path.write_text(
        "Train epoch:   0%|          | 0/2 [00:00<?, ?it/s]\n"
        "Train step of epoch 0:   0%|          | 1/1563 [00:06<2:53:31,  6.67s/it, gpt_loss=1.84, loss_mean=0.365]"
        "\rTrain step of epoch 0:   0%|          | 2/1563 [00:08<1:33:05,  3.58s/it, gpt_loss=1.78, loss_mean=0.506]\n",
        encoding="utf-8",
    )
    got = steps(read(path)[0])
    assert [(s.step, s.metrics["loss"], s.metrics["total_steps"]) for s in got] == [(1, 1.84, 3126), (2, 1.78, 3126)]
    assert got[1].metrics["step_time_s"] == 3.58 and got[1].metrics["loss_mean"] == 0.506


def test_setup_bars_are_not_training_steps(tmp_path: Path) -> None:
    # What the hub, datasets, vLLM and a sharded checkpoint print before an HF Trainer run: none of
    # these counters is a training step; the Trainer's own bar after them is.
    path = tmp_path / "hf.log"
    path.write_text(
        "Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.61s/it]\n"
        "Fetching 11 files: 100%|██████████| 11/11 [00:00<00:00, 120.5it/s]\n"
        "Map (num_proc=8): 100%|██████████| 5000/5000 [00:01<00:00, 3200.11 examples/s]\n"
        "Generating train split: 100%|██████████| 36718/36718 [00:00<00:00, 500000.00 examples/s]\n"
        "model-00001-of-00002.safetensors: 100%|██████████| 4943/4943 [00:20<00:00, 241.1MB/s]\n"
        "Capturing CUDA graph shapes: 100%|██████████| 35/35 [00:12<00:00,  2.81it/s]\n"
        "  5%|▌         | 10/200 [00:10<03:10,  1.00s/it]\n"
        "{'loss': 2.11, 'grad_norm': 1.1, 'learning_rate': 2e-05, 'epoch': 0.2}\n"
        " 10%|█         | 20/200 [00:20<03:00,  1.00s/it]\n",
        encoding="utf-8",
    )
    got = steps(read(path)[0])
    assert [s.step for s in got if s.step is not None] == [10, 20]
    assert {s.metrics.get("total_steps") for s in got if s.step is not None} == {200}


def test_a_bar_counting_batches_is_still_steps(tmp_path: Path) -> None:
    path = tmp_path / "loop.log"
    path.write_text(
        "Training: 45%|████▌     | 450/1000 [00:10<00:12, 45.00batch/s, loss=0.52]\n"
        "Training: 46%|████▌     | 460/1000 [00:10<00:12, 45.00batch/s, loss=0.51]\n",
        encoding="utf-8",
    )
    got = steps(read(path)[0])
    assert [(s.step, s.metrics["loss"]) for s in got] == [(450, 0.52), (460, 0.51)]


def test_a_message_glued_after_a_bar_is_read_as_its_own_line(tmp_path: Path) -> None:
    # DeepSpeed's overflow note printed over the Trainer's bar (no newline between them), and an
    # MLX `Iter` line after a bar: the bar's step and the message both count.
    path = tmp_path / "glued.log"
    path.write_text(
        " 14%|█▍        | 378/2724 [13:58:09<86:18:35, 132.44s/it][2023-06-07 22:16:00,018] [INFO] "
        "[loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 64, "
        "reducing to 32\n"
        " 14%|█▍        | 379/2724 [14:00:21<86:09:52, 132.28s/it]Iter 20: Train loss 3.142, Learning Rate 1.000e-04, "
        "It/sec 0.283, Tokens/sec 296.2\n",
        encoding="utf-8",
    )
    records = read(path)[0]
    got = {s.step: s.metrics for s in steps(records)}
    assert sorted(got) == [20, 378, 379]
    assert got[379]["step_time_s"] == 132.28 and got[20]["loss"] == 3.142 and got[20]["lr"] == 1e-4
    assert [e.kind for e in records if getattr(e, "kind", None) == "overflow"] == ["overflow"]


def test_metrics_wrapped_onto_indented_lines_belong_to_the_step_above(tmp_path: Path) -> None:
    # Lightning's RichProgressBar in a narrow terminal: the postfix wraps, a name and its value may be split
    pad = " " * 60
    path = tmp_path / "rich.log"
    path.write_text(
        f"Epoch 22/23 ━━━━━━━━━━ 98/98 0:00:21 • 0:00:00 4.66it/s v_num: 1 train_loss: 0.197\n"
        f"{pad}train_acc: 0.938 lr: 0.003\n"
        f"{pad}val_loss: 0.344 val_acc: 0.883\n"
        "\n"
        f"Epoch 23/23 ━━━━━━━━━━ 98/98 0:00:21 • 0:00:00 4.69it/s v_num: 1 train_loss: 0.139\n"
        f"{pad}train_acc: 0.961 lr: 0.0 val_loss:\n"
        f"{pad}0.308 val_acc: 0.903\n",
        encoding="utf-8",
    )
    got = steps(read(path)[0])
    assert [(s.metrics["loss"], s.metrics["lr"], s.metrics["eval_loss"]) for s in got] == [
        (0.197, 0.003, 0.344),
        (0.139, 0.0, 0.308),
    ]


def test_a_dict_printed_over_several_lines_is_one_report(tmp_path: Path) -> None:
    # Detectron's json_stats pasted from a terminal (facebookresearch/Detectron issue #247)
    path = tmp_path / "stats.log"
    path.write_text(
        '{"accuracy_cls": 0.923639, \n  "eta": "1 day, 13:30:44",\n  "iter": 120000,\n  "loss": 0.562384, \n'
        '  "lr": 0.010000, \n  "mb_qsize": 64, \n  "time": 0.562685}\n'
        "a line of its own: step 5 loss 1.0\n",
        encoding="utf-8",
    )
    (got,) = steps(read(path)[0])
    assert got.step == 120000 and got.line == 7
    assert got.metrics["loss"] == 0.562384 and got.metrics["lr"] == 0.01 and got.metrics["step_time_s"] == 0.562685


def test_a_bar_description_that_carries_the_loss(tmp_path: Path) -> None:
    # horovod/horovod issue #3871: `tqdm.set_description(f"epoch:{e} loss:{loss}")`
    path = tmp_path / "desc.log"
    path.write_text(
        "epoch:1 loss:1.0084699392318726:  59%|█████▉    | 230/391 [00:31<00:20,  7.69it/s]\n"
        "epoch:1 loss:1.1145583391189575:  59%|█████▉    | 232/391 [00:31<00:20,  7.84it/s]\n",
        encoding="utf-8",
    )
    got = steps(read(path)[0])
    assert [s.metrics["loss"] for s in got] == [1.0084699392318726, 1.1145583391189575]


def test_a_step_named_on_its_own_line_with_its_values_under_it(tmp_path: Path) -> None:
    # Coqui's trainer (Wubpooz/Malta-TTS): the step header, then one `| > key: value  (avg)` per line
    block = (
        "   --> TIME: 2025-08-19 14:22:56 -- STEP: {n}/3984 -- GLOBAL_STEP: {n}\n"
        "     | > loss_text_ce: 0.2275  (0.2275)\n"
        "     | > loss: {loss}  (nan)\n"
        "     | > current_lr: 5e-06 \n"
        "     | > step_time: 0.8086  (0.8086225986480713)\n"
        "\n"
    )
    path = tmp_path / "coqui.log"
    path.write_text(
        " > EPOCH: 0/1\n" + "".join(block.format(n=n, loss=loss) for n, loss in ((0, 0.1169), (200, 0.1043))),
        encoding="utf-8",
    )
    got = steps(read(path)[0])
    assert [(s.step, s.line, s.metrics["loss"]) for s in got] == [(0, 2, 0.1169), (200, 8, 0.1043)]
    assert got[0].metrics["lr"] == 5e-06 and got[0].metrics["step_time_s"] == 0.8086
    assert got[0].metrics["total_steps"] == 3984 and got[0].metrics["epoch"] == 0


def test_bars_that_do_not_know_their_total(tmp_path: Path) -> None:
    # an iterable without len(): tianshou's per-epoch bars (thu-ml/tianshou issue #449), and a bar
    # with a crash glued after it (threestudio issue #516)
    path = tmp_path / "open.log"
    path.write_text(
        "Epoch #1: 50001it [00:40, 1244.54it/s, env_step=50000, len=200, loss=-0.562, rew=200.00]\n"
        "Epoch #1: test_reward: 200.000000 ± 0.000000, best_reward: 200.000000 ± 0.000000 in #1\n"
        "Epoch #2: 50001it [00:40, 1237.34it/s, env_step=100000, len=200, loss=-0.023, rew=200.00]\n"
        "Epoch 2: |          | 4540/? [07:57<00:00,  9.51it/s]Fatal Python error: Segmentation fault\n",
        encoding="utf-8",
    )
    records = read(path)[0]
    assert [(s.step, s.metrics.get("loss")) for s in steps(records)][:2] == [(1, -0.562), (2, -0.023)]
    assert [e.data["signal"] for e in records if getattr(e, "kind", None) == "signal"] == ["SIGSEGV"]


def test_an_epochs_figures_indented_under_it_and_decorated_epoch_headers(tmp_path: Path) -> None:
    # Lasagne's MNIST example (Lasagne/Lasagne issue #525), and `--- epoch 147 ---` headers (StyleTTS)
    path = tmp_path / "lasagne.log"
    path.write_text(
        "".join(
            f"Epoch {e} of 500 took 494.369s\n  training loss:\t\t{loss}\n  validation loss:\t\t{val}\n"
            for e, loss, val in ((1, 2.471961, 2.303229), (2, 2.332428, 2.301815))
        ),
        encoding="utf-8",
    )
    got = steps(read(path)[0])
    assert [(s.step, s.metrics["loss"], s.metrics["eval_loss"]) for s in got] == [
        (1, 2.471961, 2.303229),
        (2, 2.332428, 2.301815),
    ]
    header = tmp_path / "header.log"
    header.write_text(
        "--- epoch 147 ---\ntrain/loss     : 6.1718\n--- epoch 148 ---\ntrain/loss     : 6.0912\n", encoding="utf-8"
    )
    assert [(s.step, s.metrics["loss"]) for s in steps(read(header)[0])] == [(147, 6.1718), (148, 6.0912)]


def test_a_bar_description_that_counts_the_steps_itself(tmp_path: Path) -> None:
    # meta-llama/llama-recipes issue #320: the description holds the step of its total, the bar counts batches
    path = tmp_path / "recipes.log"
    path.write_text(
        "Training Epoch: 1/3, step 13/36 completed (loss: 0.09738539159297943):  33%|███▎      | 3/9 [00:43<01:26, 14.43s/it]\n"
        "Training Epoch: 1/3, step 14/36 completed (loss: 0.17214898765087128):  33%|███▎      | 3/9 [00:45<01:26, 14.43s/it]\n",
        encoding="utf-8",
    )
    got = steps(read(path)[0])
    assert [(s.step, s.metrics["loss"], s.metrics["total_steps"]) for s in got] == [
        (13, 0.09738539159297943, 36),
        (14, 0.17214898765087128, 36),
    ]
    assert "step_time_s" not in got[0].metrics


def test_failure_lines_are_never_steps(tmp_path: Path) -> None:
    # NCCL watchdog lines of two ranks behind a launcher's pid prefix (hiyouga/LLaMA-Factory issue #7396)
    path = tmp_path / "nccl.log"
    path.write_text(
        "".join(
            f"[{pid}] [rank{r}]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank {r}] Exception (either "
            f"an error or timeout) detected by watchdog at work: {work}, last enqueued NCCL work: {work}, last "
            f"completed NCCL work: {work - 1}.\n"
            for pid, r, work in ((80746, 0, 1580), (80748, 1, 1581), (80750, 2, 1582))
        ),
        encoding="utf-8",
    )
    assert steps(read(path)[0]) == []


def test_a_shape_confirmed_by_going_on_lets_its_held_lines_out_first() -> None:
    # two shapes alternate; the counted report confirms progress at once, and `iter 2` goes on from
    # it: `iter 1`, held until then, is not dropped
    lines = [
        "iter 1: acc 0.50",
        "step 1/100 loss 2.0 lr 0.1",
        "iter 2: acc 0.60",
        "step 2/100 loss 1.9 lr 0.1",
    ]
    got = steps(feed(lines, [GenericParser()]))
    accs = [s.metrics["acc"] for s in got if "acc" in s.metrics]
    assert accs == [0.5, 0.6]


def test_a_line_with_a_training_loss_beside_its_eval_loss_is_not_an_evaluation_report() -> None:
    lines = ["Resuming from epoch 5, best_acc: 0.31"] + [f"loss: 0.5{i}, val_loss: 0.3{i}" for i in range(5)]
    got = steps(feed(lines, [GenericParser()]))
    assert [s.metrics["loss"] for s in got] == [0.5, 0.51, 0.52, 0.53, 0.54]


def test_a_non_finite_loss_on_a_line_never_confirmed_is_still_an_event() -> None:
    """DeepSpeech's only report, `Training of Epoch 0 - loss: inf`, is not a step (its shape never
    repeats) but its inf is what the log said: a `nan` event at its line, at the end of the input."""
    from _feed import events, feed, steps

    records = feed(["I STARTING Optimization", "I Training of Epoch 0 - loss: inf", "I FINISHED optimization"])
    assert steps(records) == []
    assert [(e.line, e.message) for e in events(records, "nan")] == [(2, "loss is inf")]


def test_an_evaluation_of_a_held_step_goes_out_with_it() -> None:
    """Ignite's handlers: `Training Results - Epoch[1]`, then `Validation Results - Epoch[1]` (its
    figures are the evaluation's, `eval_*`), each shape confirmed only at epoch 2: one record per epoch."""
    from _feed import feed, steps

    got = steps(
        feed(
            [
                "Training Results - Epoch[1] Avg accuracy: 0.95 Avg loss: 0.16",
                "Time taken by a single epoch calculated by Timer: 73.73",
                "Validation Results - Epoch[1] Avg accuracy: 0.95 Avg loss: 0.15",
                "Training Results - Epoch[2] Avg accuracy: 0.97 Avg loss: 0.13",
                "Validation Results - Epoch[2] Avg accuracy: 0.96 Avg loss: 0.13",
            ]
        )
    )
    assert [(s.step, s.metrics["loss"], s.metrics["eval_loss"], s.metrics["eval_avg_accuracy"]) for s in got] == [
        (1, 0.16, 0.15, 0.95),
        (2, 0.13, 0.13, 0.96),
    ]


def test_a_lone_bracketed_report_against_the_run_total_is_a_step() -> None:
    """clovaai's text-recognition trainer (EasyOCR's too) reports once per validation interval:
    `[0/300000] Train loss: 4.26103, Valid loss: 3.05733`; a Keras epoch's `313/313 ━━━` is not one."""
    from _feed import feed, steps

    got = steps(feed(["[0/300000] Train loss: 4.26103, Valid loss: 3.05733, Elapsed_time: 1.09714"]))
    assert [(s.step, s.metrics["loss"], s.metrics["eval_loss"], s.metrics["total_steps"]) for s in got] == [
        (0, 4.26103, 3.05733, 300000.0)
    ]
    keras = "313/313 ━━━━━━━━━━━━━━━━━━━━ 52s 158ms/step - accuracy: 0.6562 - loss: 0.6014"
    assert steps(feed([keras])) == []


def test_a_step_counter_against_the_run_total_is_not_counted_within_the_epoch() -> None:
    """FastSpeech2's `Epoch [191/1000], Step [115650/608000]` counts the run (608 steps an epoch);
    MindOCR's `epoch: [12/20] step: [700/4468]` counts the epoch's batches."""
    from _feed import feed, steps

    run = steps(
        feed(
            [
                "Epoch [191/1000], Step [115650/608000]: Total Loss: 68.7120, Mel Loss: 0.2892",
                "Epoch [191/1000], Step [115700/608000]: Total Loss: 67.1000, Mel Loss: 0.2801",
            ]
        )
    )
    assert [(s.step, s.metrics["total_steps"]) for s in run] == [(115650, 608000.0), (115700, 608000.0)]
    batches = steps(
        feed(
            [
                "epoch: [12/20] step: [700/4468], loss: 19.327375, lr: 0.000793",
                "epoch: [12/20] step: [800/4468], loss: 14.977672, lr: 0.000792",
            ]
        )
    )
    assert [s.step for s in batches] == [11 * 4468 + 700, 11 * 4468 + 800]


def test_a_batch_counter_of_a_few_epochs_is_counted_within_the_epoch() -> None:
    """`Epoch [2/5], Step [100/600]` counts the epoch's batches (5 epochs: no run-wide reading)."""
    from _feed import feed, steps

    lines = ["Epoch [1/5], Step [600/600], Loss: 0.22"] + [
        f"Epoch [2/5], Step [{n}/600], Loss: 0.2" for n in (100, 200, 400, 600)
    ]
    assert [s.step for s in steps(feed(lines))] == [600, 700, 800, 1000, 1200]


def test_per_device_rates_one_entry_dicts_and_times_over_n_steps() -> None:
    # InternLM's metrics line: a rate per GPU explained in parentheses, a grad norm per parameter group
    assert parse_fields("step=3 loss=11.4 tgs (tokens/gpu/second)=812.2 grad_norm={'0_default': 9.1596} lr=1e-4") == (
        3,
        {"loss": 11.4, "tokens_per_s_per_gpu": 812.2, "grad_norm": 9.1596, "lr": 1e-4},
    )
    # a dict of several entries: its entries under their own names, none under the dict's
    assert parse_fields("step=3 loss=11.4 parts={'a': 1.5, 'b': 2.5}") == (3, {"loss": 11.4, "a": 1.5, "b": 2.5})
    # HugeCTR: the time of the last 1000 iterations, not of one
    assert parse_fields("[02d07h54m43s][HUGECTR][INFO]: Iter: 3000 Time(1000 iters): 5.381177s Loss: 0.133510") == (
        3000,
        {"step_time_s": 0.005381177, "loss": 0.13351},
    )
    assert parse_fields("step 100 loss 2.1 time for 100 steps: 12.5 s") == (100, {"loss": 2.1, "step_time_s": 0.125})
    # not an average's, an ETA's, an evaluation's or a time per step: as printed, or not a step time
    assert parse_fields("step 5 loss 1.0 mean step time (100 steps): 0.5s")[1]["step_time_s"] == 0.5
    assert parse_fields("step 5 loss 1.0 time/iter (100 iters): 0.05s")[1]["step_time_s"] == 0.05
    assert "step_time_s" not in parse_fields("step 5 loss 1.0 eval for 50 batches: 5s")[1]
    assert "step_time_s" not in parse_fields("step 5 loss 1.0 ETA for 1000 steps: 3h")[1]


def test_a_value_named_by_an_evaluation_set_beside_a_loss_is_its_loss() -> None:
    # jlin816/jax-sandbox: `val` alone names the validation loss printed after the training loss
    assert parse_fields("step 300 | elapsed 2.34m | loss: 3.16 | val: 2.89")[1] == {
        "elapsed": 2.34,
        "loss": 3.16,
        "eval_loss": 2.89,
    }
    # beside an accuracy it may be the set's accuracy: not read as a loss, kept under its name
    beside_acc = parse_fields("step 300 | loss: 3.16 | acc: 0.91 | val: 0.88")[1]
    assert "eval_loss" not in beside_acc and beside_acc["val"] == 0.88
    # several sets (DGL's SAGN: `Train: 0.7351, Val: 0.7079, Test: 0.6753`): each under its own name
    for other in (
        "step 5 loss 1.2 dev_bleu 20 dev 25.1",
        "step 5 loss 1.2 test 0.8 auc 0.9",
        "step 5 loss 1 Eval 300 samples",
    ):
        assert "eval_loss" not in parse_fields(other)[1], other  # another figure of the set, or a count
    several = parse_fields("Epoch 26, Times(s): 11.3853, Train: 0.7351, Val: 0.7079, Test: 0.6753, Val loss: 0.9427")[1]
    assert (several["val"], several["test"], several["eval_loss"]) == (0.7079, 0.6753, 0.9427)


def test_abbreviated_labels_and_a_batch_time_with_its_average() -> None:
    # LeRobot: `ep` counts episodes beside its `epch`; `updt_s` is the update's time, `grdn` the grad norm
    assert parse_fields("step:200 smpl:6K ep:9 epch:0.03 loss:0.52 grdn:1.5 lr:2.5e-06 updt_s:4.478 data_s:0.038") == (
        200,
        {
            "smpl": 6000.0,
            "loss": 0.52,
            "grad_norm": 1.5,
            "lr": 2.5e-06,
            "step_time_s": 4.478,
            "data_time_s": 0.038,
            "epoch": 0.03,
        },
    )
    # an epoch of its own name is no override of `ep`'s: `epochs: 100` is the total
    assert parse_fields("ep: 3, loss: 0.5, epochs: 100") == (3, {"loss": 0.5, "epoch": 3.0})
    # dlib's trainer: the number sign after the counter's name
    assert parse_fields("step#: 23016  learning rate: 0.0001  average loss: 1.36526")[0] == 23016
    # Pointcept: `Batch` is the batch's time when a running average follows it, not a batch counter
    got = parse_fields("Train: [16/170][700/1090] Data 0.008 (1.045) Batch 0.499 (1.872) Remain 87:29:26 loss: 3.6729")
    assert got[1]["step_time_s"] == 0.499 and got[1]["data_time_s"] == 0.008 and got[1]["loss"] == 3.6729


def test_a_one_off_evaluation_at_a_step_of_confirmed_progress_is_read() -> None:
    # a from-scratch pretraining loop: `[eval]` every few thousand steps, its shape printed once
    lines = [
        "step   47990 | loss 13.9239 | lr 1.78e-04 | grad 0.734 | 37.2k tok/s | mfu 37.40%",
        "step   48000 | loss 13.7167 | lr 1.78e-04 | grad 0.728 | 37.2k tok/s | mfu 37.40%",
        "  [eval] step   48000 | val_loss 4.0749",
        "step   48010 | loss 13.6 | lr 1.78e-04 | grad 0.7 | 37.2k tok/s | mfu 37.40%",
    ]
    got = {s.step: s.metrics for s in steps(feed(lines, [GenericParser()]))}
    assert got[48000]["eval_loss"] == 4.0749 and got[48000]["grad_norm"] == 0.728
    assert "eval_loss" not in got[48010]


def test_the_counter_a_line_opens_with_over_a_batch_size() -> None:
    # a video interpolation trainer: `[step/total] DOMAIN | loss ... | batch 16`, 16 the batch size
    lines = [
        "[000000/50000] X4K    | loss 0.0595 | VRAM 1.4/15.9GB (9%) | GPU 92% | 0.12 it/s | ETA 6982.1 min | batch 16",
        "[000500/50000] X4K    | loss 0.0488 | VRAM 9.8/15.9GB (62%) | GPU 0% | 3.04 it/s | ETA 271.3 min | batch 16",
        "[001000/50000] WMS    | loss 0.0300 | VRAM 9.8/15.9GB (62%) | GPU 98% | 3.14 it/s | ETA 259.9 min | batch 16",
    ]
    got = [(s.step, s.metrics["loss"], s.metrics["total_steps"]) for s in steps(feed(lines, [GenericParser()]))]
    assert got == [(0, 0.0595, 50000.0), (500, 0.0488, 50000.0), (1000, 0.03, 50000.0)]


def test_a_month_day_stamp_and_the_main_logger_are_prefix() -> None:
    # a GNN recommender's logging (`datefmt='%m-%d %H:%M:%S'`, `%(name)s` of the script): `Val.` opens an evaluation
    from trainwatch.parsers.fields import read_fields

    got = read_fields("09-02 20:39:12 - INFO - __main__ - Val. Total Loss: 1.79, Rec.: 1.55, KL: 0.24, AUC: 49.90%")
    assert got is not None and got.metrics == {
        "eval_loss": 1.79,
        "eval_rec": 1.55,
        "eval_kl": 0.24,
        "eval_auc_pct": 49.9,
    }


def test_new_shapes_cost_linear_time_on_long_lines() -> None:
    """A 200 KB line of a repeated new shape is read in time linear in its length (a quadratic rule
    took seconds): Pointcept's batch time with its average, SuperGradients' tree entries."""
    import time

    from trainwatch.parsers.fields import read_fields
    from trainwatch.parsers.formats.super_gradients import SuperGradientsParser

    def cost(text: str) -> float:
        t0 = time.perf_counter()
        read_fields(text)
        feed(["SUMMARY OF EPOCH 1", text], [SuperGradientsParser()])
        return time.perf_counter() - t0

    small, big = cost("Batch 0.499 (1.872) " * 500), cost("Batch 0.499 (1.872) " * 10_000)
    assert big < max(0.5, 60 * small)
    small, big = cost("├── " + "a (b) " * 500), cost("├── " + "a (b) " * 10_000)
    assert big < max(0.5, 60 * small)

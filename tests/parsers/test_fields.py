"""The field reader and the generic layer on the syntaxes of issue 14 (lines in the styles real scripts print:
karpathy/nanoGPT, HF Trainer, pytorch/examples imagenet, TF1 Estimator, mlx-lm, PyG examples, tqdm without bar
glyphs, stable-baselines3, skorch)."""

from __future__ import annotations

import math

import pytest
from _feed import events, feed, steps

from trainwatch.parsers.fields import prefix_end, read_fields


def _steps(lines: list[str]) -> list[tuple[int | None, dict[str, float]]]:
    return [(s.step, dict(s.metrics)) for s in steps(feed(lines))]


def test_space_separated_key_value() -> None:
    assert _steps(["step 0 loss 1.0098", "step 1 loss 0.9871"]) == [(0, {"loss": 1.0098}), (1, {"loss": 0.9871})]
    got = _steps(["it 12 | loss 2.31 | grad_norm 1.10 | 123ms/it", "it 13 | loss 2.30 | grad_norm 1.05 | 121ms/it"])
    assert got[0] == (12, {"loss": 2.31, "grad_norm": 1.1, "step_time_s": pytest.approx(0.123)})


def test_nanogpt_line_with_one_more_field_keeps_every_field() -> None:
    got = _steps(
        [
            "iter 120: loss 2.4410, time 61.02ms, data_time 3.11ms, mfu 14.20%",
            "iter 130: loss 2.4311, time 60.80ms, data_time 3.02ms, mfu 14.25%",
        ]
    )
    assert got[0][0] == 120
    assert got[0][1] == {
        "loss": 2.441,
        "step_time_s": pytest.approx(0.06102),
        "data_time_s": pytest.approx(0.00311),
        "mfu_pct": 14.2,
    }


def test_json_lines() -> None:
    got = _steps(['{"step": 10, "loss": 2.1, "lr": 0.0003}', '{"step": 20, "loss": 2.0, "lr": 0.0003}'])
    assert got == [(10, {"loss": 2.1, "lr": 0.0003}), (20, {"loss": 2.0, "lr": 0.0003})]


def test_hf_dict_with_bare_nan_is_kept_and_raises_a_nan_event() -> None:
    records = feed(
        [
            "{'loss': 1.95, 'grad_norm': 3.1, 'learning_rate': 2e-05, 'epoch': 0.2}",
            "{'loss': 1.93, 'grad_norm': nan, 'learning_rate': 2e-05, 'epoch': 0.4}",
        ]
    )
    last = steps(records)[-1].metrics
    assert last["loss"] == 1.93 and math.isnan(last["grad_norm"]) and last["lr"] == 2e-05 and last["epoch"] == 0.4
    assert [e.data["metric"] for e in events(records, "nan")] == ["grad_norm"]


def test_counters_in_brackets_running_averages_and_epoch_counting() -> None:
    got = _steps(["[  10/1000] train_loss: 2.1 time/step: 0.21s", "[  20/1000] train_loss: 2.0 time/step: 0.20s"])
    assert got[0] == (10, {"loss": 2.1, "step_time_s": 0.21, "total_steps": 1000.0})
    # pytorch/examples imagenet: the current value, not the running average; batches counted across epochs
    got = _steps(
        [
            "Epoch: [0][ 40/2502]\tTime  0.412 ( 0.530)\tLoss 5.1 (5.4)",
            "Epoch: [0][ 50/2502]\tTime  0.410 ( 0.520)\tLoss 5.0 (5.3)",
            "Epoch: [1][ 40/2502]\tTime  0.409 ( 0.500)\tLoss 4.1 (4.4)",
        ]
    )
    assert got == [
        (40, {"step_time_s": 0.412, "loss": 5.1, "epoch": 0.0}),
        (50, {"step_time_s": 0.41, "loss": 5.0, "epoch": 0.0}),
        (2542, {"step_time_s": 0.409, "loss": 4.1, "epoch": 1.0}),
    ]


def test_tensorflow_mlx_and_one_line_per_epoch() -> None:
    got = _steps(
        ["INFO:tensorflow:loss = 0.91, step = 1200 (0.982 sec)", "INFO:tensorflow:loss = 0.88, step = 1300 (0.975 sec)"]
    )
    assert [(s, m["loss"]) for s, m in got] == [(1200, 0.91), (1300, 0.88)]
    got = _steps(["Iter 30: Train loss 1.872, It/sec 2.11", "Iter 40: Train loss 1.853, It/sec 2.10"])
    assert got[0] == (30, {"loss": 1.872, "step_time_s": pytest.approx(1 / 2.11)})
    got = _steps(["Epoch: 007, Loss: 0.9120, Train: 0.77", "Epoch: 008, Loss: 0.9001, Train: 0.78"])
    assert got[0] == (7, {"loss": 0.912, "train": 0.77, "epoch": 7.0})


def test_tqdm_without_bar_glyphs_glued_to_the_next_message() -> None:
    # Lightning's bar (epochs from 0: step 3 x 64 + 64); any other bar is read generically.
    got = _steps(["Epoch 3: 100% 64/64 [01:10<00:00, 1.09s/it, loss=0.112, lr=0.0002]Saving model to out/"])
    assert got == [(256, {"loss": 0.112, "lr": 0.0002, "step_time_s": 1.09, "epoch": 3.0})]
    got = _steps(["Steps:  12%|█▏        | 60/500 [01:10<08:40, 1.18s/it, loss=0.208, lr=0.0001]Saving state to out/"])
    assert got == [(60, {"loss": 0.208, "lr": 0.0001, "step_time_s": 1.18, "total_steps": 500.0})]


def test_units_scales_and_synonyms() -> None:
    r = read_fields("step 5 | time/batch = 0.37s | 512K tokens/s | training_loss 2.3 | lr:(3.0e-04,)")
    assert r is not None and r.step == 5
    assert r.metrics == {"step_time_s": 0.37, "tokens_per_s": 512000.0, "loss": 2.3, "lr": 0.0003}
    r = read_fields("step 6 | step_loss 2.2 | total_loss 2.4 | 2.05K ms")
    assert r is not None and r.metrics["loss"] == 2.2 and r.metrics["step_time_s"] == pytest.approx(2.05)


def test_logging_prefix_never_becomes_a_metric() -> None:
    for text in (
        "2024-01-02 10:11:12,123 - INFO - train.py:88 - step 5 loss 2.1",
        "I1124 10:00:00.123456 140 train.py:88] step 5 loss 2.1",
        "[2024-01-02 10:11:12] [INFO] [trainer.py:201:train] step 5 loss 2.1",
    ):
        r = read_fields(text)
        assert r is not None and r.step == 5 and r.metrics == {"loss": 2.1}, text
    assert prefix_end("INFO:tensorflow:loss = 0.91") == len("INFO:tensorflow:")


def test_config_dumps_and_one_off_lines_give_no_steps() -> None:
    lines = [
        "Namespace(lr=0.001, batch_size=32, max_steps=1000, seed=42, port=29500)",
        "  lr ........................ 0.001",
        "--train_steps = 20000",
        "Saving checkpoint at 2 epochs",
        "2024-05-01 10:00:00 started on node gpu-12 pid 4411",
        "Resuming from step 5000, loss 2.3",
    ]
    assert _steps(lines) == []


def test_a_table_of_counts_is_no_table_of_steps() -> None:
    # a CI summary: a `Steps` column and `Errors`, no figure of training
    assert _steps(["Name    Steps    Errors", "build   12       0", "test    40       3"]) == []


def test_stable_baselines3_block_and_skorch_table() -> None:
    block = [
        "-----------------------------------------",
        "| time/                   |             |",
        "|    fps                  | 1284        |",
        "|    total_timesteps      | 4096        |",
        "| train/                  |             |",
        "|    learning_rate        | 0.0003      |",
        "|    loss                 | 6.04        |",
        "-----------------------------------------",
    ]
    assert _steps(block) == [(4096, {"fps": 1284.0, "lr": 0.0003, "loss": 6.04})]
    table = [
        "  epoch    train_loss    valid_loss     dur",
        "-------  ------------  ------------  ------",
        "      1        4.4168        3.0788  0.0292",
        "      2        2.0120        0.4565  0.0270",
    ]
    assert _steps(table)[1] == (2, {"epoch": 2.0, "loss": 2.012, "eval_loss": 0.4565, "dur": 0.027})


def test_a_field_that_appears_mid_run_keeps_the_line() -> None:
    # MetricLogger (LLaMA2-Accessory): grad_norm is printed from iteration 40 on, one line of the new shape.
    got = _steps(
        [
            "Epoch: [0]  [20/1504]  lr: 0.000000  closs: 1.5362 (1.5382)  time: 4.5562  data: 0.0002  max mem: 39297",
            "Epoch: [0]  [30/1504]  lr: 0.000000  closs: 1.5318 (1.5380)  time: 4.5658  data: 0.0002  max mem: 39297",
            "Epoch: [0]  [40/1504]  lr: 0.000003  closs: 1.5428 (1.5405)  grad_norm: 5.2397 (5.2397)  time: 4.5",
        ]
    )
    assert [s for s, _ in got] == [20, 30, 40]
    assert got[2][1]["grad_norm"] == 5.2397 and got[2][1]["lr"] == 0.000003
    assert got[0][1]["data_time_s"] == 0.0002 and got[0][1]["step_time_s"] == 4.5562


def test_iterations_within_epochs_counted_on_and_shapes_stable_across_number_forms() -> None:
    # YOLOX: `epoch: e/E, iter: i/n` -> iteration (e - 1) x n + i
    got = _steps(
        [
            "2023-08-10 08:54:48 | INFO | yolox.core.trainer:253 - epoch: 1/300, iter: 10/12, mem: 2956Mb, "
            "iter_time: 0.771s, data_time: 0.001s, total_loss: 5.5, lr: 4.340e-04",
            "2023-08-10 08:54:53 | INFO | yolox.core.trainer:253 - epoch: 2/300, iter: 10/12, mem: 2956Mb, "
            "iter_time: 0.383s, data_time: 0.001s, total_loss: 4.8, lr: 8.680e-04",
        ]
    )
    assert [s for s, _ in got] == [10, 22]
    assert got[1][1]["loss"] == 4.8 and got[1][1]["step_time_s"] == 0.383 and got[1][1]["total_steps"] == 3600
    # speechbrain: `9.45e-01,` and `35.42,` mask alike, so one line per epoch repeats its shape
    got = _steps(
        [
            "speechbrain.utils.train_logger - epoch: 1, lr: 1.00e+00 - train loss: 9.45e-01 - valid loss: 1.23, valid CER: 35.42, valid WER: 39.14",
            "speechbrain.utils.train_logger - epoch: 2, lr: 1.00e+00 - train loss: 7.26e-01 - valid loss: 1.27, valid CER: 3.1e+01, valid WER: 39.0",
        ]
    )
    assert [(s, m["loss"], m["eval_loss"]) for s, m in got] == [(1, 0.945, 1.23), (2, 0.726, 1.27)]


# --------------------------------------------------------------------------- families added with the corpus
def test_values_inside_printed_tensors_and_keyless_throughput() -> None:
    r = read_fields("loss tensor(0.6924, device='cuda:0', dtype=torch.float16, grad_fn=<MeanBackward0>)")
    assert r is not None and r.metrics == {"loss": 0.6924}  # `cuda:0` is a device, not a metric
    r = read_fields("Train: 1 [ 350/5004 (  7%)]  Loss:  6.732388 (6.8414)  Time: 1.271s,  201.43/s  LR: 2.133e-02")
    assert r is not None and (r.epoch, r.inner, r.inner_total) == (1.0, 350, 5004)
    assert r.metrics == {"loss": 6.732388, "step_time_s": 1.271, "samples_per_s": 201.43, "lr": 0.02133}


def test_rates_and_counters_named_in_labels() -> None:
    r = read_fields(
        "I1002 21:43:51.424899 140400640460352 logging_writer.py:35] [1000] steps_per_second=1.760847, "
        "train_learning_rate=0.97, train_loss=6.5252"
    )
    assert r is not None and r.step == 1000
    assert r.metrics == {"step_time_s": pytest.approx(1 / 1.760847), "lr": 0.97, "loss": 6.5252}
    r = read_fields("'loss': -0.0, 'epoch': 0.0, 'global_step/max_steps': '5/3766', 'train_speed(iter/s)': 0.056099")
    assert r is not None and (r.step, r.total) == (5, 3766)
    assert r.metrics["step_time_s"] == pytest.approx(17.826, rel=1e-3)
    r = read_fields("Iter 30: Train loss 1.872, It/sec 2.11")  # `It/sec` is a rate, not a counter
    assert r is not None and r.step == 30 and r.metrics["step_time_s"] == pytest.approx(1 / 2.11)
    r = read_fields("completed step: 9, seconds: 1.341, TFLOP/s/device: 257.929, Tokens/s/device: 36653.244")
    assert r is not None and r.metrics["tokens_per_s_per_gpu"] == 36653.244 and r.metrics["tflops"] == 257.929


def test_a_loss_printed_again_and_again_without_any_counter_is_progress() -> None:
    lines = [f"training loss: {v}" for v in (1.30, 1.33, 1.28, "nan")] + ["validation loss: 2.07"]
    got = _steps(lines)
    assert got == [
        (None, {"loss": 1.30}),
        (None, {"loss": 1.33}),
        (None, {"loss": 1.28}),
        (None, {"loss": pytest.approx(math.nan, nan_ok=True)}),
        (None, {"eval_loss": 2.07}),
    ]
    assert events(feed(lines), "nan")
    assert _steps(["training loss: 1.30", "training loss: 1.33"]) == []  # twice is not yet a habit
    counted = ["step 1 loss 2.0", "step 2 loss 1.9", "running loss: 1.95", "running loss: 1.90", "running loss: 1.85"]
    assert [s for s, _ in _steps(counted)] == [1, 2]  # a counted source keeps its counted steps


def test_a_message_printed_over_a_bar_is_read_too() -> None:
    lines = [
        "training loss: 1.30",
        "training loss: 1.33",
        "training:  12%|█▏        | 11873/100000 [1:01:50<7:39:02,  3.20it/s]training loss: 4.718350410461426",
    ]
    got = _steps(lines)
    assert (11873, {"step_time_s": pytest.approx(1 / 3.2), "total_steps": 100000.0}) in got
    assert (None, {"loss": 4.718350410461426}) in got


def test_weak_names_are_the_loss_only_where_no_loss_is_printed() -> None:
    # OpenNMT's `xent` and maskrcnn-benchmark's `losses` are the training loss on their lines...
    xent = read_fields("Step 2250/200000; acc:  27.47; ppl: 57.52; xent: 4.05; lr: 0.00028; 6641 sec")
    assert xent is not None and xent.step == 2250 and xent.metrics["loss"] == 4.05
    nan = read_fields("iteration : 7, losses : nan")
    assert nan is not None and nan.step == 7 and math.isnan(nan.metrics["loss"])
    # ...but beside a printed `loss` they stay what they are: one term of it
    both = read_fields("step 10 loss 2.50 ce 2.10 grad_scale 1024")
    assert both is not None and both.metrics["loss"] == 2.5 and both.metrics["ce"] == 2.1
    assert both.metrics["loss_scale"] == 1024


def test_bracketed_counters_and_rates_of_updates() -> None:
    # MXNet's Speedometer (sockeye): `Epoch[0] Batch [3150]`, and updates/sec is the step rate
    r = read_fields(
        "[2019-03-17:14:36:36:INFO:sockeye.training:__call__] Epoch[0] Batch [3150]\tSpeed: 71.18 samples/sec "
        "1971.60 tokens/sec 1.27 updates/sec\tperplexity=29.694005"
    )
    assert r is not None and (r.epoch, r.inner) == (0, 3150)
    assert r.metrics["samples_per_s"] == 71.18 and r.metrics["tokens_per_s"] == 1971.6
    assert r.metrics["step_time_s"] == pytest.approx(1 / 1.27)
    # Swin / ConvNeXt: `Train: [29/300][2670/2859]` is the epoch of its total, then the batch
    swin = read_fields("INFO Train: [29/300][2670/2859]\teta 0:01:24 lr 0.000872\t wd 0.0500\ttime 0.4283 (0.4481)")
    assert swin is not None and (swin.epoch, swin.epoch_total, swin.inner, swin.inner_total) == (29, 300, 2670, 2859)
    # a global counter beats a per-report one; a step beats micro-batch iterations
    parlai = read_fields("{'exs': 1134, 'loss': 0.949, 'updates': 81, 'lr': 0.007, 'total_train_updates': 151}")
    assert parlai is not None and parlai.step == 151
    litgpt = read_fields("Ep 1 | iter 120 | step 30: loss train (curr): 1.162 | iter time: 164.51 ms")
    assert litgpt is not None and litgpt.step == 30
    # `key is value`
    horovod = read_fields("Total loss is  29.862733840942383 ETA is  7:57:00.494483")
    assert horovod is not None and horovod.metrics == {"loss": 29.862733840942383}


def test_epoch_summary_lines_are_not_steps_once_batches_are_counted() -> None:
    lines = [f"INFO:root:Epoch[{e}] Batch [{b}]  Speed: 1{e}{b}.5 samples/sec" for e in (0, 1) for b in (100, 200, 300)]
    lines.insert(3, "INFO:root:Epoch[0] Time cost=28.650")
    assert [s for s, _ in _steps(lines)] == [100, 200, 300, 100, 200, 300]


def test_a_line_that_reports_an_evaluation_gives_the_evaluation_loss() -> None:
    valid = read_fields("Valid Summary | Epoch 1 | ce=6.651 | ppl=776.985 | duration=234.961")  # audiocraft
    assert valid is not None and valid.metrics["eval_loss"] == 6.651 and "loss" not in valid.metrics
    train = read_fields("Train Summary | Epoch 1 | lr=1.95E-01 | grad_norm=3.172E+00 | grad_scale=65536.000 | ce=6.892")
    assert train is not None and train.metrics["loss"] == 6.892 and train.metrics["loss_scale"] == 65536
    clip = read_fields("Eval Epoch: 12 image_to_text_mean_rank: 927.4931\tclip_val_loss: 6.9795\tepoch: 12.0000")
    assert clip is not None and clip.metrics["eval_loss"] == 6.9795
    deit = read_fields('{"train_lr": 7.89e-05, "train_loss": 3.1954, "test_loss": 0.9325, "epoch": 250}')
    assert deit is not None and deit.metrics["loss"] == 3.1954 and deit.metrics["eval_loss"] == 0.9325


def test_full_width_punctuation_chinese_counters_and_bracketed_totals() -> None:
    zh = read_fields("训练次数：100, Loss：1.9817659854888916")
    assert zh is not None and zh.step == 100 and zh.metrics == {"loss": 1.9817659854888916}
    test = read_fields("整体测试集上的Loss: 262.62")
    assert test is not None and test.metrics == {"eval_loss": 262.62}
    painn = read_fields("Epoch [648/650], Validation Loss: 0.0221, Train Loss: 0.0136")
    assert painn is not None and (painn.epoch, painn.epoch_total) == (648, 650)
    assert painn.metrics == {"eval_loss": 0.0221, "loss": 0.0136}
    avg = read_fields("Epoch 148, Step 25, avg loss so far is 0.021692492067813873")
    assert avg is not None and avg.step == 25 and avg.metrics == {"loss": 0.021692492067813873}
    vissl = read_fields("Rank: 0; [ep: 0] iter: 57; lr: 0.1; loss: 6.9; btime(ms): 192;")
    assert vissl is not None and vissl.metrics["step_time_s"] == 0.192


def test_a_drawn_bar_is_one_shape_whatever_its_fill() -> None:
    from trainwatch.parsers.fields import shape_of

    a = shape_of("| Progress [                    ][ 1.29%] | LR 0.001474 | Loss   4.9859 (  5.6445) |")
    b = shape_of("| Progress [##########          ][55.17%] | LR 0.001495 | Loss   4.7709 (  5.8287) |")
    assert a == b


def test_a_counter_in_parentheses_after_its_label() -> None:
    r = read_fields("Epoch... (39/116 | Loss: 0.18779703974723816)")  # diffusers' flax text-to-image script
    assert r is not None and (r.epoch, r.epoch_total) == (39, 116) and r.metrics == {"loss": 0.18779703974723816}


def test_a_duration_in_parts_is_one_value_in_seconds() -> None:
    # CatBoost's `remaining: 1m 10s`, humanized ETAs: before, `1m` was read as 1.0 and `10s` as a bare step time
    reading = read_fields("0:\tlearn: 0.6569860\ttest: 0.6570642\ttotal: 70.1ms\tremaining: 1m 10s")
    assert reading is not None
    assert reading.metrics["remaining_s"] == 70.0
    assert reading.metrics["total_s"] == pytest.approx(0.0701)
    assert "step_time_s" not in reading.metrics
    reading = read_fields("step 5 | loss 2.1 | eta: 2h 5m | elapsed 1h2m3.5s | ETA 3d 4h")
    assert reading is not None
    assert (reading.step, reading.metrics["loss"]) == (5, 2.1)
    assert reading.metrics["eta_s"] == 2 * 3600 + 5 * 60
    assert reading.metrics["elapsed_s"] == 3723.5
    assert "step_time_s" not in reading.metrics


@pytest.mark.parametrize(
    ("line", "metrics"),
    [
        # smaller unit first: not one duration; read as before this reading of parts
        ("step 5 loss 2.1 took 10s 1m", {"loss": 2.1, "step_time_s": 10.0}),
        ("step 5 loss 2.1 time 1.5m 10s", {"loss": 2.1, "step_time_s": 1.5}),  # a fraction before the last part
        ("step 5 loss 2.1 time 1.5s", {"loss": 2.1, "step_time_s": 1.5}),  # one part
    ],
)
def test_what_is_not_a_duration_in_parts_reads_as_before(line: str, metrics: dict[str, float]) -> None:
    reading = read_fields(line)
    assert reading is not None
    assert reading.metrics == metrics


def test_the_first_line_is_read_when_its_durations_print_other_units_later() -> None:
    # As CatBoost prints them (issue 541): `remaining: 1m 10s` on the first line, `33s` after; `total:
    # 70.1ms`, then `3.7s` (CatBoost's own lines are `gbdt`'s: the same times in a loop of one's own)
    got = _steps(
        [
            "iter 0:\ttrain_loss: 0.6569860\tval: 0.6570642\ttotal: 70.1ms\tremaining: 1m 10s",
            "iter 100:\ttrain_loss: 0.1697219\tval: 0.1530068\ttotal: 3.7s\tremaining: 33s",
        ]
    )
    assert [step for step, _ in got] == [0, 100]
    assert got[0][1]["remaining_s"] == 70.0
    assert got[1][1]["total_s"] == 3.7


def test_a_counter_named_for_the_whole_run_is_the_step_across_epochs() -> None:
    """YOLO v1 (PR #88): `total step: [n/M]` counts the run, `batch step [i/40]` the epoch."""
    got = _steps(
        [
            "epoch: [1/16000], total step: [30/640000], batch step [30/40], lr: [0.001], total_loss: 578.5856",
            "epoch: [1/16000], total step: [40/640000], batch step [40/40], lr: [0.001], total_loss: 234.9386",
            "epoch: [2/16000], total step: [50/640000], batch step [10/40], lr: [0.001], total_loss: 93.6655",
        ]
    )
    assert [(step, m["loss"], m["total_steps"]) for step, m in got] == [
        (30, 578.5856, 640000.0),
        (40, 234.9386, 640000.0),
        (50, 93.6655, 640000.0),
    ]


def test_a_step_time_printed_as_a_clock() -> None:
    """llama.cpp's `dt=00:04:59`; `time` and `eta` as clocks stay unread (they are as often the time so far)."""
    assert read_fields("train_opt_callback: iter=    70 loss=4.948237 dt=00:04:59 eta=03:29:33 |--->").metrics == {
        "loss": 4.948237,
        "step_time_s": 299.0,
    }
    assert read_fields("step 5 loss 1.0 time: 0:12:03 eta 1:00:00").metrics == {"loss": 1.0}


def test_humanized_numbers_keep_their_line_shape_as_they_grow() -> None:
    """picotron: `Tokens/s:  199.02`, then `1.68K`, then `10.61K` is one shape (every step is read)."""
    got = _steps(
        [
            "Step: 1     | Loss: 10.9062 | Tokens/s:  199.02 | Tokens/s/GPU:   24.88",
            "Step: 2     | Loss: 8.5469 | Tokens/s:   1.68K | Tokens/s/GPU:  209.63",
            "Step: 3     | Loss: 8.9219 | Tokens/s:  10.61K | Tokens/s/GPU:   1.33K",
        ]
    )
    assert [(step, m["tokens_per_s"]) for step, m in got] == [(1, 199.02), (2, 1680.0), (3, 10610.0)]


def test_openpcdet_accumulated_iteration_and_a_clock_that_drops_its_hours() -> None:
    """OpenPCDet (PR #1229): `Acc_iter` counts the run; the ETA `[00:04/1:05:18]`, then `[00:15/04:48]`."""
    got = _steps(
        [
            "Train:    1/3 ( 33%) [   0/323 (  0%)]  Loss: 516.7 (517.)  LR: 1.000e-04  Time cost: 00:04/21:46 "
            "[00:04/1:05:18]  Acc_iter 1           Batch time: 4.04(4.04)",
            "Train:    1/3 ( 33%) [  49/323 ( 15%)]  Loss: 36.77 (81.7)  LR: 1.351e-04  Time cost: 00:15/01:25 "
            "[00:15/04:48]  Acc_iter 50          Batch time: 0.31(0.31)",
            "Train:    1/3 ( 33%) [  99/323 ( 31%)]  Loss: 23.51 (54.8)  LR: 2.377e-04  Time cost: 00:27/01:00 "
            "[00:27/03:55]  Acc_iter 100         Batch time: 0.20(0.27)",
        ]
    )
    assert [(step, m["loss"], m["step_time_s"]) for step, m in got] == [
        (1, 516.7, 4.04),
        (50, 36.77, 0.31),
        (100, 23.51, 0.2),
    ]


def test_a_namespace_only_groups_a_name() -> None:
    """`_base/lr`, `optim/lr`, `_timers/batch_time` are the learning rate and the step time; a
    group that says whose figure it is (`G/loss`, `val/loss`) stays part of the name."""
    from trainwatch.names import field_name

    assert [field_name(x, "") for x in ("_base/lr", "optim/lr", "_timers/batch_time", "perf/step_time")] == [
        "lr",
        "lr",
        "step_time_s",
        "step_time_s",
    ]
    assert [field_name(x, "") for x in ("G/loss", "val/loss", "rollout/ep_rew_mean", "timers/forward")] == [
        "g_loss",
        "eval_loss",
        "rollout_ep_rew_mean",
        "timers_forward",
    ]
    # a criterion's class groups its total and its terms (SuperGradients' `PPYoloELoss/loss`); not a loss
    # named for a model part (`G/loss`, above) nor a group of groups
    assert [field_name(x, "") for x in ("PPYoloELoss/loss", "PPYoloELoss/loss_cls", "a/PPYoloELoss/loss")] == [
        "loss",
        "loss_cls",
        "a_ppyolo_eloss_loss",
    ]
    assert field_name("Valid_PPYoloELoss/loss", "") != "loss"  # a validation's criterion


def test_the_only_loss_a_line_prints_is_its_loss() -> None:
    """CLOCs: `now it is 50 steps  and the cls_loss is : tensor(3572.3164, ...)`: the label before the verb,
    and a line's only `*_loss` is its loss; not one of several terms, nor an evaluation's or a best one."""
    got = _steps(
        [
            "now it is 50 steps  and the cls_loss is : tensor(3572.3164, device='cuda:0') learning_rate:  0.0003",
            "now it is 100 steps  and the cls_loss is : tensor(1367.9292, device='cuda:0') learning_rate:  0.0003",
        ]
    )
    assert [(step, m["loss"]) for step, m in got] == [(50, 3572.3164), (100, 1367.9292)]
    assert "loss" not in read_fields("step 3 cls_loss 0.5 box_loss 0.3").metrics
    assert "loss" not in read_fields("step 3 valid_best_loss 0.5").metrics
    # AcademiCodec: the generator's total beside its terms is the loss (not when a discriminator's total is beside it)
    got = read_fields(
        "<epoch:8, iter:7560, total_loss_g:55226.875, adv_g_loss:1.9175, feat_loss:55178.0977, loss_d:0.508>"
    )
    assert got is not None and got.metrics["loss"] == 55226.875
    assert "loss" not in read_fields("step 3 total_loss_g 1.0 total_loss_d 2.0").metrics


def test_a_step_line_then_its_figures_on_the_next_line() -> None:
    """TI-SV: `current step: 94th step`, then `batch loss:3.179167` on the line under it."""
    got = _steps(
        [
            "current step: 94th step",
            "batch loss:3.179167",
            "current step: 95th step",
            "batch loss:3.3256493",
            "current step: 96th step",
            "batch loss:3.1144474",
        ]
    )
    assert [(step, m["loss"]) for step, m in got] == [(94, 3.179167), (95, 3.3256493), (96, 3.1144474)]


def test_a_block_of_loss_terms_keeps_them_apart() -> None:
    """Coqui's step block prints each loss term on a line of its own under its header: a line of one
    term is not a report of its own, and the block's `loss` stays the loss."""
    got = _steps(
        [
            " --> TIME: 2023-06-28 10:55:13 -- STEP: 0/3984 -- GLOBAL_STEP: 0",
            "     | > loss_text_ce: 0.22755847871303558  (0.22755847871303558)",
            "     | > loss_mel_ce: 5.383345127105713  (5.383345127105713)",
            "     | > loss: 0.11689382791519165  (0.11689382791519165)",
            " --> TIME: 2023-06-28 10:55:40 -- STEP: 200/3984 -- GLOBAL_STEP: 200",
            "     | > loss_text_ce: 0.21218353509902954  (0.22)",
            "     | > loss_mel_ce: 4.792850971221924  (4.9)",
            "     | > loss: 0.1042715534567833  (0.11)",
        ]
    )
    assert [(s, m["loss"], m["loss_text_ce"]) for s, m in got] == [
        (0, 0.11689382791519165, 0.22755847871303558),
        (200, 0.1042715534567833, 0.21218353509902954),
    ]


def test_labels_in_brackets_and_loguru_locations() -> None:
    """LION's loguru lines: `name:function:line - ` is the logging prefix, `[Loss] nan` and
    `[step]  1574` are labels in brackets; a bracketed log level is not."""
    r = read_fields(
        "2023-01-25 01:03:05.674 | INFO     | trainers.base_trainer:train_epochs:256 - [R0] | E104 iter[ 14/ 15] "
        "| [Loss] nan | [step]  1574 | [url] none"
    )
    assert r is not None and r.step == 1574 and math.isnan(r.metrics["loss"]) and "train_epochs" not in r.metrics
    assert read_fields("[INFO] 3 workers started") is None


def test_gpt2_train_py_counter_and_elapsed() -> None:
    """nshepperd's gpt-2 `train.py` and gpt-2-simple: `[10 | 28.41] loss=2.81 avg=2.81` (pasted quoted)."""
    got = _steps(["> [1 | 22.35] loss=3.69 avg=3.69", "> [2 | 40.40] loss=3.48 avg=3.58"])
    assert [(step, m["loss"]) for step, m in got] == [(1, 3.69), (2, 3.48)]
    # the dataset loading bar before it (one item) is not a step
    assert _steps(["> 100%|██████████| 1/1 [00:00<00:00, 19.27it/s]"]) == []


def test_a_measure_of_steps_is_not_their_count() -> None:
    """rl_games: `fps step: 3574 ... epoch: 1248/15000`: `fps step` is a rate; the epoch is the counter."""
    r = read_fields(
        "fps step: 3574 fps step and policy inference: 3501 fps total: 3320 epoch: 1248/15000 frames: 5107712"
    )
    assert r is not None and r.step is None and r.epoch == 1248
    assert read_fields("time per step: 0.31 loss 2.0").step is None


def test_what_the_review_found_is_read_as_a_person_reads_it() -> None:
    """Shared rules and what they must leave alone (the review of this change)."""
    from trainwatch.names import field_name

    m = read_fields("Step 100/1000 | lr 0.0001 | loss_scale 65536.0 | grad_norm 1.2").metrics
    assert m == {"lr": 0.0001, "loss_scale": 65536.0, "grad_norm": 1.2}  # not the loss
    assert "loss" not in read_fields("Epoch 1 | Step 10 | num_loss_tokens 51234").metrics
    assert field_name("eval/metrics/loss", "") != "loss" and field_name("critic/train/loss", "") != "loss"
    m = read_fields("Epoch 3: val_recon_loss 0.31 val_kl_loss 0.12 recon_loss 0.28 kl_loss 0.1").metrics
    assert "eval_loss" not in m  # one loss's terms, not an evaluation's loss
    assert "train" not in read_fields("[Train] 100 | loss: 0.50").metrics

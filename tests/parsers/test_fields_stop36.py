"""Line forms of held-out logs read at stop 36 (each case names its source): a banner's planned steps,
a rate over the logging interval, a learning rate with its scheduler named, a `Dev:` evaluation, a
best-so-far mark, an epoch header a loop prints without Keras, the
tutorial's and an early stop's end of training."""

from __future__ import annotations

import pytest
from _feed import events, feed, steps

from trainwatch.parsers.fields import read_fields

_PADDLE = "\x1b[32m[2022-08-31 15:07:02,181] [    INFO]\x1b[0m - "


def _steps(lines: list[str]) -> list[tuple[int | None, dict[str, float]]]:
    return [(s.step, dict(s.metrics)) for s in steps(feed(lines))]


def test_a_banners_planned_steps_are_no_counter_and_the_evaluation_after_them_is_the_last_steps() -> None:
    # PaddlePaddle/PaddleNLP (its Trainer, FewCLUE): the evaluation banner between a step and its eval line
    got = _steps(
        [
            _PADDLE + "loss: 0.60361495, learning_rate: 2.97e-05, global_step: 2150, interval_runtime: 5.6625, "
            "interval_samples_per_second: 11.303, interval_steps_per_second: 1.766, epoch: 0.3512",
            _PADDLE + "loss: 0.51201382, learning_rate: 2.97e-05, global_step: 2200, interval_runtime: 5.6849, "
            "interval_samples_per_second: 11.258, interval_steps_per_second: 1.759, epoch: 0.3594",
            _PADDLE + "***** Running Evaluation *****",
            _PADDLE + "  Num examples = 12241",
            _PADDLE + "  Total prediction steps = 192",
            _PADDLE + "eval_loss: 0.5414647459983826, eval_accuracy: 0.7857, eval_runtime: 54.9523, epoch: 0.3594",
        ]
    )
    assert [s for s, _ in got] == [2150, 2200]
    assert got[0][1]["samples_per_s"] == 11.303
    assert got[0][1]["step_time_s"] == pytest.approx(1 / 1.766)
    assert got[1][1]["eval_loss"] == 0.5414647459983826 and got[1][1]["loss"] == 0.51201382
    for text in ("  Total optimization steps = 1000", "  Num train steps: 500", "Number of warmup steps = 10"):
        reading = read_fields(text)
        assert reading is None or reading.step is None, text
    counted = read_fields("Total Steps: 5000 | reward: 1.5")  # (RL: the run's step, no phase named)
    assert counted is not None and counted.step == 5000


def test_a_learning_rate_with_its_scheduler_named_is_the_learning_rate() -> None:
    # PaddlePaddle/PaddleClas issue #3203: `lr(PiecewiseDecay): 0.00100000`
    reading = read_fields(
        "[2024/07/31 20:24:32] ppcls INFO: [Train][Epoch 24/120][Iter: 0/304]lr(PiecewiseDecay): 0.00100000, "
        "top1: 1.00000, CELoss: 0.01757, loss: 0.01757, batch_cost: 0.61280s, reader_cost: 0.12493, "
        "ips: 26.10981 samples/s, eta: 5:01:10"
    )
    assert reading is not None
    assert reading.metrics["lr"] == 0.001 and reading.metrics["loss"] == 0.01757
    assert reading.metrics["step_time_s"] == 0.6128 and reading.metrics["samples_per_s"] == 26.10981
    other = read_fields("step 3 loss (avg): 0.5")  # (an average's aside is not a scheduler's)
    assert other is not None and "lr" not in other.metrics


def test_a_dev_line_after_a_training_line_is_the_evaluation() -> None:
    # a Tsinghua NLP homework's TextCNN (committed log, CRLF): `Train: Batch[100] - ...` then `Dev: loss: ...`
    lines = []
    for n, (tr, dev) in enumerate([(0.707424, 0.650118), (0.524731, 0.622117), (0.563207, 0.635190)], 1):
        lines += [f"Train: Batch[{n}00] - loss: {tr} acc: 59.38%)\r", f"Dev: loss: {dev} acc: 61.73%)\r"]
    got = _steps(lines)
    by_step: dict[int | None, dict[str, float]] = {}
    for step, metrics in got:
        by_step.setdefault(step, {}).update(metrics)
    assert by_step[200]["loss"] == 0.524731 and by_step[200]["eval_loss"] == 0.622117
    assert by_step[300]["eval_loss"] == 0.635190
    device = read_fields("dev 0 loss: 0.5")  # (a device's number is no evaluation)
    assert device is not None and "eval_loss" not in device.metrics


def test_a_number_of_in_chinese_is_a_size_not_a_counter() -> None:
    # `Epoch 个数: 100` ("number of epochs") is a banner's size (a study repo's `Batch 个数 50` stays unread)
    size = read_fields("Epoch 个数: 100")
    assert size is None or size.epoch is None


def test_a_best_so_far_mark_keeps_the_lines_shape() -> None:
    # 649453932/Chinese-Text-Classification-Pytorch: `*` after the line whose validation improved
    got = _steps(
        [
            "Iter:   2200,  Train Loss:  0.13,  Train Acc: 94.53%,  Val Loss:  0.21,  Val Acc: 93.45%,  Time: 0:30:31 *",
            "Iter:   2300,  Train Loss:  0.13,  Train Acc: 94.53%,  Val Loss:  0.22,  Val Acc: 93.33%,  Time: 0:31:54",
            "Iter:   2400,  Train Loss: 0.099,  Train Acc: 96.88%,  Val Loss:  0.22,  Val Acc: 93.43%,  Time: 0:33:15",
        ]
    )
    assert [s for s, _ in got] == [2200, 2300, 2400]
    assert got[0][1]["eval_loss"] == 0.21


def test_an_epoch_header_without_keras_bars_numbers_the_lines_under_it() -> None:
    # zjZSTU/YOLO_v1 (PyTorch's fine-tuning tutorial loop): `Epoch 42/49`, a rule, `train Loss: 0.2172`
    lines = []
    for epoch, loss in ((42, 0.2172), (43, 0.2442), (44, 0.1925)):
        lines += [f"Epoch {epoch}/49", "----------", f"train Loss: {loss}", ""]
    got = _steps(lines)
    assert [(m["epoch"], m["loss"]) for _, m in got] == [(42, 0.2172), (43, 0.2442), (44, 0.1925)]


def test_a_keras_log_still_reads_its_epoch_headers_once() -> None:
    got = _steps(
        [
            "Epoch 1/2",
            "2/2 [==============================] - 0s 5ms/step - loss: 0.5",
            "Epoch 2/2",
            "2/2 [==============================] - 0s 5ms/step - loss: 0.4",
        ]
    )
    assert got == [
        (2, {"loss": 0.5, "epoch": 1.0, "step_time_s": 0.005}),
        (4, {"loss": 0.4, "epoch": 2.0, "step_time_s": 0.005}),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "Training complete in 2m 30s",
        "Training SqueezeNetBypass complete in 96m 21s",
        "no optimization for a long time, early stop....",
        "Early stopping triggered.",
        "Early stopping at epoch 12",
        # Lightning's EarlyStopping callback
        "Monitored metric val_loss did not improve in the last 3 records. Best score: 0.123. Signaling Trainer to stop.",
    ],
)
def test_the_tutorials_end_and_an_early_stop_finish_the_run(line: str) -> None:
    recs = feed(["epoch 1 loss 0.5", "epoch 2 loss 0.4", line])
    assert len(events(recs, "finished")) == 1


@pytest.mark.parametrize(
    "line", ["early_stopping_patience = 10", "EarlyStopping counter: 3 out of 10", "Use early stopping: True"]
)
def test_an_early_stop_setting_or_counter_is_no_end(line: str) -> None:
    recs = feed(["epoch 1 loss 0.5", "epoch 2 loss 0.4", line])
    assert events(recs, "finished") == []


# ----------------------------------------------------------------- set L (LLM tools, vision, science loops)


def test_a_bar_postfix_written_as_text_and_a_run_name_holding_test() -> None:
    # ostris/ai-toolkit: `set_postfix_str`, and a run named `lokr-test-2` (not an evaluation bar)
    got = _steps(
        [
            "lokr-test-2:  10%|9         | 299/3000 [10:44<1:37:05,  2.16s/it, lr: 2.0e-04 loss: 5.226e-01]",
            "Saving at step 300",
            "lokr-test-2:  20%|#9        | 599/3000 [19:45<1:03:24,  1.58s/it, lr: 2.0e-04 loss: 6.736e-01]",
        ]
    )
    assert got == [
        (299, {"lr": 0.0002, "loss": 0.5226, "step_time_s": 2.16, "total_steps": 3000.0}),
        (599, {"lr": 0.0002, "loss": 0.6736, "step_time_s": 1.58, "total_steps": 3000.0}),
    ]
    evaluation = _steps(["Validation DataLoader 0:  50%|#####     | 5/10 [00:01<00:01,  4.00it/s]"] * 2)
    assert evaluation == []


def test_a_bar_of_steps_under_an_epoch_counts_the_runs_steps() -> None:
    # bghira/SimpleTuner: `Epoch 11/100, Steps:  20%|...| 4680/22900`, one bar for the whole run
    got = _steps(
        [
            "Epoch 11/100, Steps:  20%|#####     | 4680/22900 [6:56:13<39:34:26,  7.82s/it, lr=1.5e-6, step_loss=0.157]",
            "Epoch 12/100, Steps:  22%|#####     | 5040/22900 [7:37:48<27:18:55,  5.51s/it, lr=1.5e-6, step_loss=0.147]",
        ]
    )
    assert [(s, m["epoch"], m["loss"], m["total_steps"]) for s, m in got] == [
        (4680, 11.0, 0.157, 22900.0),
        (5040, 12.0, 0.147, 22900.0),
    ]


def test_the_training_bar_is_known_when_training_goes_on_after_an_evaluation() -> None:
    # OpenBMB/MiniCPM's fine-tuning notebook: HF dicts, the training bar at 500/1000, the evaluation's bar,
    # its dict, then training dicts again
    bar = "|##########| {n}/{m} [00:10<00:10,  {r}]"
    got = _steps(
        [
            "{'loss': 0.3512, 'grad_norm': 3.28, 'learning_rate': 3e-05, 'epoch': 0.58}",
            " 50%" + bar.format(n=500, m=1000, r="1.20s/it") + "***** Running Evaluation *****",
            "  Num examples = 3000",
            " 50%" + bar.format(n=12, m=24, r="1.11it/s"),
            "{'eval_loss': 0.4814, 'eval_runtime': 23.5, 'epoch': 0.63}",
            "{'loss': 0.4598, 'grad_norm': 6.53, 'learning_rate': 2.72e-05, 'epoch': 0.65}",
        ]
    )
    assert (500, {"total_steps": 1000.0, "step_time_s": 1.2}) in got


def test_a_sticky_cuda_error_outside_a_traceback_is_a_crash() -> None:
    # ostris/ai-toolkit issue: the job runner's message glued after the last bar frame
    recs = feed(
        [
            "run:   3%|#         | 1021/30000 [02:42<62:16:05,  7.74s/it, lr: 1.5e-04 loss: 4.073e+00]"
            "Error running job: CUDA error: an illegal memory access was encountered",
        ]
    )
    (crash,) = events(recs, "crash")
    assert crash.data["error"] == "an illegal memory access was encountered"
    assert [s.step for s in steps(recs)] == [1021]
    oom = feed(["step 1 loss 2.0", "RuntimeError: CUDA error: out of memory"])
    assert events(oom, "crash") == [] and len(events(oom, "oom")) == 1


@pytest.mark.parametrize(
    "line",
    [
        "Saving checkpoint/run1/model-1000",  # gpt-2-simple (TF's saver prefix)
        "2024-05-24 19:32:05 (UTC) - 0:33:53 - checkpointing - INFO - Done dumping checkpoint in /ckpt/checkpoint_000100/consolidated",
        "2025-08-18 23:11:37,949 [INFO] 保存模型到 ./qwen_finetuned/30",  # "save the model to"
    ],
)
def test_saves_said_in_other_words_are_checkpoints(line: str) -> None:
    assert len(events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line]), "checkpoint")) == 1


def test_the_end_and_a_save_on_one_line_are_both_read() -> None:
    recs = feed(["step 1 loss 2.0", "step 2 loss 1.9", "✅ 训练完成! 保存模型到 ./qwen_finetuned/30"])
    assert len(events(recs, "finished")) == 1 and len(events(recs, "checkpoint")) == 1
    assert events(feed(["step 1 loss 2.0", "训练 100 步 loss 1.9"]), "finished") == []


def test_markdown_bold_around_a_number_is_read_through() -> None:
    # open-mmlab/mmdetection issue: a reporter bolded `loss: nan` inside the pasted line
    line = (
        "2021-08-18 19:37:12,902 - mmdet - INFO - Epoch [1][150/5808]\tlr: 1.000e-02, eta: 4:46:48, time: 0.736, "
        "data_time: 0.020, memory: 8104, loss_cls: 0.4035, acc: **92.77**, loss_bbox: nan, loss: nan**"
    )
    recs = feed([line])
    (s,) = steps(recs)
    assert s.metrics["acc"] == 92.77
    assert [e.data["metric"] for e in events(recs, "nan")] == ["loss"]
    banner = feed(["***** Running training *****", "step 1 loss 2.0", "step 2 loss 1.9"])
    assert len(steps(banner)) == 2
    power = read_fields("step 2 loss 1.9, loss_scale: 2**16")  # (a power is no bold: digits on both sides)
    assert power is not None and power.metrics.get("loss_scale") != 216.0


def test_a_nan_term_of_a_loss_with_no_total_is_a_nan_event() -> None:
    # HRDA on mmsegmentation: the line prints the loss's terms only
    line = (
        "2022-11-02 14:45:20,867 - mmseg - INFO - Iter [21450/40000]\tlr: 2.783e-05, eta: 1 day, 15:14:15, "
        "time: 3.936, data_time: 0.018, memory: 12106, decode.loss_seg: 0.1926, src.loss_imnet_feat_dist: nan"
    )
    (nan,) = events(feed([line]), "nan")
    assert nan.step == 21450 and nan.data == {"metric": "src_loss_imnet_feat_dist"}
    scaled = feed(["step 1 loss_cls 2.0 loss_scale: inf", "step 2 loss_cls 1.9 loss_scale: 1024"])
    assert events(scaled, "nan") == []
    best = feed(
        [
            "Epoch 1 | recon_loss: 0.52 | kl_loss: 0.11 | best_recon_loss: inf",
            "Epoch 2 | recon_loss: 0.5 | kl_loss: 0.1 | best_recon_loss: 0.52",
        ]
    )
    assert events(best, "nan") == []  # (a best-so-far started at inf)


def test_an_mpi_rank_tag_behind_a_platforms_stamp_gives_the_rank() -> None:
    # a Spell run: its stamp, then OpenMPI's `[1,1]<stdout>:` tag
    recs = feed(
        [
            "May 18, 2020, 11:47:13: running: [1,1]<stdout>:Train Epoch: 10 [7680/30000 (26%)]\tLoss: 0.161335",
            "May 18, 2020, 11:47:13: running: [1,0]<stdout>:Train Epoch: 10 [7680/30000 (26%)]\tLoss: 0.127660",
        ]
    )
    assert [(s.rank, s.metrics["loss"]) for s in steps(recs)] == [(1, 0.161335), (0, 0.12766)]


def test_a_unit_word_after_a_value_is_not_the_next_label() -> None:
    # PaddlePaddle/PaddleGAN's trainer: `batch_cost: 1.75327 sec reader_cost: 0.94611 sec ips: 0.57 images/s`
    reading = read_fields(
        "Epoch: 1, iters: 0 lr: 0.000200 D_A_loss: 1.595 D_B_loss: 1.887 batch_cost: 1.75327 sec "
        "reader_cost: 0.94611 sec ips: 0.57036 images/s"
    )
    assert reading is not None
    assert reading.metrics["step_time_s"] == 1.75327 and reading.metrics["data_time_s"] == 0.94611


def test_a_counter_less_report_right_under_a_steps_line_is_that_steps() -> None:
    # a TGN repo's epoch blocks: `epoch: N took 45.00s`, `Epoch mean loss: ...`, `val auc: ...`
    lines = []
    for epoch, loss in ((21, 0.31), (22, 0.297), (23, 0.308)):
        lines += [
            f"2023-10-25 03:02:44,881 - root - INFO - start {epoch} epoch",
            f"2023-10-25 03:02:44,881 - root - INFO - epoch: {epoch} took 45.00s",
            f"2023-10-25 03:02:44,881 - root - INFO - Epoch mean loss: {loss}",
            "2023-10-25 03:02:44,881 - root - INFO - val auc: 0.97, new node val auc: 0.977",
        ]
    lines.append("2023-10-25 03:03:29,785 - root - INFO - No improvement over 5 epochs, stop training")
    recs = feed(lines)
    by_step = {s.step: s.metrics for s in steps(recs)}
    assert by_step[22]["loss"] == 0.297 and by_step[23]["loss"] == 0.308 and by_step[23]["val_auc"] == 0.97
    assert "start" not in by_step[22]
    assert len(events(recs, "finished")) == 1
    # a line of other figures (Jupyter's `%%time`) after the last step is not its report
    timed = _steps(["epoch 1 | loss: 0.5", "epoch 2 | loss: 0.4", "CPU times: user 2min, sys: 340 ms, total: 2min"])
    assert timed[-1] == (2, {"loss": 0.4, "epoch": 2.0})


def test_an_epoch_and_its_batch_in_spaced_brackets() -> None:
    reading = read_fields("[Ep]: [   1/200]  [ 834/1669]  eta: 0:28:13  loss: 7.77")
    assert reading is not None
    assert (reading.epoch, reading.inner, reading.inner_total) == (1.0, 834, 1669)


# ----------------------------------------------------------------- set M (endings, notebooks, more tools)


def test_a_cost_in_words_is_the_loss_and_paddles_batch_cost_stays_a_time() -> None:
    # rasbt/deep-learning-models notebooks: `Epoch: 001/003 | Batch 0050/0636 | Cost: 0.6971`, `Curr. Batch Cost`
    for text, loss in (
        ("Epoch: 001/003 | Batch 0050/0636 | Cost: 0.6971", 0.6971),
        ("Total batch #   200/3830   Curr. Batch Cost: 2.30711", 2.30711),
        ("Cost after iteration 100: 0.693", 0.693),  # the Coursera form
    ):
        reading = read_fields(text)
        assert reading is not None and reading.metrics.get("loss") == loss, text
    paddle = read_fields("epoch: 1, iter: 20/500, loss: 2.08, batch_cost: 0.5344, reader_cost: 0.07273")
    assert paddle is not None and paddle.metrics["step_time_s"] == 0.5344 and paddle.metrics["loss"] == 2.08
    timed = read_fields("step 3 | time cost: 3.2")
    assert timed is not None and "loss" not in timed.metrics


def test_averaged_training_and_evaluation_losses_by_their_full_names() -> None:
    # huggingface/accelerate issue #2375 (a custom loop): `Average Training Loss`, `Average Evaluation Loss`
    reading = read_fields("Epoch: 0, Average Training Loss: 4.852, Average Evaluation Loss: 2.553")
    assert reading is not None and reading.metrics == {"loss": 4.852, "eval_loss": 2.553}


def test_an_evaluation_sets_group_of_figures_is_the_evaluations() -> None:
    # NVIDIA DALI's ImageNet example (apex): `train=[..., loss: 1.3458, ...], val=[..., loss: 6.2107, ...]`
    reading = read_fields(
        "Epoch=25/50, lr: 0.01000, train=[top1: 63.7443, top5: 87.0669, loss: 1.3458, time: 539.015, speed: 279.2], "
        "val=[top1: 0.9851, top5: 5.0951, loss: 6.2107, time: 14.928, speed: 401.9]"
    )
    assert reading is not None
    assert reading.metrics["loss"] == 1.3458 and reading.metrics["eval_loss"] == 6.2107
    assert reading.metrics["lr"] == 0.01
    listed = read_fields("step 3 loss: 0.5 lr: [0.1, 0.2]")  # (a list is no group)
    assert listed is not None and listed.metrics == {"loss": 0.5, "lr": 0.1}


@pytest.mark.parametrize(
    "line",
    [
        "Model Saved",  # a TF1 DQN notebook
        "完成第750的保存",  # PPASR: "the 750th save is done"
    ],
)
def test_more_save_wordings(line: str) -> None:
    assert len(events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line]), "checkpoint")) == 1


def test_total_training_time_in_title_case_ends_the_run() -> None:
    recs = feed(["Epoch: 001/003 | Batch 0000/0636 | Cost: 0.69", "Epoch: 001/003 | Batch 0050/0636 | Cost: 0.59"])
    assert events(recs, "finished") == []
    recs = feed(["epoch 1 loss 0.5", "epoch 2 loss 0.4", "Total Training Time: 104.14 min"])
    assert len(events(recs, "finished")) == 1


def test_a_shell_kill_report_with_padded_pid() -> None:
    # vacancy/NSCL-PyTorch-Release issue #23: bash's report, glued after the validation bar
    line = (
        "Epoch 15 (validation) validation/acc/qa=1.000000:   2%|#4      | 20/1094 [00:41<11:04,  1.62it/s]"
        '/home/u/Jacinle/bin/jac-crun: line 6:  3305 Killed                  $JACROOT/bin/jac-run "$@"'
    )
    (signal,) = events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line]), "signal")
    assert signal.data["signal"] == "SIGKILL"


def test_a_trainer_dict_with_its_global_step() -> None:
    # modelscope/ms-swift issue #64: the HF-style dict carries `global_step`
    got = _steps(
        [
            " 12%|#         | 2900/25120 [2:12:23<16:39:43,  2.70s/it]",
            "{'loss': 2.011, 'learning_rate': 9.81e-05, 'epoch': 1.85, 'global_step': 2900}",
        ]
    )
    (step, metrics), *_ = [g for g in got if "loss" in g[1]]
    assert step == 2900 and (metrics["loss"], metrics["lr"], metrics["epoch"]) == (2.011, 9.81e-05, 1.85)


def test_a_bar_redrawn_under_a_log_collector_is_read_frame_by_frame() -> None:
    # awslabs/gluonts issue #891 (SageMaker/CloudWatch writes each `\r` as `#015`): the epoch's lines stay readable
    bar = (
        "#015  0%|          | 0/100 [00:00<?, ?it/s]#015 24%|##4       | 24/100 [00:10<00:32,  2.34it/s, "
        "avg_epoch_loss=1.74]#015100%|##########| 100/100 [00:40<00:00,  2.46it/s, avg_epoch_loss=1.72]"
    )
    got = _steps(["INFO:root:Epoch[98] Learning rate is 5e-05", bar, "INFO:root:Epoch[98] Elapsed time 40.639 seconds"])
    assert [(s, m.get("avg_epoch_loss")) for s, m in got if "avg_epoch_loss" in m] == [(24, 1.74), (100, 1.72)]


# ----------------------------------------------------------------- set N (mainstream stacks, unusual forms)


def test_deepspeeds_old_timer_lines_alone_count_their_own_steps() -> None:
    # microsoft/DeepSpeed issue #697: a loop printing only `0/130, SamplesPerSec=...` (no engine `step=N`)
    got = _steps(
        [
            "[2021-01-26 21:57:06,613] [INFO] [timer.py:166:stop] 0/130, SamplesPerSec=36.813475069881996",
            "[2021-01-26 21:57:09,089] [INFO] [timer.py:166:stop] 0/140, SamplesPerSec=37.47199109015046",
            "[2021-01-26 21:57:12,203] [INFO] [timer.py:166:stop] 0/150, SamplesPerSec=37.547663000349296",
        ]
    )
    assert [s for s, _ in got] == [130, 140, 150]


def test_one_report_printed_by_every_node_is_one_step() -> None:
    # pytorch/torchtitan issue #708 under `srun -l`: rank 0 of each of 4 nodes prints the same step-10 line
    line = (
        "[rank0]:2024-11-27 14:29:40,378 - root - INFO - step: 10  loss:  1.5568  memory: 26.47GiB(33.47%)  wps: 1,786"
    )
    got = _steps([f"{n}: {line}" for n in (0, 3, 1, 2)])
    assert len(got) == 1 and got[0][0] == 10 and got[0][1]["loss"] == 1.5568


def test_the_ddp_tutorials_gpu_tag_is_the_rank_and_its_iter_0_lines_count_epochs() -> None:
    # pytorch/examples distributed/minGPT-ddp: `[GPU3] Epoch 1 | Iter 0 | Train Loss 4.18844` once an epoch
    lines = []
    for epoch, base in ((1, 4.18), (2, 3.1), (3, 2.21)):
        lines += [f"[GPU{r}] Epoch {epoch} | Iter 0 | Train Loss {base + r / 1000:.5f}" for r in (3, 0)]
        lines += [f"[GPU{r}] Epoch {epoch} | Iter 0 | Eval Loss {base - 1:.5f}" for r in (3, 0)]
    recs = feed(lines)
    got = [(s.rank, s.step, s.metrics.get("loss")) for s in steps(recs) if "loss" in s.metrics]
    assert got == [(3, 1, 4.183), (0, 1, 4.18), (3, 2, 3.103), (0, 2, 3.1), (3, 3, 2.213), (0, 3, 2.21)]
    assert events(recs, "restart") == []


def test_the_cifar10_tutorials_epoch_and_batch_pair() -> None:
    # PyTorch's "Training a classifier": `print(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 2000:.3f}')`
    reading = read_fields("[2, 12000] loss: 1.247")
    assert reading is not None and (reading.epoch, reading.inner, reading.metrics) == (2.0, 12000, {"loss": 1.247})
    recs = feed(["[1,  2000] loss: 2.198", "[1,  4000] loss: 1.876", "[2,  2000] loss: 1.590", "Finished Training"])
    assert [s.metrics["epoch"] for s in steps(recs)] == [1.0, 1.0, 2.0]
    assert len(events(recs, "finished")) == 1


def test_megatron_deepspeeds_validation_on_a_sample_draw() -> None:
    got = _steps(
        [
            "validation loss at iteration 2500 on 320-sample draw from validation set | lm loss value: 1.360287E+01 "
            "| lm loss PPL: 8.084497E+05 |"
        ]
    )
    assert got == [(2500, {"eval_loss": 13.60287, "eval_ppl": 808449.7})]


def test_a_save_at_an_epoch_names_its_file_not_the_epoch() -> None:
    recs = feed(
        [
            "step 1 loss 2.0",
            "[INFO] SASRec-SASRec-github: Saving best model at epoch 0 to /home/j/out/SASRec.pth",
            "step 2 loss 1.0",
            "Snapshot saved at epoch 3",
        ]
    )
    assert [e.data.get("path") for e in events(recs, "checkpoint")] == ["/home/j/out/SASRec.pth", None]


# ----------------------------------------------------------------- the review's false positives


@pytest.mark.parametrize(
    "line",
    [
        "Using early stopping.",
        "  --early_stop          enable early stopping",
        "early stopping at epoch 50 if no improvement",
        "Validation loss did not improve, patience 2/5; will stop training if no improvement",
        "Training epoch complete in 45s",
        "第1轮训练完成，用时 30s",
        "Epoch 1 训练结束, 开始验证",
        "训练完成度: 50%",
    ],
)
def test_settings_and_an_epochs_end_do_not_finish_the_run(line: str) -> None:
    assert events(feed(["epoch 1 loss 0.5", "epoch 2 loss 0.4", line]), "finished") == []


@pytest.mark.parametrize(
    "line",
    [
        "Saving results/model_predictions.csv",
        "Saving plots/model_architecture.png",
        "模型保存路径: ./output",
        "模型保存间隔: 5 epochs",
        "保存模型: False",
        "是否保存模型: True",
        "保存权重间隔: 1000",
        "保存模型配置到 ./out/config.json",
        "完成加载，开始保存日志",
    ],
)
def test_files_and_settings_that_are_no_save(line: str) -> None:
    assert events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line]), "checkpoint") == []


def test_dumped_weights_are_a_save() -> None:
    assert len(events(feed(["step 1 loss 2.0", "Dumping model weights to out/model.pt"]), "checkpoint")) == 1


@pytest.mark.parametrize(
    "line",
    [
        "skipping batch 17 due to CUDA error: misaligned address",
        "ERROR: retrying after CUDA error: an illegal memory access was encountered",
        "UserWarning: something failed with CUDA error: unknown error",
    ],
)
def test_a_cuda_error_the_run_goes_on_after_is_no_crash(line: str) -> None:
    assert events(feed(["step 1 loss 2.0", line]), "crash") == []


def test_an_upper_case_cuda_error_is_a_crash() -> None:
    recs = feed(["step 1 loss 2.0", "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm`"])
    assert len(events(recs, "crash")) == 1


@pytest.mark.parametrize("line", ["lower bound: 0.12", "previous best: 0.45", "grad accum: 4", "best_acc: 0.91"])
def test_a_line_under_a_step_that_reports_no_figure_of_it_stays_apart(line: str) -> None:
    got = _steps(["epoch: 1 | loss: 0.5", "epoch: 2 | loss: 0.4", line])
    assert got[-1] == (2, {"loss": 0.4, "epoch": 2.0})


def test_a_padded_epoch_number_is_no_collectors_carriage_return() -> None:
    got = _steps([f"Epoch #0{n} | loss: 0.0{n} | acc: 0.6{n}" for n in range(13, 18)])
    assert len(got) == 5


def test_mpi_tags_behind_a_bracketed_or_glued_stamp() -> None:
    recs = feed(
        [
            "[2020-05-18 11:47:13] [1,1]<stdout>:Train Epoch: 10 [7680/30000 (26%)]\tLoss: 0.161335",
            "Tue May 18 11:47:14 2020[1,0]<stdout>:Train Epoch: 10 [7680/30000 (26%)]\tLoss: 0.127660",
        ]
    )
    assert [s.rank for s in steps(recs)] == [1, 0]

"""Line forms of held-out logs read at stop 37 (each case names its source): a rate of other data items,
a bare total beside the terms it adds up, a step report a save ends, glibc's failed assert, and a few
names (an evaluation's loss in full, a total loss abbreviated, a timer)."""

from __future__ import annotations

import pytest
from _feed import events, feed, steps

from trainwatch.parsers.fields import read_fields

_LEELA = [  # glinscott/leela-chess PR #104: its TF trainer's step lines, then a save
    "step 100, policy=6.17128 mse=0.174783 reg=0.373261 total=7.24368 (4083.19 pos/s)",
    "step 200, policy=5.18683 mse=0.038592 reg=0.374614 total=5.71581 (4920.47 pos/s)",
    "step 300, policy=4.46734 mse=0.0172791 reg=0.374793 total=4.91125 (5090.22 pos/s)",
]


def test_a_bare_total_beside_its_terms_is_the_loss_and_positions_per_second_are_samples() -> None:
    got = steps(feed(_LEELA))
    assert [s.step for s in got] == [100, 200, 300]
    assert got[0].metrics["loss"] == 7.24368 and got[0].metrics["samples_per_s"] == 4083.19
    assert got[0].metrics["policy"] == 6.17128  # (the terms keep their names)


@pytest.mark.parametrize(
    "line",
    [
        "iter 5 data=0.01 fwd=0.2 bwd=0.1 total=0.35",  # the parts of a step's time
        "step 5 acc=0.5 f1=0.4 total=0.9",  # figures of quality
        "step 5 samples=64 tokens=2048 total=2112",  # a count
        "step 5 loss=2.5 ce=1.0 total=3.5",  # a loss is named: it stays the loss
    ],
)
def test_a_total_beside_other_figures_is_no_loss(line: str) -> None:
    reading = read_fields(line)
    assert reading is not None
    assert reading.metrics.get("loss") in (None, 2.5), reading.metrics


def test_a_rate_of_other_data_items_is_samples_per_second() -> None:
    for unit in ("pos/s", "utt/s", "sents/s", "pairs/s", "graphs/s"):
        reading = read_fields(f"step 3, loss=1.5, 250.5 {unit}")
        assert reading is not None and reading.metrics.get("samples_per_s") == 250.5, unit


_TESSERACT = [  # tesseract-ocr/tesseract issue #561: lstmtraining's progress, each a save, then an assert
    "At iteration 700/700/700, Mean rms=0.851%, delta=48.119%, char train=101.439%, word train=100%, skip ratio=0%,"
    "  New worst char error = 101.439 wrote checkpoint.",
    "At iteration 800/800/800, Mean rms=0.845%, delta=47.162%, char train=101.229%, word train=100%, skip ratio=0%,"
    "  New worst char error = 101.229 wrote checkpoint.",
    "At iteration 900/900/900, Mean rms=0.841%, delta=46.594%, char train=101.075%, word train=100%, skip ratio=0%,"
    "  New worst char error = 101.075 wrote checkpoint.",
    "[Thread 0x7f47352d0700 (LWP 422) exited]",
    "lstmtraining: ../ccutil/genericvector.h:696: T& GenericVector<T>::operator[](int) const [with T = char]: "
    "Assertion `index >= 0 && index < size_used_' failed.",
]


def test_a_step_report_a_save_ends_is_both_and_a_failed_assert_is_a_crash() -> None:
    records = feed(_TESSERACT)
    assert [s.step for s in steps(records)] == [700, 800, 900]
    assert [e.step for e in events(records, "checkpoint")] == [700, 800, 900]
    crash = events(records, "crash")
    assert len(crash) == 1 and crash[0].data["error"] == "index >= 0 && index < size_used_"


def test_a_save_line_without_a_report_is_still_only_a_save() -> None:
    records = feed(["Epoch 5: saving model to ckpt.pt", "iter 10: saving checkpoint to out/ckpt_10.pt"])
    assert len(events(records, "checkpoint")) == 2
    assert steps(records) == []


def test_checkpointing_the_model_is_a_save() -> None:
    # baidu-research/ba-dls-deepspeech issue #28
    line = "2017-08-14 17:44:25,415 INFO    (utils) Checkpointing model to: ./model/"
    assert len(events(feed([line]), "checkpoint")) == 1
    assert events(feed(["Checkpointing is enabled every 5 epochs"]), "checkpoint") == []


@pytest.mark.parametrize(
    ("line", "name", "value"),
    [
        ("2024-07-26 15:25:38,778 - step: 0, evaluation_loss: 1.11044e+04", "eval_loss", 11104.4),  # SEDD
        ("iter 90 || Loss: 16.6367 || timer: 0.2197 sec.", "step_time_s", 0.2197),  # ssd.pytorch
        ("global iter: 13/ 5000| tot_loss: 2.3541 | rl_loss: -0.0407 | pt_loss: 2.3948", "loss", 2.3541),  # MiniLLM
    ],
)
def test_names_read_off_held_out_logs(line: str, name: str, value: float) -> None:
    reading = read_fields(line)
    assert reading is not None and reading.metrics.get(name) == value, reading


def test_a_message_about_assertions_is_no_crash() -> None:
    lines = ["Assertion checks enabled: True", "step 1 loss 2.0 note: Assertion `x' failed would be bad"]
    assert events(feed(lines), "crash") == []


def test_tf_nmt_style_lines_the_global_norm_and_a_ctime_date() -> None:
    # guoday/ctrNet-tool issue #8: `gN` the global gradient norm, `logloss` the loss, C's ctime date no value
    reading = read_fields("  epoch 0 step 200 lr 0.001 logloss 0.191605 gN 0.28, Wed Jul  3 17:13:58 2019")
    assert reading is not None and reading.step == 200
    assert reading.metrics == {"lr": 0.001, "loss": 0.191605, "grad_norm": 0.28}


def test_a_rank_bracket_prefix_and_latency_per_step() -> None:
    # Oneflow-Inc/models PR #385 (DeepFM): the rank prefix, the step's latency, an AUC line of the same step
    got = steps(
        feed(
            [
                "Rank[0], Step 46, Loss 3.1016, Latency 18.955 ms, Throughput 3376.5, 2022-09-07 07:53:35",
                "Rank[0], Step 46, AUC 0.60486, Eval_time 0.02 s, AUC_time 0.00 s, Eval_samples 640, 2022-09-07 07:53:36",
                "Rank[0], Step 47, Loss 3.3592, Latency 18.216 ms, Throughput 3513.4, 2022-09-07 07:53:36",
                "Rank[0], Step 47, AUC 0.60486, Eval_time 0.02 s, AUC_time 0.00 s, Eval_samples 640, 2022-09-07 07:53:36",
            ]
        )
    )
    assert [(s.rank, s.step) for s in got] == [(0, 46), (0, 47)]
    assert got[0].metrics["loss"] == 3.1016 and got[0].metrics["step_time_s"] == pytest.approx(0.018955)


def test_labels_in_brackets_before_a_colon() -> None:
    # liuslnlp/CoupletAI issue #2: `[epoch]: 199, [batch]: 23900, [loss]: 4.99` after a logging prefix
    reading = read_fields("2019-08-07 02:59:37,013 - __main__ - INFO - [epoch]: 199, [batch]: 23900, [loss]: 4.99415")
    assert reading is not None and reading.epoch == 199 and reading.inner == 23900
    assert reading.metrics["loss"] == 4.99415
    launcher = read_fields("[default0]: step 5 loss 2.0")  # (a launcher's label stays a prefix)
    assert launcher is not None and launcher.step == 5


def test_a_value_named_before_the_epoch_it_was_read_at() -> None:
    # pytorch/pytorch issue #14628: `Loss in epoch 0  =  2.16241826098016`, each rank's print
    reading = read_fields("Loss in epoch 0  =  2.16241826098016")
    assert reading is not None and reading.epoch == 0 and reading.metrics["loss"] == 2.16241826098016


def test_an_evaluation_part_after_a_bar_is_the_evaluations() -> None:
    # PetarV-/GAT issue #1: `Training: loss = ..., acc = ... | Val: loss = ..., acc = ... | Time: ...`
    reading = read_fields("Training: loss = 1.63155, acc = 0.50714 | Val: loss = 1.70797, acc = 0.47200 | Time: 16.76")
    assert reading is not None
    assert reading.metrics["loss"] == 1.63155 and reading.metrics["eval_loss"] == 1.70797


def test_a_phase_word_and_its_epoch_open_the_line() -> None:
    # antao97/dgcnn.pytorch issue #20: one training and one test line per epoch
    got = steps(
        feed(
            [
                "Train 0, loss: 1.786924, train acc: 0.819102, train avg acc: 0.410817, train iou: 0.663547",
                "Test 0, loss: 1.620618, test acc: 0.860112, test avg acc: 0.565714, test iou: 0.710083",
                "Train 1, loss: 1.550014, train acc: 0.905631, train avg acc: 0.595611, train iou: 0.756627",
                "Test 1, loss: 1.517117, test acc: 0.903071, test avg acc: 0.603729, test iou: 0.759499",
            ]
        )
    )
    assert [s.metrics["epoch"] for s in got] == [0, 1]
    assert got[0].metrics["loss"] == 1.786924 and got[0].metrics["eval_loss"] == 1.620618
    plain = read_fields("Train 5 loss 2")  # (no comma after the number: not this form)
    assert plain is not None and plain.epoch is None


def test_a_time_over_n_iterations_printed_after_it() -> None:
    # donnyyou/torchcv issue #8: `Time 91.554s / 100iters, (0.916)`: the one printed, else the quotient
    reading = read_fields(
        "Train Epoch: 2\tTrain Iteration: 3300\tTime 91.554s / 100iters, (0.916)\tData load 0.018s / 100iters, (0.000178)"
    )
    assert reading is not None and reading.step == 3300
    assert reading.metrics == {"step_time_s": 0.916, "data_time_s": 0.000178}
    bare = read_fields("iter 10 time 50.0s / 100 iters")
    assert bare is not None and bare.metrics["step_time_s"] == pytest.approx(0.5)


def test_progress_whose_only_counter_is_an_epoch_that_does_not_move() -> None:
    # KichangKim/DeepDanbooru issue #42: the last batches of epoch 1, each with its loss and speed
    lines = [
        f"Epoch[1] Loss={loss}, P=0.625461, R=0.082422, F1=0.145650, Speed = {speed} samples/s, 99.88 %, "
        "ETA = 2021-09-12 16:55:43"
        for loss, speed in (("0.009825", "7.2"), ("0.009284", "8.7"), ("0.009580", "7.8"), ("0.009263", "8.5"))
    ]
    got = steps(feed(lines))
    assert [s.metrics["loss"] for s in got] == [0.009825, 0.009284, 0.00958, 0.009263]
    assert got[0].metrics["samples_per_s"] == 7.2 and got[0].metrics["epoch"] == 1
    same = steps(feed(["Epoch[1] Loss=0.5, Speed = 7.2 samples/s"] * 5))  # (a line printed again: no progress)
    assert same == []


def test_an_evaluation_of_progress_counted_by_the_epoch_is_that_epochs() -> None:
    # MXNet's Module.fit: Speedometer lines within the epoch, then the epoch's validation
    lines = [
        f"Epoch[4] Batch [{a}-{a + 20}]\tSpeed: 6.1{a // 20 % 10} samples/sec\tLoss=8.{a:06d}"
        for a in range(0, 100, 20)
    ]
    lines += ["Epoch[4] Train-Loss=8.566004", "Epoch[4] Time cost=1883.112", "Epoch[4] Validation-Loss=87.491226"]
    records = feed(lines)
    evals = [s for s in steps(records) if "eval_loss" in s.metrics]
    assert [(s.step, s.metrics["eval_loss"]) for s in evals] == [(4, 87.491226)]


def test_a_running_average_in_parentheses_is_named_after_its_value() -> None:
    # donnyyou/torchcv issue #8 and McGregorWwww/UCTransNet issue #2
    reading = read_fields("Learning rate = [0.001, 0.01]\tLoss = 213.22541809 (ave = 149.97146935)")
    assert reading is not None and reading.metrics == {"lr": 0.001, "loss": 213.22541809, "loss_avg": 149.97146935}
    reading = read_fields("[Train] Epoch: [1][367/4899]  Loss:0.564 (Avg 0.5566) Dice:0.3038 (Avg 0.3144) LR 1.00e-03")
    assert reading is not None
    assert reading.metrics["loss"] == 0.564 and reading.metrics["loss_avg"] == 0.5566
    assert reading.metrics["dice_avg"] == 0.3144


def test_updates_per_second_over_the_time_of_the_logging_interval() -> None:
    # facebookresearch/mmf issue #776: `ups: 2.00, time: 50s 136ms` (the last 100 updates' time)
    reading = read_fields(
        "2021-02-14T08:50:36 | mmf.trainers.callbacks.logistics: progress: 21400/22000, train/total_loss: 0.0001, "
        "epoch: 81, num_updates: 21400, iterations: 21400, max_updates: 22000, lr: 0., ups: 2.00, time: 50s 136ms"
    )
    assert reading is not None and reading.step == 21400
    assert reading.metrics["step_time_s"] == 0.5 and reading.metrics["loss"] == 0.0001
    agree = read_fields("step 5 | ups 2.0 | time 0.49s | loss 1.0")  # (a step's own time stays)
    assert agree is not None and agree.metrics["step_time_s"] == 0.49


@pytest.mark.parametrize(
    "line",
    [
        "Step 5 | Memory (GB): allocated=12.35, reserved=14.50, total=79.15",
        "step 100 attn=12.3 mlp=20.1 total=32.4",
        "Epoch 5 | Batch 10 | Reward: ext=0.53 int=0.21 total=0.74",
        "step 100 | gnorm_enc=0.52 gnorm_dec=0.31 total=0.83",
    ],
)
def test_a_total_of_memory_times_rewards_or_norms_is_no_loss(line: str) -> None:
    # (the review's counter-examples: a bare total is the loss only beside a loss's terms)
    reading = read_fields(line)
    assert reading is not None and "loss" not in reading.metrics, reading.metrics


def test_summaries_of_folds_seeds_or_trials_are_no_progress() -> None:
    for lines in (
        [f"Fold {i} done | epoch 30 | loss 0.4{i}23" for i in range(1, 6)],
        [f"seed={i} epoch 100 loss 0.2{i}12" for i in range(5)],
        [f"trial lr=0.1 epochs 20 final loss=0.9{i}2" for i in range(5)],
    ):
        assert steps(feed(lines)) == [], lines[0]


def test_announcements_of_checkpointing_are_no_save() -> None:
    lines = [
        "Checkpointing model at every 500 steps (save_interval=500)",
        "Checkpointing weights in background thread",
        "Checkpointing state to S3 disabled",
    ]
    assert events(feed(lines), "checkpoint") == []


def test_an_evaluation_part_keeps_its_counter_and_settings() -> None:
    reading = read_fields("| Eval: step=500, loss=2.1, acc=0.5")
    assert reading is not None and reading.step == 500 and reading.metrics["eval_loss"] == 2.1
    reading = read_fields("iter 100 | Dev: cuda:0 | loss: 1.5")
    assert reading is not None and reading.metrics == {"loss": 1.5}


def test_an_average_aside_after_a_counter_or_a_renamed_figure_keeps_its_name() -> None:
    for line, name in (
        ("step 100 (avg: 2.31)", "avg"),
        ("Time 0.5 (avg 0.6)", "avg"),
        ("Iter 100/500 (mean 0.52)", "mean"),
    ):
        reading = read_fields(line)
        assert reading is not None and name in reading.metrics, (line, reading.metrics)


def test_a_latency_without_its_unit_is_no_step_time() -> None:
    reading = read_fields("step 100 loss 2.0 | latency: 30.5")
    assert reading is not None and "step_time_s" not in reading.metrics
    big = read_fields("Train 12800, loss: 0.51")  # (a phase word's number too large for an epoch)
    assert big is not None and big.epoch is None


def test_a_tsv_table_whose_epoch_column_is_epoch_num() -> None:
    # ma-xu/pointMLP-pytorch issue #52: its log.txt
    got = steps(
        feed(
            [
                "Epoch-Num\tLearning-Rate\tTrain-Loss\tTrain-acc-B\tTrain-acc\tValid-Loss\tValid-acc-B\tValid-acc\t",
                "0.000000\t0.009999\t2.770000\t8.452000\t12.631000\t2.568000\t9.543000\t16.759000\t",
                "1.000000\t0.009998\t2.521000\t14.481000\t19.828000\t2.433000\t19.117000\t25.330000\t",
            ]
        )
    )
    assert [(s.metrics["epoch"], s.metrics["loss"], s.metrics["eval_loss"]) for s in got] == [
        (0, 2.77, 2.568),
        (1, 2.521, 2.433),
    ]
    assert got[0].metrics["lr"] == 0.009999


def test_a_batch_id_and_an_averaged_test_line() -> None:
    # SKTBrain/KoBERT issue #33 and HongyangGao/Graph-U-Nets issue #8
    reading = read_fields("epoch 1 batch id 201 loss 0.9267023801803589 train acc 0.5850435323383084")
    assert reading is not None and reading.epoch == 1 and reading.inner == 201
    reading = read_fields("average test of epoch 0: loss 0.53319 acc 0.73214 auc 0.00000")
    assert reading is not None and reading.metrics["eval_loss"] == 0.53319
    reading = read_fields("average training of epoch 0: loss 0.57412 acc 0.69500 auc 0.00000")
    assert reading is not None and reading.metrics["loss"] == 0.57412

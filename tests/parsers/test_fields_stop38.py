"""Line forms of held-out logs read at stop 38 (each case names its source): an epoch's header with
its figures one a line under it (and an evaluation's header), a figure averaged `of N batches`, and a
config's list of milestones that is no step counter."""

from __future__ import annotations

from _feed import feed, steps

from trainwatch.parsers.fields import read_fields

_AGCN = [  # newoat/2s-agcn-whu work_dir/ntu/xview/agcn_joint/log.txt (2s-AGCN's processor)
    "[ Wed Oct  7 15:07:36 2020 ] Parameters:",
    "{'work_dir': './work_dir', 'base_lr': 0.1, 'step': [30, 40], 'batch_size': 4, 'num_epoch': 2}",
    "[ Wed Oct  7 15:07:36 2020 ] Training epoch: 1",
    "[ Wed Oct  7 15:27:53 2020 ] \tMean training loss: 2.4648.",
    "[ Wed Oct  7 15:27:53 2020 ] \tTime consumption: [Data]07%, [Network]93%",
    "[ Wed Oct  7 15:27:53 2020 ] Eval epoch: 1",
    "[ Wed Oct  7 15:30:16 2020 ] \tMean test loss of 865 batches: 2.5452022400894605.",
    "[ Wed Oct  7 15:30:16 2020 ] \tTop1: 25.07%",
    "[ Wed Oct  7 15:30:16 2020 ] Training epoch: 2",
    "[ Wed Oct  7 15:50:58 2020 ] \tMean training loss: 1.8536.",
    "[ Wed Oct  7 15:50:58 2020 ] \tTime consumption: [Data]01%, [Network]98%",
    "[ Wed Oct  7 15:50:58 2020 ] Eval epoch: 2",
    "[ Wed Oct  7 15:53:21 2020 ] \tMean test loss of 865 batches: 1.5960868100210421.",
    "[ Wed Oct  7 15:53:21 2020 ] \tTop1: 39.33%",
]


def test_an_epochs_figures_one_a_line_under_its_header_and_its_evaluations() -> None:
    got = steps(feed(_AGCN))
    assert [(s.step, s.metrics.get("loss"), s.metrics.get("eval_loss")) for s in got] == [
        (1, 2.4648, 2.5452022400894605),
        (2, 1.8536, 1.5960868100210421),
    ]
    assert got[0].metrics["val_top1_pct"] == 25.07 and got[0].metrics["epoch"] == 1
    assert all(s.step != 30 for s in got)  # (the config's `'step': [30, 40]`)


def test_lines_of_their_own_under_an_epochs_header_stay_each_a_step() -> None:
    # MonoCon (issue 20): a bar line of several figures, again and again under `Epoch 47 / 200`
    bars = [
        "==================================== Epoch  47 / 200 =====================================",
        *(
            f"| Progress [##   ][{p:5.2f}%] | LR 0.00{1474 + i} | Loss   {4 + i / 3:.4f} (  5.6) |"
            for i, p in enumerate((1.29, 12.07, 22.84, 33.62))
        ),
    ]
    got = steps(feed(bars))
    assert [s.metrics["loss"] for s in got] == [4.0, 4.3333, 4.6667, 5.0]
    # a script's `##### Epoch 3 #####`, then lines naming their epoch: not the header's
    lines = [f"2025-03-02 05:32:{40 + i},557 - INFO - Epoch 2 - Batch loss: 0.{3054 + i}" for i in range(5)]
    lines += ["2025-03-02 05:34:22,149 - INFO - ##### Epoch 3 #####"]
    lines += [f"2025-03-02 05:34:{23 + i},404 - INFO - Epoch 3 - Batch loss: 0.{2398 + i}" for i in range(4)]
    assert [s.metrics["loss"] for s in steps(feed(lines)) if s.metrics["epoch"] == 3] == [0.2398, 0.2399, 0.24, 0.2401]


def test_a_figure_averaged_over_batches_and_a_list_of_milestones() -> None:
    r = read_fields("Average loss over 100 batches: 1.2, val loss of the last 50 steps: 1.5")
    assert r is not None and r.metrics == {"loss": 1.2, "eval_loss": 1.5}
    r = read_fields("{'lr': 0.1, 'steps': [30000, 40000], 'warmup': 500}")
    assert r is not None and r.step is None


def test_names_of_a_current_lr_a_validation_loss_after_loss_and_steps_per_second() -> None:
    # PoeticTransformer's `Current Learning Rate`, a scheduler's `get_last_lr()` printed after
    # `lr ` (gpt2-chinese), DropEdge's `loss_val`, DiT's `Train Steps/Sec`
    r = read_fields("Epoch: 090/099 | Current Learning Rate: 0.001000")
    assert r is not None and r.metrics == {"lr": 0.001}
    r = read_fields("batch 1557 of epoch 1, loss 3.892343044281006, batch_acc 0.374, lr [9.712499999999999e-06]")
    assert r is not None and r.metrics["lr"] == 9.712499999999999e-06 and r.metrics["loss"] == 3.892343044281006
    r = read_fields("Epoch: 0074 loss_train: 1.7560 acc_train: 0.5071 loss_val: 1.8142 acc_val: 0.7400 cur_lr: 0.00100")
    assert r is not None and (r.metrics["loss"], r.metrics["eval_loss"], r.metrics["lr"]) == (1.756, 1.8142, 0.001)
    r = read_fields("[2025-04-26 11:17:13] (step=0005500) Train Loss: 0.1680, Train Steps/Sec: 1.46")
    assert r is not None and r.step == 5500 and abs(r.metrics["step_time_s"] - 1 / 1.46) < 1e-9


def test_tables_ruled_with_plus_signs_and_markdown_tables() -> None:
    # apple/turicreate issue 2673 (its progress table), and a script's markdown table of epochs
    turi = [
        "+--------------+----------------+--------------+-----------------+--------------+",
        "| Iteration    | Train Accuracy | Train Loss   | Validation Loss | Elapsed Time |",
        "+--------------+----------------+--------------+-----------------+--------------+",
        "| 1            | 0.598022       | 1.02007      | 1.171           | 3.76s        |",
        "| 2            | 0.792019       | 0.580599     | 0.575019        | 4.56s        |",
        "+--------------+----------------+--------------+-----------------+--------------+",
    ]
    got = steps(feed(turi))
    assert [(s.step, s.metrics["loss"], s.metrics["eval_loss"]) for s in got] == [
        (1, 1.02007, 1.171),
        (2, 0.580599, 0.575019),
    ]
    assert "step_time_s" not in got[0].metrics  # (the elapsed time is the run's, not the iteration's)
    md = [
        "| Epoch | Train Loss | Train Acc | Val Loss | Val Acc | Learning Rate |",
        "|-------|------------|-----------|----------|----------|---------------|",
        "|     0 | 7.0433 | 0.11% | 6.9336 | 0.14% | 0.000559 |",
        "|     1 | 6.8873 | 0.14% | 7.1428 | 0.00% | 0.001236 |",
    ]
    got = steps(feed(md))
    assert [(s.metrics["epoch"], s.metrics["loss"], s.metrics["eval_loss"], s.metrics["lr"]) for s in got] == [
        (0, 7.0433, 6.9336, 0.000559),
        (1, 6.8873, 7.1428, 0.001236),
    ]


def test_a_batch_counter_in_a_banner_with_its_figures_one_a_line_under_it() -> None:
    # picwoon/votenet log_sunrgbd/log_train.txt; `batch = 405` (the epoch's size) is no banner
    lines = []
    for batch, loss in ((40, 17.15935), (50, 15.463125)):
        lines += [
            f" ---- batch: {batch:03d} ----",
            "mean box_loss: 1.494865",
            f"mean loss: {loss:f}",
            "mean obj_acc: 0.980660",
        ]
    got = steps(feed(lines))
    assert [(s.step, s.metrics["loss"]) for s in got] == [(40, 17.15935), (50, 15.463125)]
    reid = []
    for epoch, loss in ((64, 0.0978), (65, 0.0952), (66, 0.0921)):
        reid += [f"Epoch {epoch}/69", "----------", "batch = 405", f"train Loss: {loss} Reg: 0.0000 Acc: 0.4001", ""]
    assert [(s.metrics["epoch"], s.metrics["loss"]) for s in steps(feed(reid))] == [
        (64, 0.0978),
        (65, 0.0952),
        (66, 0.0921),
    ]


def test_the_time_series_librarys_vali_loss_is_the_evaluation() -> None:
    # Informer / Autoformer / Time-Series-Library: `Vali` is the validation set, `Test` the test set
    line = "Epoch: 2, Steps: 225 | Train Loss: 0.1633144 Vali Loss: 0.1416130 Test Loss: 0.1429765"
    reading = read_fields(line)
    assert reading is not None
    assert reading.metrics == {"loss": 0.1633144, "eval_loss": 0.141613, "test_loss": 0.1429765}


def test_a_clock_printed_where_a_step_time_would_be_is_the_elapsed_time() -> None:
    # a hand-written GPT-2 loop: `step   4360 | loss 0.195 | best 0.193 | 2137.9s`, seconds since it began
    lines = [f"step {s:6d} | loss {2 - s / 1e4:.6f} | best 0.1 | {0.49 * s + 1.3:.1f}s" for s in range(4360, 4460, 10)]
    got = steps(feed(lines))
    assert [("step_time_s" in s.metrics, "elapsed_s" in s.metrics) for s in got][2:5] == [
        (True, False),  # (three rises decide: the first prints are taken as printed)
        (False, True),
        (False, True),
    ]
    assert got[-1].metrics["elapsed_s"] == round(0.49 * 4450 + 1.3, 1)


def test_step_times_that_rise_by_chance_stay_step_times() -> None:
    # llama2.c's per-iteration milliseconds, a few rises in a row among the noise; pyiqa's `time (data)`
    times = [9.71, 9.83, 9.95, 9.62, 9.9, 9.7, 9.84, 9.99, 9.6]
    lines = [f"{600 + 10 * i} | loss 6.1 | lr 5e-05 | {t * 1000:.2f}ms | mfu 0.19%" for i, t in enumerate(times)]
    assert all("elapsed_s" not in s.metrics for s in steps(feed(lines)))
    pyiqa = [(1100, 1.758), (1200, 1.886), (1300, 2.047), (1400, 2.023)]
    lines = [f"[epoch: 1, iter: {i:,}, lr:(2.7e-05,)] [time (data): {t} (0.52)] l_mos: 8.4e-04" for i, t in pyiqa]
    assert all("elapsed_s" not in s.metrics for s in steps(feed(lines)))


def test_a_step_time_that_grows_with_the_step_stays_a_step_time() -> None:
    # a leak: `time/step` rising linearly with the step looks like a clock by its numbers; its label says not
    lines = [f"step {s} | loss {2 - s / 1e4:.3f} | time/step {0.004 * s + 0.02:.3f}s" for s in range(50, 2050, 50)]
    assert all("elapsed_s" not in s.metrics for s in steps(feed(lines)))

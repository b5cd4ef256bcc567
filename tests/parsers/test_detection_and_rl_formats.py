"""YOLOv5 / YOLOX tables, Composer's per-metric lines, RLlib result dicts, ColossalAI Trainer bars,
and debug prints over a tqdm bar.

Lines from the understanding corpus: ultralytics/yolov5 issue 4963 and PR 10314, YOLOX issues 32 and
1701, mosaicml/examples resnet_cifar README, ray-project/ray issue 3908 and PR 27093, ColossalAI issues
1375 and 3490. The old YOLOv5 `GIoU ... total` header is YOLOv5's 2020 train.py `s = ('%10s' * 8) % (...)`.
"""

from __future__ import annotations

from _feed import events, feed, steps

V5_HEADER = " Epoch   gpu_mem       box       obj       cls    labels  img_size"
V5_ROW = "      {e}/99     2.64G      {v}       {v}       {v}         4       416: 100%|██████████| 7/7 [00:15<00:00,  2.27s/it]"


def test_yolov5_row_counts_epochs_from_zero() -> None:
    (s,) = steps(feed([V5_HEADER, V5_ROW.format(e=1, v="0.0521")]))
    assert s.step == 1 * 7 + 7
    assert s.metrics["epoch"] == 1
    assert s.metrics["step_time_s"] == 2.27
    assert s.metrics["box_loss"] == 0.0521
    assert s.metrics["instances"] == 4
    assert "loss" not in s.metrics  # no total printed


def test_yolov5_nan_losses_are_one_nan_event() -> None:
    records = feed([V5_HEADER, V5_ROW.format(e=1, v="nan"), V5_ROW.format(e=1, v="nan")])
    (nan,) = events(records, "nan")
    assert nan.data == {"metric": "box_loss"}
    assert events(feed([V5_HEADER, V5_ROW.format(e=1, v="0.05")]), "nan") == []


def test_yolov5_2020_total_column_is_the_loss() -> None:
    header = "     Epoch   gpu_mem      GIoU       obj       cls     total   targets  img_size"
    row = "      0/299     3.51G   0.09096   0.08214   0.02734       nan        61       640: 100%|##########| 20/20 [00:10<00:00,  1.85it/s]"
    records = feed([header, row])
    (s,) = steps(records)
    assert s.step == 20
    assert s.metrics["giou_loss"] == 0.09096
    assert [e.data["metric"] for e in events(records, "nan")] == ["loss"]  # once, by the runner


def test_yolov5_v7_bar_without_rate() -> None:
    header = "      Epoch    GPU_mem   box_loss   obj_loss   cls_loss  Instances       Size"
    row = "        0/1      22.4G    0.07281    0.08384    0.06359        199        640: 100%|██████████| 1849/1849 13:15"
    (s,) = steps(feed([header, row]))
    assert (s.step, s.metrics["epoch"], s.metrics["obj_loss"]) == (1849, 0, 0.08384)
    assert "step_time_s" not in s.metrics


def test_yolox_line_numbered_paste() -> None:
    rest = "mem: 7751Mb, iter_time: 0.666s, data_time: 0.047s, total_loss: 11.2, iou_loss: 3.8, lr: 3.830e-04, size: 672, ETA: 2 days, 18:48:57"
    lines = [
        f"2021-07-21 02:58:47 | INFO     | yolox.core.trainer:250 - epoch: 1/300, iter: 640/925, {rest}",
        f"671 2021-07-21 02:58:54 | INFO     | yolox.core.trainer:250 - epoch: 2/300, iter: 650/925, {rest}",
    ]
    first, second = steps(feed(lines))
    assert (first.step, second.step) == (640, 925 + 650)
    assert first.metrics["loss"] == 11.2
    assert first.metrics["step_time_s"] == 0.666
    assert first.metrics["max_mem_gib"] == 7751 / 1024
    assert first.metrics["total_steps"] == 300 * 925
    assert not {"yolox_core_trainer", "size", "eta", "eta_s"} & first.metrics.keys()


def test_yolox_wrapped_line_is_joined() -> None:
    lines = [
        "                  - epoch: 1/300, iter: 10/12, mem: 2956Mb, iter_time: 0.771s, data_time: 0.001s, total_loss: 5.5, cls_loss:",
        "1.1, lr: 4.340e-04, size: 640, ETA: 0:46:06",
        "2023-08-10 08:54:49 | INFO     | yolox.core.trainer:352 - Save weights to ./YOLOX_outputs",
    ]
    records = feed(lines)
    (s,) = steps(records)
    assert (s.step, s.metrics["cls_loss"], s.metrics["lr"]) == (10, 1.1, 4.34e-4)
    assert len(events(records, "checkpoint")) == 1


def test_a_custom_epoch_iter_line_is_not_yolox() -> None:
    lines = [f"epoch: 0/10, iter: {i}/100, loss: 2.{i}" for i in (10, 20, 30)]
    assert [s.step for s in steps(feed(lines))] == [10, 20, 30]


def test_composer_per_metric_lines_are_one_step_per_position() -> None:
    lines = [
        "[epoch=0][batch=16/625]: memory/alloc_retries: 3",
        "[epoch=0][batch=16/625]: loss/train/total: 7.1292",
        "[epoch=0][batch=17/625]: lr-DecoupledSGDW/group0: 0.0066",
        "[epoch=0][batch=17/625]: trainer/global_step: 17",
        "[epoch=0][batch=17/625]: loss/train/total: 7.1243",
        "[epoch=1][batch=2/625]: loss/train/total: 6.5",
    ]
    got = steps(feed(lines))
    assert [(s.step, s.metrics["loss"]) for s in got] == [(16, 7.1292), (17, 7.1243), (627, 6.5)]
    assert got[1].metrics["lr"] == 0.0066
    assert "trainer_global_step" not in got[1].metrics
    assert got[2].metrics["epoch"] == 1


def test_composer_epoch_block_header() -> None:
    lines = ["[epoch=1][batch=5/5]:", "\t Train time/batch: 4", "\t Train loss/train/total: 8.4213", "done"]
    (s,) = steps(feed(lines))
    assert (s.step, s.metrics["loss"], s.metrics["epoch"]) == (4, 8.4213, 1)
    assert "total_steps" not in s.metrics  # 5 batches of this epoch, not of the run


def test_rllib_pretty_print_result() -> None:
    lines = [
        "custom_metrics: {}",
        "date: 2019-01-31_21-56-10",
        "episode_reward_mean: -9299.503448275862",
        "hist_stats:",
        "  episode_reward: [63.0, 12.0,",
        "    24.0]",
        "info:",
        "  default:",
        "    cur_lr: 4.999999873689376e-05",
        "    total_loss: 15966464.0",
        "config:",
        "  lr: 0.1",
        "  train_batch_size: 4000",
        "node_ip: 192.168.166.180",
        "pid: 123",
        "time_this_iter_s: 20.5",
        "training_iteration: 3",
        "",
        "step 5 | loss 2.0",
    ]
    (s,) = steps(feed(lines))
    assert s.step == 3
    assert s.metrics == {
        "episode_reward_mean": -9299.503448275862,
        "lr": 4.999999873689376e-05,
        "loss": 15966464.0,
        "step_time_s": 20.5,
    }


def test_colossalai_trainer_bar_counts_across_epochs() -> None:
    line = (
        "[Epoch 0 / Train]:   0% 420/788222 [28:47<810:51:33,  3.71s/it, loss=nan, lr=2.5e-5, "
        "throughput=0.29466 sample_per_sec, 2.4123 Tflops][09/30/22 02:45:43] WARNING  colossalai - ShardedOptimizerV2"
    )
    records = feed([line])
    (s,) = steps(records)
    assert s.step == 420
    assert (s.metrics["samples_per_s"], s.metrics["tflops"], s.metrics["step_time_s"]) == (0.29466, 2.4123, 3.71)
    assert "throughput" not in s.metrics and "total_steps" not in s.metrics
    assert len(events(records, "nan")) == 1


def test_debug_prints_over_a_bar() -> None:
    lines = [
        "chosen reward tensor([-0.0287], device='cuda:0', dtype=torch.float16,       | 0/100 [00:00<?, ?it/s]",
        "loss tensor(0.6924, device='cuda:0', dtype=torch.float16, grad_fn=<MeanBackward0>)",
        "chosen reward tensor([nan], device='cuda:0', grad_fn=<SqueezeBackward1>)     | 1/100 [00:01<03:15,  1.97s/it, dist=0, acc=0]",
        "loss tensor(nan, device='cuda:0', dtype=torch.float16, grad_fn=<MeanBackward0>)",
    ]
    records = feed(lines)
    got = steps(records)
    assert [(s.step, s.metrics.get("loss")) for s in got][:2] == [(None, 0.6924), (1, None)]
    assert got[1].metrics["total_steps"] == 100 and got[1].metrics["step_time_s"] == 1.97
    assert [e.data["metric"] for e in events(records, "nan")] == ["loss"]
    # a tensor printed without grad_fn (an evaluation value, a dataset statistic) once is no progress
    assert steps(feed(["loss tensor(0.6924, device='cuda:0')"])) == []


def test_an_epoch_table_goes_on_after_other_output_but_not_backwards() -> None:
    """Chainer's PrintReport rows come between its progress bar's lines: the table is still read
    after them. A line of numbers whose step goes back, or that holds words, is not one of its rows."""
    records = feed(
        (
            "epoch       iteration   main/loss   validation/main/loss  elapsed_time\n"
            "0           100         622.995                           114.502\n"
            "       100 iter, 0 epoch / 100 epochs\n"
            "1           200         500.5       480.25                152.819\n"
            "took a while to get here\n"
            "0           50          9.0         9.0                   1.0\n"
            "note        300         done        now                   2.0\n"
            "1           300         450.0       430.0                 190.0\n"
        ).splitlines()
    )
    got = steps(records)
    assert [(s.step, s.metrics.get("loss"), s.metrics.get("eval_loss")) for s in got] == [
        (100, 622.995, None),
        (200, 500.5, 480.25),
        (300, 450.0, 430.0),
    ]
    assert all("iteration" not in s.metrics for s in got)  # the step column is the step, not a metric


def test_openai_logger_blocks_take_their_step_from_step_or_steps() -> None:
    """baselines' `dump_tabular` (deepq: `steps`) and guided/improved-diffusion's (`step 1.11e+04`)."""
    rule = "-" * 38
    records = feed(
        [
            rule,
            "| % time spent exploring  | 1        |",
            "| episodes                | 5100     |",
            "| mean 100 episode reward | -21      |",
            "| steps                   | 4008662  |",
            rule,
            "------------------------",
            "| grad_norm | 0.0913   |",
            "| loss      | 0.0621   |",
            "| step      | 1.11e+04 |",
            "------------------------",
        ]
    )
    got = steps(records)
    assert [s.step for s in got] == [4008662, 11100]
    assert got[1].metrics["loss"] == 0.0621 and "step" not in got[1].metrics


def test_a_table_does_not_take_a_later_report_as_its_rows() -> None:
    """A fastai table, then sklearn's classification_report much later: its rows are not epochs."""
    lines = [
        "epoch     train_loss  valid_loss  accuracy  time",
        "0         0.512       0.430       0.810     00:11",
        "1         0.401       0.380       0.840     00:11",
        "2         0.350       0.360       0.850     00:11",
    ]
    lines += [f"note {i}" for i in range(15)]
    lines += [
        "              precision    recall  f1-score   support",
        "           3       0.93      0.92      0.92      1032",
    ]
    assert [s.step for s in steps(feed(lines))] == [0, 1, 2]


def test_catalyst_takes_only_its_loaders_lines() -> None:
    got = steps(feed(["Epoch (1/10) loss: 0.512 | acc: 0.81", "Epoch (2/10) loss: 0.498 | acc: 0.83"]))
    assert all("eval_loss" not in s.metrics for s in got)


def test_rsl_rl_clock_values_are_seconds() -> None:
    """rsl_rl 2 / Isaac Lab print `Time elapsed: 00:00:13` and `ETA: 00:28:32` in the box."""
    got = steps(
        feed(
            [
                "#" * 80,
                "                        Learning iteration 5/101",
                "                   Time elapsed: 00:00:13",
                "                            ETA: 00:28:32",
                "                   Mean reward: 1.5",
            ]
        )
    )
    assert [(s.step, s.metrics["elapsed_s"], s.metrics["eta_s"], s.metrics["reward"]) for s in got] == [
        (5, 13.0, 1712.0, 1.5)
    ]

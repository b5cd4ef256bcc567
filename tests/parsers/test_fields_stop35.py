"""Line forms of held-out logs read at stop 35 (each case names its source): a unit that is the next
field's key, a time over N steps, a total time, an evaluation line's own figures, a bar's total loss,
a table without a step column, a save to the same place after more steps."""

from __future__ import annotations

import pytest
from _feed import events, feed, steps

from trainwatch.parsers.fields import read_fields


def _steps(lines: list[str]) -> list[tuple[int | None, dict[str, float]]]:
    return [(s.step, dict(s.metrics)) for s in steps(feed(lines))]


def test_a_unit_word_before_a_colon_is_the_next_fields_key() -> None:
    # tdrussell/diffusion-pipe issue #410 (and Megatron-DeepSpeed's own print): `iter time (s): X samples/sec: Y`
    got = _steps(
        [
            "steps: 1 loss: 0.0614 iter time (s): 531.283 samples/sec: 0.008",
            "steps: 2 loss: 0.0571 iter time (s): 532.811 samples/sec: 0.008",
        ]
    )
    assert got[1] == (2, {"loss": 0.0571, "step_time_s": 532.811, "samples_per_s": 0.008})


def test_n_steps_take_t_seconds_is_a_time_over_n_steps() -> None:
    # awslabs/dgl-ke issue #136: the time the last 1000 steps took, on a line of its own
    reading = read_fields("[proc 0][Train] 1000 steps take 8.839 seconds")
    assert reading is not None and reading.metrics["step_time_s"] == pytest.approx(0.008839)


def test_a_total_time_is_no_step_time_and_an_iter_mean_loss_is_the_loss() -> None:
    # xiangwang1223/knowledge_graph_attention_network issue #18 (KGAT's KG training line, once per epoch)
    reading = read_fields("KG Training: Epoch 0006 Total Iter 0072 | Total Time 5.3s | Iter Mean Loss 0.5235")
    assert reading is not None
    assert reading.metrics == {"total_time_s": 5.3, "loss": 0.5235}
    timed = read_fields("Epoch 3 | time: 5.3s | loss 0.5")  # (a bare `time` is still the step's)
    assert timed is not None and timed.metrics["step_time_s"] == 5.3


def test_an_evaluation_line_keeps_its_time_and_count_as_the_evaluations() -> None:
    # kimiyoung/transformer-xl issue #15: `| Eval 2 at step 8000 | time: ... | valid loss 7.39 | valid ppl ...`
    got = _steps(
        [
            "| epoch   1 step     7800 |   7800 batches | lr 0.000249 | ms/batch 619.83 | loss  7.42 | ppl  1661.560",
            "| epoch   1 step     8000 |   8000 batches | lr 0.000249 | ms/batch 619.85 | loss  7.43 | ppl  1689.380",
            "| Eval   2 at step     8000 | time: 2484.77s | valid loss  7.39 | valid ppl  1616.071",
            "| epoch   1 step     8200 |   8200 batches | lr 0.000249 | ms/batch 672.76 | loss  7.43 | ppl  1680.628",
        ]
    )
    evaluation = [m for step, m in got if step == 8000 and "eval_loss" in m]
    assert evaluation and evaluation[0]["eval_loss"] == 7.39
    assert evaluation[0]["eval_step_time_s"] == 2484.77 and "eval" not in evaluation[0]
    assert [m["step_time_s"] for step, m in got if step == 8000] == [pytest.approx(0.61985)] * len(evaluation)
    assert [m["step_time_s"] for step, m in got if step == 8200] == [pytest.approx(0.67276)]


def test_a_bars_total_loss_in_its_description_is_the_loss() -> None:
    # CarperAI/trlx issue #319: PPO's tqdm description holds the losses
    got = _steps(
        [
            "[losses/total_loss: 0.22 | losses/policy_loss: 0.13 | losses/value_loss: 0.42]:   2%|  | 76/3200 [14:53<7:36:46,  8.77s/it]",
            "[losses/total_loss: 0.80 | losses/policy_loss: 0.73 | losses/value_loss: 0.34]:   2%|  | 77/3200 [14:54<5:44:06,  6.61s/it]",
        ]
    )
    assert [(step, m["loss"], m["losses_policy_loss"]) for step, m in got] == [(76, 0.22, 0.13), (77, 0.8, 0.73)]


def test_a_tab_separated_table_of_losses_without_a_step_column_is_read_row_by_row() -> None:
    """...in a source that numbers no steps; beside step lines its rows are summaries no step takes."""
    # PGNet's committed train log: a header of losses, then one row of numbers per report
    got = _steps(
        [
            "total loss\tscore loss\tborder loss\tdirec loss\tctc loss\t",
            "46.604204\t0.246368\t0.176002\t0.077165\t9.220934\t",
            "41.765572\t0.220951\t0.146288\t0.062297\t8.267207\t",
        ]
    )
    assert [(step, m["loss"], m["ctc_loss"]) for step, m in got] == [
        (None, 46.604204, 9.220934),
        (None, 41.765572, 8.267207),
    ]


def test_a_table_without_a_step_column_beside_step_lines_gives_no_steps() -> None:
    got = _steps(
        [
            "step 100 loss 0.52 lr 1e-4",
            "step 200 loss 0.50 lr 1e-4",
            "train loss\tval loss\tval acc",
            "0.91\t0.61\t0.8",
            "step 300 loss 0.49 lr 1e-4",
        ]
    )
    assert [step for step, _m in got] == [100, 200, 300]


def test_aligned_text_without_a_step_column_or_a_loss_is_no_table() -> None:
    assert _steps(["name\tsize\tmodified", "12\t4096\t3", "13\t8192\t4"]) == []
    assert _steps(["accuracy\tprecision", "0.9\t0.8", "0.91\t0.82"]) == []  # (no loss: a results table)


def test_u2net_ite_is_the_step_and_irn_imps_are_images_per_second() -> None:
    # xuebinqin/U-2-Net issue #299; jiwoon-ahn/irn issue #13
    u2 = _steps(
        [
            "[epoch:   2/100000, batch:  8268/13617, ite: 1824] train loss: 1.519413, tar: 0.169732 ",
            "[epoch:   2/100000, batch:  8280/13617, ite: 1825] train loss: 1.519641, tar: 0.169760 ",
        ]
    )
    assert [(step, m["loss"]) for step, m in u2] == [(1824, 1.519413), (1825, 1.519641)]
    irn = _steps(
        [
            "step: 2300/ 7975 loss:0.0868 0.0423 0.0155 0.0014 imps:26.6 lr: 0.0711 etc:Thu Apr 23 02:17:11 2020",
            "step: 2400/ 7975 loss:0.0871 0.0420 0.0151 0.0014 imps:26.9 lr: 0.0698 etc:Thu Apr 23 02:17:49 2020",
        ]
    )
    assert [(step, m["samples_per_s"]) for step, m in irn] == [(2300, 26.6), (2400, 26.9)]


def test_a_save_to_the_same_place_after_more_steps_is_another_checkpoint() -> None:
    # karpathy/llama2.c issue #461: `saving checkpoint to out` at every evaluation
    steps = [f"{n} | loss 5.6 | lr 4.996e-05 | 9800.58ms | mfu 0.19%" for n in range(490, 610, 10)]
    records = feed([*steps[:2], "saving checkpoint to out", *steps[2:11], "saving checkpoint to out", steps[11]])
    assert [e.step for e in events(records, "checkpoint")] == [500, 590]
    # each rank's line of one save, and `Saving` / `Saved` around a step line, stay one save
    ranks = feed(
        [
            "[rank0]: step 99 | loss 0.5",
            "[rank0]: step 100 | loss 0.52",
            "[rank1]: step 100 | loss 0.52",
            "[rank0]: saving checkpoint to out",
            "[rank0]: step 101 | loss 0.5",
            "[rank1]: saving checkpoint to out",
        ]
    )
    assert len(events(ranks, "checkpoint")) == 1
    pair = feed(
        [
            "step 100 loss 0.5",
            "step 200 loss 0.4",
            "Saving checkpoint to ./ckpt/latest.pt ...",
            "step 300 loss 0.3",
            "Saved checkpoint to ./ckpt/latest.pt",
        ]
    )
    assert len(events(pair, "checkpoint")) == 1


def test_a_deepspeed_overflow_line_cut_by_a_hard_wrap_is_still_an_overflow() -> None:
    # CarperAI/trlx issue #319: the terminal wrapped the line inside `scale`
    records = feed(
        [
            "[2023-02-21 22:12:48,690] [INFO] [stage_1_and_2.py:1762:step] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss sc",
            "ale: 4096.0, reducing to 2048.0",
        ]
    )
    (overflow,) = events(records, "overflow")
    assert overflow.rank == 0 and "attempted_scale" not in overflow.data


def test_saving_state_with_its_iteration_and_writing_the_checkpoint_are_saves() -> None:
    # amdegroot/ssd.pytorch (a committed train log): the save glued after the iteration's line
    ssd = feed(
        [
            "iter 1980 || Loss: 1.1905 ||",
            "iter 1990 || Loss: 1.1900 ||",
            "iter 2000 || Loss: 1.1745 || Saving state, iter: 2000",
        ]
    )
    assert [e.step for e in events(ssd, "checkpoint")] == [2000]
    # facebookresearch/PyTorch-BigGraph PR #67
    pbg = feed(["2019-06-15 16:20:04  Writing the checkpoint...", "2019-06-15 16:20:04  Writing checkpoint metadata"])
    assert len(events(pbg, "checkpoint")) == 1


def test_a_value_named_before_the_step_it_was_read_at() -> None:
    # a committed notebook running TF's guide to custom training loops (`... at step %d: %.4f`)
    got = _steps(
        [
            "Start of epoch 0",
            "Training loss (for one batch) at step 0: 2.5942912101745605",
            "Seen so far: 4 samples",
            "Training loss (for one batch) at step 100: 2.7891650199890137",
            "Seen so far: 404 samples",
        ]
    )
    assert [(step, m["loss"]) for step, m in got] == [(0, 2.5942912101745605), (100, 2.7891650199890137)]
    reading = read_fields("validation loss at epoch 3 = 0.41")
    assert reading is not None and reading.epoch == 3 and reading.metrics == {"eval_loss": 0.41}
    assert read_fields("step 5: 0.3") is not None and read_fields("step 5: 0.3").metrics == {}  # (no name: no figure)


def test_a_loops_own_nan_check_is_a_nan_event_at_the_step_it_names() -> None:
    records = feed(
        [
            "Training loss (for one batch) at step 2300: 3.11256742477417",
            "NaN or Inf detected in model parameters after step 2361 in epoch 0.",
            "Stopping training due to NaN or Inf in model parameters at step 2361 in epoch 0.",
        ]
    )
    (nan,) = events(records, "nan")  # (the stop right under it is the same incident)
    assert nan.step == 2361 and nan.data == {"metric": "parameters"}
    assert events(records, "crash"), "the loop said it stops"
    for quiet in ("No NaN detected in gradients", "NaN values found: 0", "nan check passed"):
        assert events(feed([quiet]), "nan") == [], quiet


def test_a_step_header_with_its_current_step_takes_the_figures_under_it() -> None:
    # yangxue0827/RotationDetection (a committed README): a block per report under a rule of asterisks
    got = _steps(
        [
            "*" * 72,
            "2021-12-20 19:13:05: global_step:20  current_step:20",
            "speed: 4.591s, remaining training time: 05:07:29:27",
            "total_losses:1.578",
            "cls_loss:1.138",
            "reg_loss:0.440",
            "",
            "*" * 72,
            "2021-12-20 19:13:19: global_step:40  current_step:40",
            "speed: 0.462s, remaining training time: 00:12:49:07",
            "total_losses:1.588",
            "cls_loss:1.136",
            "reg_loss:0.451",
        ]
    )
    assert [(step, m["loss"], m["cls_loss"]) for step, m in got] == [(20, 1.578, 1.138), (40, 1.588, 1.136)]


def test_an_acronym_names_its_loss_and_a_total_loss_is_the_loss() -> None:
    # a 3D VAE's committed train log: the total beside its terms, each term named by an acronym or a word
    reading = read_fields(
        "Epoch 3, Step 17400: Reconstruction Loss=0.07903820276260376, KL Loss=0.0031131207942962646, "
        "Total Loss=0.07997214049100876"
    )
    assert reading is not None and reading.step == 17400
    assert reading.metrics == {
        "reconstruction_loss": 0.07903820276260376,
        "kl_loss": 0.0031131207942962646,
        "loss": 0.07997214049100876,
    }
    level = read_fields("INFO loss: 0.5 step 3")  # (a level before a label is no part of it)
    assert level is not None and level.metrics == {"loss": 0.5}

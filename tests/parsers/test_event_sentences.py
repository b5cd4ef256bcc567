"""Events told by a sentence or a glued header rather than a block of their own: tracebacks glued
after a progress bar or `^C`, IPython tracebacks and `SystemExit`, NaN/inf sentences, fp16 overflow
notes, end-of-run lines.

Lines from the understanding corpus (tests/corpus: diffusers PR 2002, ptlflow issue 46, pytorch/examples
issue 148, tsai issue 639, xview3-reference issue 18, pytorch/vision issue 1631, ESPnet issue 186,
TinyLlama issue 153, fairseq issue 1967, litgpt issue 1110, x-transformers train_enwik8.py); the apex
overflow line as printed by apex.amp's scaler; the others are the negative cases a user would check.
"""

from __future__ import annotations

from _feed import events, feed, steps

BAR_THEN_TB = (
    "Epoch 10:   0%|                                        | 0/5878 [00:00<?, ?it/s]Traceback (most recent call last):"
)


def test_traceback_glued_after_a_lightning_bar_is_a_traceback() -> None:
    records = feed([BAR_THEN_TB, '  File "train.py", line 153, in <module>', "    train(args)"])
    (tb,) = events(records, "traceback")
    assert tb.line == 1  # where its header was printed
    assert tb.severity == "error"


def test_traceback_glued_after_a_generic_bar_keeps_the_bar_step() -> None:
    bar = "Steps:   0%|          | 1/83300 [00:08<204:55:05,  8.86s/it, lr=0.0001, step_loss=0.209]"
    records = feed([bar + "Traceback (most recent call last):", '  File "./train.py", line 891, in <module>'])
    assert len(events(records, "traceback")) == 1
    (s,) = steps(records)
    assert (s.step, s.metrics["loss"], s.metrics["total_steps"]) == (1, 0.209, 83300)


def test_ctrl_c_echo_before_the_header() -> None:
    records = feed(
        [
            "^CTraceback (most recent call last):",
            '  File "main.py", line 292, in <module>',
            "Process Process-31:",
            "    main()",
            "KeyboardInterrupt",
        ]
    )
    (tb,) = events(records, "traceback")
    assert tb.message == "KeyboardInterrupt"
    assert [s.data["signal"] for s in events(records, "signal")] == ["SIGINT"]


def test_the_words_inside_a_message_are_no_header() -> None:
    records = feed(["WARNING: see 'Traceback (most recent call last):' in the worker log for details"])
    assert events(records, "traceback") == []


def test_a_stack_dump_is_not_a_traceback() -> None:
    records = feed(
        [
            "step 10 | loss 2.0",
            "Stack (most recent call last):",
            '  File "train.py", line 12, in <module>',
            "    main()",
        ]
    )
    assert events(records, "traceback") == []


def test_ipython_traceback_names_its_exception_in_the_header() -> None:
    records = feed(
        [
            "---------------------------------------------------------------------------",
            "KeyboardInterrupt                         Traceback (most recent call last)",
            r"~\AppData\Local\Temp\ipykernel_13020\4198329076.py in <module>",
            "----> 1 learn.fit_one_cycle(25, lr_max=1e-3)",
            "      2 learn.save('stage1')",
        ]
    )
    (tb,) = events(records, "traceback")
    assert tb.data["exception"] == "KeyboardInterrupt"
    assert [s.data["signal"] for s in events(records, "signal")] == ["SIGINT"]


def test_loss_nan_stopping_training_then_ipython_systemexit_is_one_crash() -> None:
    records = feed(
        [
            "Loss is nan, stopping training",
            "{'loss_classifier': tensor(1.3285, device='cuda:0', grad_fn=<NllLossBackward0>)}",
            "",
            "An exception has occurred, use %tb to see the full traceback.",
            "",
            "SystemExit: 1",
        ]
    )
    (nan,) = events(records, "nan")
    assert nan.data == {"metric": "loss"}
    (crash,) = events(records, "crash")
    assert crash.line == 1


def test_ipython_systemexit_alone() -> None:
    note = "An exception has occurred, use %tb to see the full traceback."
    (crash,) = events(feed([note, "", "SystemExit: 2"]), "crash")
    assert crash.data["exitcode"] == 2
    assert events(feed([note, "", "SystemExit: 0"]), "crash") == []
    assert events(feed(["SystemExit: 1"]), "crash") == []  # no note: not IPython's report


def test_loss_inf_stopping_training_is_a_crash() -> None:
    records = feed(["Loss is inf, stopping training"])
    assert len(events(records, "crash")) == 1
    assert len(events(records, "nan")) == 1


def test_grad_norm_is_nan_warning() -> None:
    line = "2018-05-23 13:05:13,682 (asr_chainer:132) WARNING: grad norm is nan. Do not update model."
    (nan,) = events(feed([line]), "nan")
    assert nan.data == {"metric": "grad_norm"}
    assert events(feed([line]), "crash") == []  # the update is skipped, training goes on
    assert events(feed(["loss (=250000064.000000) is not correct"]), "nan") == []


def test_nan_in_a_metrics_summary() -> None:
    records = feed(
        ["***** eval metrics *****", "  epoch                   =        5.0", "  eval_loss               =        nan"]
    )
    (nan,) = events(records, "nan")
    assert nan.data == {"metric": "eval_loss"}
    assert events(feed(["  max_grad_norm = inf", "  accuracy = nan"]), "nan") == []


def test_a_loop_printing_its_loss_gets_one_nan_event_per_line() -> None:
    lines = ["training loss: 1.30", "training loss: 1.25", "training loss: 1.20", "training loss: nan"]
    assert len(events(feed(lines), "nan")) == 1


def test_overflow_notes_lower_the_loss_scale() -> None:
    records = feed(
        [
            "2020-04-05 18:47:19 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 64.0",
            "2021-01-01 00:00:00 | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 32.0",
            "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0",
            "2025-04-10 16:54:20,197 [WARNING] overflow, still update, loss scale adjust to 1024.0",  # MindYOLO
        ]
    )
    assert [e.data["new_scale"] for e in events(records, "overflow")] == [64, 32, 16384, 1024]
    assert events(feed(["integer overflow in tokenizer"]), "overflow") == []


def test_training_time_total_is_the_end() -> None:
    records = feed(
        [
            "Epoch 5 | iter 965 step 965 | loss train: 1.182, val: 1.057 | iter time: 743.31 ms (step)",
            "Training time: 583.36s",
            "Memory used: 14.49 GB",
        ]
    )
    (done,) = events(records, "finished")
    assert done.line == 2
    assert events(feed(["Training time 1 day, 2:03:04"]), "finished")
    assert events(feed(["Epoch 3 training time: 12s", "Training time per epoch: 12s"]), "finished") == []


def test_training_bar_at_its_total_is_the_end() -> None:
    bar = "training: 100%|██████████| {n}/100000 [8:40:59<00:00,  3.20it/s]"
    records = feed([bar.format(n=99998), bar.format(n=100000)])
    (done,) = events(records, "finished")
    assert done.step == 100000
    loading = [
        "Loading checkpoint shards:  50%|#####     | 1/2 [00:05<00:05,  2.61s/it]",
        "Loading checkpoint shards: 100%|##########| 2/2 [00:10<00:00,  2.61s/it]",
        "Epoch 3: 100%|██████████| 64/64 [00:10<00:00,  6.40it/s, loss=0.1]",
    ]
    assert events(feed(loading), "finished") == []

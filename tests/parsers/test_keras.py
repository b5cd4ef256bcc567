"""Keras fit() lines. Sources: /work/shared/real_logs/keras3__notebook_stream_ansi_decoded.log (Keras 3),
abhi8893/tensorflow-deep-learning-mrdbourke issue #8 (tf.keras 2, `781us/step`), keras-team/keras
PR #8169 (Keras 2 with ETA and val metrics), JesperDramsch/keras-complex issue #22 (verbose=2)."""

from __future__ import annotations

from _pipeline import read
from conftest import REAL_LOGS, SAMPLES
from fw_recorder import run

from trainwatch.parsers.formats.keras import KerasParser
from trainwatch.records import Step


def test_keras3_epoch_line() -> None:
    rec, understood = run(KerasParser(), (REAL_LOGS / "keras3__notebook_stream_ansi_decoded.log").read_bytes())
    # line 1 has no `Epoch e/E` before it (the slice starts mid-run): not placed, not guessed
    assert understood == [False, True, True, True]
    (s,) = rec.steps
    assert s.step == 313 + 313
    assert s.data["metrics"] == {
        "accuracy": 0.8825,
        "loss": 0.2964,
        "val_accuracy": 0.8454,
        "eval_loss": 0.3654,
        "epoch": 2.0,
        "step_time_s": 0.160,
    }


def test_keras2_progress_final_and_evaluate() -> None:
    text = (
        "Epoch 3/12\n"
        "29312/60000 [=============>................] - ETA: 2s - loss: 0.0891 - acc: 0.9733\n"
        "60000/60000 [==============================] - 5s 87us/step - loss: 0.3437 - acc: 0.8957 - val_loss: 0.0759 - val_acc: 0.9771\n"
        "60000/60000 [==============================] - 5s 77us/step - loss: 0.1145 - acc: 0.9671\n"
    )
    rec, _ = run(KerasParser(), text)
    a, b, c = rec.steps
    assert a.step == 2 * 60000 + 29312 and a.data["metrics"] == {
        "loss": 0.0891,
        "acc": 0.9733,
        "epoch": 3.0,
        "eta_s": 2.0,
    }
    assert b.step == 3 * 60000
    assert b.data["metrics"]["step_time_s"] == 87e-6 and b.data["metrics"]["eval_loss"] == 0.0759
    # a bar after the epoch's final line with no new header: evaluate()
    assert c.step == 3 * 60000 and c.data["metrics"] == {"eval_loss": 0.1145, "eval_acc": 0.9671}


def test_verbose2_line() -> None:
    rec, _ = run(KerasParser(), "Epoch 2/20\n1079/1079 - 10s - loss: 0.2135 - 10s/epoch - 10ms/step\n")
    (s,) = rec.steps
    assert s.step == 2 * 1079 and s.data["metrics"] == {"loss": 0.2135, "epoch": 2.0, "step_time_s": 0.010}


def test_half_matches_yield_nothing() -> None:
    for text in (
        "Epoch 1/10\n32/31 [==============================] - 0s 781us/step - loss: 1457.4397\n",
        "Epoch 1/10\n32/32 [===== - loss: 1.0\n",
        "Train on 3523 samples, validate on 186 samples\n",
    ):
        rec, _ = run(KerasParser(), text)
        assert rec.steps == [], text


def test_pipeline_on_sample() -> None:
    records, pipeline = read(SAMPLES / "keras__issue8_abhi8893_fit.log")
    steps = [r for r in records if isinstance(r, Step)]
    assert [s.step for s in steps] == [32 * e for e in range(1, 11)]
    assert steps[-1].metrics["loss"] == 25.0970 and steps[0].metrics["step_time_s"] == 781e-6
    assert next(iter(pipeline.readers.values())).parser.stats.not_understood == 0


def test_bar_escaped_by_syslog() -> None:
    # AllenInstitute/deepinterpolation issue #84 (`#010` backspaces, `#015` carriage returns), after an epoch header
    bs = "#010" * 8
    text = (
        "INFO:__main__:Epoch 1/5\n"
        f"INFO:__main__:#0151/2 [==============>...............] - ETA: 10s - loss: 0.9100{bs}"
        f"#0152/2 [==============================] - ETA: 0s - loss: 0.9100 {bs}"
        "#0152/2 [==============================] - 14s 3s/step - loss: 0.9100\n"
    )
    rec, _ = run(KerasParser(), text)
    assert [(c.step, c.data["metrics"]["loss"]) for c in rec.steps] == [(1, 0.91), (2, 0.91), (2, 0.91)]
    assert rec.steps[-1].data["metrics"]["step_time_s"] == 3.0


def test_a_message_glued_after_the_last_value() -> None:
    # TerminateOnNaN printing over the bar (pierluigiferrari/ssd_keras issue #21)
    from _feed import feed, steps

    got = steps(
        feed(
            [
                "Epoch 1/10",
                "  3/234 [..............................] - ETA: 33:37:24 - loss: 44.4110Batch 3: Invalid loss, "
                "terminating training",
            ],
            [KerasParser()],
        )
    )
    assert [(s.step, s.metrics["loss"]) for s in got] == [(3, 44.411)]

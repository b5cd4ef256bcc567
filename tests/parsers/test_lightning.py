"""Lightning bars and ModelCheckpoint messages. Sources: Lightning-AI/pytorch-lightning issues #4225 (bar
frames, each position drawn twice), #14094 (bar with acc postfix, validation bar), #2667 (old checkpoint
message glued to a validation bar), PR #7244 (`Epoch 1, global step 100:` wording); the
`train_loss_step` form from a public repo comment (find_string "train_loss_step=")."""

from __future__ import annotations

from _pipeline import read
from conftest import SAMPLES
from fw_recorder import run

from trainwatch.parsers.formats.lightning import LightningParser
from trainwatch.records import Step


def test_bar_frames_report_the_last_draw_of_each_position() -> None:
    rec, understood = run(LightningParser(), (SAMPLES / "lightning__issue4225_bar_frames.log").read_text())
    assert all(understood)
    assert [(c.step, c.data["metrics"].get("loss")) for c in rec.steps] == [
        (1, 10.473),
        (2, 10.224),
        (3, 10.047),
        (4, 9.926),
        (5, 9.847),
    ]
    assert rec.steps[0].data["metrics"] == {"loss": 10.473, "epoch": 0.0, "step_time_s": 8.77}


def test_postfix_names_and_global_batch_count() -> None:
    text = (
        "Epoch 0:  92%|█████████████████████████████████▉   | 932/1016 [00:33<00:03, 27.70it/s, loss=0.223, v_num=77, acc=0.875]\n"
        "Validation DataLoader 0:  50%|███████████████████████████▊                            | 78/157 [00:02<00:02, 38.79it/s]\n"
        "Epoch 3:   2%|██▉       | 5337/315209 [54:08<52:23:38,  1.64it/s, v_num=v874, train_loss_step=4.630]\n"
    )
    rec, understood = run(LightningParser(), text)
    assert understood == [True, True, True]
    (a, b) = rec.steps
    assert a.step == 932 and a.data["metrics"] == {"loss": 0.223, "acc": 0.875, "epoch": 0.0, "step_time_s": 1 / 27.70}
    assert b.step == 3 * 315209 + 5337
    assert b.data["metrics"]["loss"] == 4.630 and "v_num" not in b.data["metrics"]


def test_checkpoint_message_gives_global_step_eval_metric_and_event() -> None:
    text = "Epoch 1, global step 100: 'val_loss' reached 0.67374 (best 0.67374), saving model to '/ckpt/epoch=1-step=100.ckpt' as top 1\n"
    rec, _ = run(LightningParser(), text)
    assert [(c.step, c.data["metrics"]) for c in rec.steps] == [(100, {"eval_loss": 0.67374, "epoch": 1.0})]
    (ev,) = rec.events
    assert (
        ev.step == 100
        and ev.data["kind"] == "checkpoint"
        and ev.data["data"] == {"path": "/ckpt/epoch=1-step=100.ckpt"}
    )


def test_old_checkpoint_message_is_an_event_only() -> None:
    text = (
        "Epoch 00000: val_loss reached 0.67374 (best 0.67374), saving model to ../checkpoints/epoch=0.ckpt as top 1"
        "████▍  | 137/139 [00:17<00:00,  9.99it/s]\n"
    )
    rec, _ = run(LightningParser(), text)
    assert rec.steps == []
    assert [e.data["data"]["path"] for e in rec.events] == ["../checkpoints/epoch=0.ckpt"]


def test_half_matches_yield_nothing() -> None:
    for text in (
        "Epoch 1, step 48: val_loss was not in top 1",  # PR #7244: no value reached
        "Epoch 400/400: 100%|██████████| 400/400 [07:02<00:00, 1.06s/it, v_num=1, train_loss_step=827]",  # scvi's epoch bar
        "Epoch 0:  33%|███▎      | 6/18 [00:23<00:47,  3",  # cut frame
    ):
        rec, _ = run(LightningParser(), text + "\n")
        assert rec.steps == [], text


def test_pipeline_on_sample() -> None:
    records, pipeline = read(SAMPLES / "lightning__issue4225_bar_frames.log")
    steps = [r for r in records if isinstance(r, Step)]
    assert [s.step for s in steps] == [1, 2, 3, 4, 5]
    assert steps[-1].metrics["loss"] == 9.847
    assert next(iter(pipeline.readers.values())).parser.stats.formats == ["lightning"]


def test_a_counter_logged_in_the_postfix_is_not_a_metric() -> None:
    # NVIDIA/NeMo-Framework-Launcher issue #55: NeMo logs global_step (and Lightning rounds `loss`)
    text = (
        "Epoch 0:   1%|          | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, v_num=, "
        "reduced_train_loss=3.090, global_step=794.0, consumed_samples=1.63e+6]\n"
    )
    rec, _ = run(LightningParser(), text)
    assert [(c.step, c.data["metrics"]) for c in rec.steps] == [
        (795, {"loss": 3.09, "running_loss": 3.1, "consumed_samples": 1.63e6, "epoch": 0.0, "step_time_s": 41.36})
    ]


def test_frames_written_by_sagemaker_as_octal_escapes() -> None:
    # aws-samples/sagemaker-distributed-training-workshop issue #6 (the runner strips the mpirank prefix)
    text = (
        "#015Epoch 0:  50% 1/2 [00:00<00:00,  6.54it/s, loss=2.29, v_num=0]\n"
        "#015Validation DataLoader 0: 100% 1/1 [00:00<00:00, 1113.73it/s]#033[A\n"
        "#015Epoch 0: 100% 2/2 [00:00<00:00, 12.10it/s, loss=2.29, v_num=0, val_acc=0.166]\n"
        "#015Epoch 0:   0% 0/2 [00:00<?, ?it/s, loss=2.29, v_num=0, val_acc=0.166]        "
        "#015Epoch 1:  50% 1/2 [00:00<?, 9.00it/s, loss=2.20, v_num=0, val_acc=0.166]\n"
    )
    rec, understood = run(LightningParser(), text)
    assert all(understood)
    assert [(c.step, c.data["metrics"]["loss"], c.data["metrics"]["epoch"]) for c in rec.steps] == [
        (1, 2.29, 0.0),
        (2, 2.29, 0.0),
        (3, 2.2, 1.0),
    ]

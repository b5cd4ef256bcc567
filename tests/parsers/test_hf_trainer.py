"""HF Trainer dicts and bars. Sources: /work/shared/real_logs/hf_trainer__LMSYS_* (a real Gemma-2 LoRA run,
stdout buffered), huggingface/transformers PR #9613 (TFTrainer banner and dicts with 'step'),
transformers >= 4.47 string-valued dicts as printed in a PBS tutorial's expected output
(find_string "{'loss': '0." hit: 'imdb_sentiment.o*' log), the Trainer summary dict from the
same output."""

from __future__ import annotations

from pathlib import Path

from _pipeline import read
from conftest import REAL_LOGS, SAMPLES
from fw_recorder import run, run_file

from trainwatch.parsers.formats.hf_trainer import HFTrainerParser, parse_log_dict
from trainwatch.records import Event, Step


def read_text_steps(tmp_path: Path, text: str) -> list[Step]:
    """The steps of `text` written to a file and read through the whole pipeline (`\\r` frames included)."""
    path = tmp_path / "train.log"
    path.write_text(text, encoding="utf-8")
    return [r for r in read(path)[0] if isinstance(r, Step)]


SLICE1 = REAL_LOGS / "hf_trainer__LMSYS_slice1_bar_then_buffered_dicts.log"


def test_buffered_burst_keeps_every_dict_and_invents_no_step() -> None:
    rec, understood = run_file(HFTrainerParser(), SLICE1)
    assert all(understood)
    dicts = [c for c in rec.steps if "loss" in c.data["metrics"]]
    losses = [c.data["metrics"]["loss"] for c in dicts]
    # the first dict is glued to bar 200/8264, yet its epoch is 0.0: it was logged ~step 10
    assert losses == [12.4476, 4.7047, 0.6081, 0.5237, 0.5581]
    assert [c.step for c in dicts] == [None] * 5
    assert [c.line for c in dicts] == [1, 2, 3, 4, 5]
    # the bar (confirmed as the training bar by the dicts glued to it) gives step, total and pace
    bars = [(c.step, c.data["metrics"]) for c in rec.steps if "loss" not in c.data["metrics"]]
    assert bars[-1] == (200, {"total_steps": 8264.0, "step_time_s": 7.03})
    first = dicts[0].data["metrics"]
    assert first == {"loss": 12.4476, "grad_norm": 35.838836669921875, "lr": 2.333333333333333e-05, "epoch": 0.0}


def test_eval_dict_glued_after_eval_bar() -> None:
    rec, _ = run_file(
        HFTrainerParser(), REAL_LOGS / "hf_trainer__LMSYS_slice3_eval_end_warnings_evaldict_checkpoint.log"
    )
    assert len(rec.steps) == 1
    m = rec.steps[0].data["metrics"]
    assert m["eval_loss"] == 0.516632080078125
    assert m["eval_runtime"] == 642.6463
    assert m["eval_samples_per_second"] == 4.587
    assert m["epoch"] == 0.05
    assert "loss" not in m and "samples_per_s" not in m


def test_string_values_and_summary_dict() -> None:
    parsed = parse_log_dict("{'loss': '0.2608', 'grad_norm': '6.51', 'learning_rate': '1.001e-05', 'epoch': '1'}")
    assert parsed == (None, {"loss": 0.2608, "grad_norm": 6.51, "lr": 1.001e-05, "epoch": 1.0}, False)
    parsed = parse_log_dict(
        "{'train_runtime': '282.2', 'train_samples_per_second': '177.2', 'train_steps_per_second': '11.08', "
        "'train_loss': '0.2033', 'epoch': '2'}"
    )
    assert parsed is not None
    _, metrics, summary = parsed
    assert summary
    # the run's mean loss keeps its own name: it is not a step's loss
    assert metrics == {
        "train_runtime": 282.2,
        "train_samples_per_second": 177.2,
        "train_steps_per_second": 11.08,
        "train_loss": 0.2033,
        "epoch": 2.0,
    }


def test_printed_step_is_used() -> None:
    # huggingface/transformers PR #9613 (TFTrainer)
    text = (
        "[INFO|trainer_tf.py:531] 2021-01-15 10:27:59,136 >>   Steps per epoch = 115\n"
        "[INFO|trainer_tf.py:398] 2021-01-15 10:28:50,371 >> {'loss': 0.6347228, 'learning_rate': 4.891304e-05, "
        "'epoch': 0.08695652173913043, 'step': 10}\n"
    )
    rec, _ = run(HFTrainerParser(), text)
    assert [(c.step, c.data["metrics"]["loss"]) for c in rec.steps] == [(10, 0.6347228)]


BANNER = (
    "***** Running training *****\n"
    "  Num examples = 1000\n"
    "  Num Epochs = 1\n"
    "  Instantaneous batch size per device = 8\n"
    "  Total train batch size (w. parallel, distributed & accumulation) = 8\n"
    "  Gradient Accumulation steps = 1\n"
    "  Total optimization steps = 125\n"
)  # banner from a public README's expected output of `python train.py` (find_string "Total optimization steps = ")


def test_unbuffered_dict_takes_the_redrawn_bar_position() -> None:
    # The byte order tqdm.write produces with unbuffered stdout: bar, clear, dict, bar redrawn.
    # Bar and dict texts are the real ones above (bar format of the LMSYS log, 125-step run).
    text = BANNER + (
        "\r 40%|████      | 49/125 [00:38<00:59,  1.27it/s]\r 40%|████      | 50/125 [00:39<00:59,  1.27it/s]"
        "\r                                                  \r"
        "{'loss': 0.5047, 'grad_norm': 1.1808810234069824, 'learning_rate': 6.993480396892148e-05, 'epoch': 0.4}\n"
        "\r 40%|████      | 50/125 [00:39<00:59,  1.27it/s]\r 41%|████      | 51/125 [00:40<00:58,  1.27it/s]\n"
    )
    rec, _ = run(HFTrainerParser(), text)
    dicts = [c for c in rec.steps if "loss" in c.data["metrics"]]
    assert [(c.step, c.line) for c in dicts] == [(50, 8)]
    progress = [c for c in rec.steps if "total_steps" in c.data["metrics"]]
    assert [c.step for c in progress] == [49, 50, 50, 51]
    assert progress[0].data["metrics"] == {"total_steps": 125.0, "step_time_s": 1 / 1.27}


def test_unbuffered_step_contradicted_by_epoch_is_dropped() -> None:
    text = BANNER + (
        "\r 40%|████      | 50/125 [00:39<00:59,  1.27it/s]\r            \r"
        "{'loss': 4.7047, 'grad_norm': 11.237261772155762, 'learning_rate': 4.666666666666666e-05, 'epoch': 0.0}\n"
        "\r 40%|████      | 50/125 [00:39<00:59,  1.27it/s]\n"
    )
    rec, _ = run(HFTrainerParser(), text)
    assert [c.step for c in rec.steps if "loss" in c.data["metrics"]] == [None]


def test_summary_dict_at_the_final_bar_position() -> None:
    text = BANNER + (
        "100%|██████████| 125/125 [01:36<00:00,  1.27it/s]\n\nTraining completed. Do not forget to share your model\n\n"
        "{'train_runtime': 96.9102, 'train_samples_per_second': 10.319, 'train_steps_per_second': 1.29, "
        "'train_loss': 0.5495736083984375, 'epoch': 1.0}        \n"
    )
    rec, _ = run(HFTrainerParser(), text)
    summary = [c for c in rec.steps if "train_runtime" in c.data["metrics"]]
    assert [c.step for c in summary] == [125]


def test_dict_pasted_without_its_opening_brace() -> None:
    # modelscope/ms-swift issue #5571: a GRPO dict pasted from its second character on
    text = (
        "'loss': -0.0, 'grad_norm': 0.0, 'learning_rate': 2.6e-07, 'reward': 0.34375, 'epoch': 0.0, "
        "'global_step/max_steps': '5/3766', 'percentage': '0.13%', 'elapsed_time': '1m 29s', "
        "'memory(GiB)': 56.74, 'train_speed(iter/s)': 0.056099}\n"
    )
    rec, _ = run(HFTrainerParser(), text)
    assert [c.step for c in rec.steps] == [5]
    m = rec.steps[0].data["metrics"]
    assert (m["loss"], m["lr"], m["total_steps"], m["reward"]) == (-0.0, 2.6e-07, 3766.0, 0.34375)
    assert round(m["step_time_s"], 3) == 17.826
    # the tail of a dict cut mid-line is not a dict's tail: its first key is not at the start of the line
    for half in ("0.5047, 'epoch': 0.05}", "print('x': 1}", "'a b': 1}"):
        rec, _ = run(HFTrainerParser(), half + "\n")
        assert rec.steps == [], half


def test_half_matches_yield_nothing() -> None:
    p = HFTrainerParser()
    for text in (
        "{'loss': 0.5047, 'grad_norm': 1.18",  # a dict cut by a buffer flush
        "{'loss': 'abc', 'epoch': 'x'}",
        "print({'a': 1})",
        "tr_loss_step = self.training_step(model, inputs)",
        "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, loss=10.072, v_num=193315]",
        " 10%|▉         | 499/5000 [23:47<3:34:33,  2.86s/it, loss=0.706]",  # a custom loop's bar (postfix)
    ):
        rec, understood = run(p, text + "\n")
        assert rec.steps == [] and understood in ([], [False]), text


def test_pipeline_on_the_real_slices() -> None:
    records, pipeline = read(SAMPLES / "hf_trainer__lmsys_slice1_buffered_burst.log")
    steps = [r for r in records if isinstance(r, Step) and "loss" in r.metrics]
    assert [s.metrics["loss"] for s in steps] == [12.4476, 4.7047, 0.6081, 0.5237, 0.5581]
    assert all(s.step is None for s in steps)
    progress = [r for r in records if isinstance(r, Step) and r.step is not None]
    assert (progress[-1].step, progress[-1].metrics["total_steps"]) == (200, 8264)
    reader = next(iter(pipeline.readers.values()))
    assert reader.parser.stats.formats == ["hf_trainer"]
    assert reader.parser.stats.not_understood == 0

    records, _ = read(SAMPLES / "hf_trainer__lmsys_slice3_eval_dict_checkpoint.log")
    evals = [r for r in records if isinstance(r, Step) and "eval_loss" in r.metrics]
    assert [(e.line, e.metrics["eval_loss"]) for e in evals] == [(12, 0.516632080078125)]
    assert [r.data.get("path") for r in records if isinstance(r, Event) and r.kind == "checkpoint"] == [
        "output/toasty-sponge-403/checkpoint-200"
    ]


def test_unsloth_banner_gives_the_total_so_bars_are_steps() -> None:
    # unslothai/unsloth issue #1145, kept in tests/corpus/unsloth/ with its provenance
    path = SAMPLES.parent / "tests" / "corpus" / "unsloth" / "unsloth_train_banner_tqdm_issue1145.log"
    records, _ = read(path)
    bars = [r for r in records if isinstance(r, Step) and r.step is not None]
    assert bars and all(r.metrics["total_steps"] == 312 for r in bars)
    assert bars[0].step == 1 and bars[0].metrics["step_time_s"] > 0


UNSLOTH_BANNER = (  # unslothai/unsloth issue #1145
    "==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1\n"
    "    \\   /|    Num examples = 2,500 | Num Epochs = 1\n"
    "O^O/ \\_/ \\    Batch size per device = 2 | Gradient Accumulation steps = 8\n"
    "\\        /    Total batch size = 16 | Total steps = 312\n"
    ' "-____-"     Number of trainable parameters = 982,515,712\n'
)


def test_unsloth_train_step_loss_prints_are_the_next_bar_step(tmp_path: Path) -> None:
    # unsloth_train: `progress_bar.write(f"{step}, {loss}")` with the 0-based step, before the bar's update
    glued = UNSLOTH_BANNER + (
        "  0%|          | 1/312 [00:25<2:13:19, 25.72s/it]0, 2.5521\n"
        "  4%|▎         | 11/312 [02:27<1:00:48, 12.12s/it]10, 2.2398\n"
    )
    # the same output with tqdm's clearing `\r` kept: the print is a line of its own
    streamed = UNSLOTH_BANNER + (
        "\r  4%|▎         | 11/312 [02:27<1:00:48, 12.12s/it]\r                    \r10, 2.2398\n"
        "\r  4%|▎         | 11/312 [02:27<1:00:48, 12.12s/it]\r  4%|▎         | 12/312 [02:39<1:00:48, 12.12s/it]\n"
    )
    for text, want in ((glued, [(1, 2.5521), (11, 2.2398)]), (streamed, [(11, 2.2398)])):
        steps = read_text_steps(tmp_path, text)
        assert [(s.step, s.metrics["loss"]) for s in steps if "loss" in s.metrics] == want
        assert all(s.metrics.get("total_steps") == 312 for s in steps if s.step != 11 or "loss" not in s.metrics)


def test_step_loss_pairs_without_unsloth_banner_are_not_losses(tmp_path: Path) -> None:
    text = "  4%|▎         | 11/312 [02:27<1:00:48, 12.12s/it]10, 2.2398\n10, 2.2398\n"
    assert all("loss" not in s.metrics for s in read_text_steps(tmp_path, text))


def test_markdown_bold_value_in_a_pasted_dict() -> None:
    # unslothai/unsloth issue #344: the reporter bolded the loss
    parsed = parse_log_dict("{'loss': **4.7581**, 'grad_norm': 3.063769578933716, 'epoch': 0.1}")
    assert parsed == (None, {"loss": 4.7581, "grad_norm": 3.063769578933716, "epoch": 0.1}, False)


def test_bar_totals_are_told_apart_by_the_dict_after_them() -> None:
    """No banner: the eval bar (25) is followed by an eval dict, the training bar (873) by a loss dict."""
    text = (
        "  1%|▏         | 5/873 [00:25<1:15:44,  5.10s/it]\n"
        "  4%|▍         | 1/25 [00:00<00:03,  7.20it/s]\n"
        "100%|██████████| 25/25 [00:03<00:00,  7.20it/s]\n"
        "{'eval_loss': 1.71, 'eval_runtime': 3.6, 'epoch': 0.07}\n"
        "  1%|▏         | 6/873 [00:30<1:15:44,  5.33s/it]\n"
        "{'loss': 1.8218, 'learning_rate': 0.000196, 'epoch': 0.1}\n"
        "  1%|▏         | 7/873 [00:35<1:15:44,  5.20s/it]\n"
    )
    rec, _ = run(HFTrainerParser(), text)
    progress = [(c.step, c.data["metrics"]["total_steps"]) for c in rec.steps if c.step is not None]
    assert progress == [(5, 873), (6, 873), (7, 873)]


def test_a_lone_running_bar_is_progress_without_any_dict() -> None:
    text = "".join(f" {n}%|▏         | {n}/60 [01:00<03:00, 296.5{n}s/it]\n" for n in (1, 2, 3))
    rec, _ = run(HFTrainerParser(), text)
    assert [c.step for c in rec.steps] == [1, 2, 3]
    assert rec.steps[-1].data["metrics"] == {"total_steps": 60.0, "step_time_s": 296.53}


def test_carriage_returns_pasted_as_caret_m(tmp_path: Path) -> None:
    # h2oai/h2ogpt PR #86: `^M` where the terminal had `\r`; no banner, a loss dict every step
    frame = "  4%|▎         | {n}/36234 [11:37<5:10:26,  1.87it/s]"
    clear = "^M" + " " * 54 + "^M"
    text = "".join(
        f"^M{frame.format(n=n - 1)}^M{frame.format(n=n)}{clear}{{'loss': {loss}, 'learning_rate': 0.00029, 'epoch': 0.22}}\n"
        for n, loss in ((1318, 1.5545), (1319, 1.3465), (1320, 1.3056))
    )
    got = read_text_steps(tmp_path, text)
    assert [(s.step, s.metrics["loss"]) for s in got if "loss" in s.metrics] == [
        (1318, 1.5545),
        (1319, 1.3465),
        (1320, 1.3056),
    ]
    bars = [s for s in got if "total_steps" in s.metrics]
    assert [s.step for s in bars] == [1317, 1318, 1319, 1320]
    assert {s.metrics["total_steps"] for s in bars} == {36234} and bars[0].metrics["step_time_s"] == 1 / 1.87


def test_a_plain_dict_is_read_as_python_reads_it() -> None:
    """`plain_dict` reads the Trainer's usual dict without `ast`: exactly what `literal_eval` gives
    (values and their types, key order, the last of repeated keys), and None for anything else."""
    import ast
    import random

    from trainwatch.parsers.formats.hf_trainer import plain_dict

    keys = ["'loss'", "'grad_norm'", '"lr"', "'a b'", "'a\\\\n'", "'x\ry'", "'é'", "''", "'a'", "'it's'"]
    numbers = [
        "1",
        "0",
        "00",
        "007",
        "-0",
        "1.5",
        "1.",
        ".5",
        "-.5",
        "2e-05",
        "1e5",
        "1E+3",
        "+1",
        "1_0",
        "nan",
        "-",
        "1.2.3",
    ]
    seps = [": ", ":", " : ", ": -", ":  "]
    rng = random.Random(3)
    read = 0
    for _ in range(20000):
        items = [f"{rng.choice(keys)}{rng.choice(seps)}{rng.choice(numbers)}" for _ in range(rng.randint(0, 4))]
        body = "{" + rng.choice([", ", ",", " ,  "]).join(items) + rng.choice(["", ",", " ", ", "]) + "}"
        fast = plain_dict(body)
        if fast is None:
            continue
        read += 1
        slow = ast.literal_eval(body)
        assert fast == slow and list(fast) == list(slow), body
        assert all(type(fast[k]) is type(slow[k]) for k in fast), body
    assert read > 2000
    assert plain_dict("{'a': 007}") is None  # (Python refuses it: so does the reader)
    assert plain_dict("{'loss': 1.93, 'grad_norm': 0.5, 'learning_rate': 2e-05, 'epoch': 0.4}") == {
        "loss": 1.93,
        "grad_norm": 0.5,
        "learning_rate": 2e-05,
        "epoch": 0.4,
    }


def test_a_dict_after_the_name_of_an_evaluation_split_reports_its_loss(tmp_path: Path) -> None:
    # rampasek/GraphGPS-style `logging.info(f"{split}: {stats}")` (GNN+ issue 6)
    text = (
        "train: {'epoch': 0, 'time_epoch': 31.96598, 'loss': 0.68623245, 'lr': 0.0, 'accuracy': 0.55941}\n"
        "val: {'epoch': 0, 'time_epoch': 2.85257, 'loss': 0.68645666, 'lr': 0, 'accuracy': 0.51952}\n"
        "test: {'epoch': 0, 'time_epoch': 2.79488, 'loss': 0.68643462, 'lr': 0, 'accuracy': 0.52094}\n"
        "interval: {'epoch': 0, 'loss': 0.5}\n"  # a word that ends in `val` names no split
        "train_val: {'epoch': 0, 'loss': 0.4}\n"  # nor one that ends in `_val`
    )
    got = read_text_steps(tmp_path, text)
    assert [s.metrics.get("loss") for s in got] == [0.68623245, None, None, 0.5, 0.4]
    assert [s.metrics.get("eval_loss") for s in got] == [None, 0.68645666, None, None, None]
    assert got[2].metrics["test_loss"] == 0.68643462  # the test split is not the validation series
    assert got[1].metrics["eval_accuracy"] == 0.51952  # nor are its other figures the training ones
    assert "accuracy" not in got[1].metrics and "lr" not in got[1].metrics
    assert got[1].metrics["epoch"] == 0

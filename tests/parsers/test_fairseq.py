"""fairseq lines. Sources: facebookresearch/fairseq issues #940 (legacy progress + valid), #514 (end of
epoch summary), #2338 (hydra `train_inner`), #301 (2018 lines without num_updates);
XuezheMax/apollo issue #4 (hydra sample)."""

from __future__ import annotations

from pathlib import Path

from _pipeline import read
from conftest import SAMPLES
from fw_recorder import run

from trainwatch.parsers.formats.fairseq import FairseqParser
from trainwatch.records import Step


def test_progress_summary_and_valid() -> None:
    text = (
        "| epoch 009:   2000 / 2737 loss=6.234, nll_loss=5.086, ppl=33.96, wps=12811, ups=4.8, wpb=2571, bsz=108, "
        "num_updates=23897, lr=0.000204564, gnorm=1.242, clip=0%, oom=0, wall=5048, train_wall=4693\n"
        "| epoch 009 | loss 6.233 | nll_loss 5.085 | ppl 33.94 | wps 12857 | ups 4.9 | wpb 2578 | bsz 108 | num_updates 24633 | "
        "lr 0.000201484 | gnorm 1.241 | clip 0% | oom 0 | wall 5195 | train_wall 4834\n"
        "| epoch 009 | valid on 'valid' subset | valid_loss 6.37204 | valid_nll_loss 5.14732 | valid_ppl 35.44 | num_updates 24633 | best 6.37204\n"
    )
    a, b, c = run(FairseqParser(), text)[0].steps
    assert a.step == 23897
    assert a.data["metrics"] == {
        "loss": 6.234,
        "nll_loss": 5.086,
        "ppl": 33.96,
        "tokens_per_s": 12811.0,
        "ups": 4.8,
        "wpb": 2571.0,
        "bsz": 108.0,
        "lr": 0.000204564,
        "grad_norm": 1.242,
        "clip_pct": 0.0,
        "oom": 0.0,
        "wall": 5048.0,
        "train_wall": 4693.0,
        "epoch": 9.0,
    }
    assert b.step == 24633 and b.data["metrics"]["epoch_avg_loss"] == 6.233 and "loss" not in b.data["metrics"]
    assert c.step == 24633 and c.data["metrics"] == {
        "eval_loss": 6.37204,
        "valid_nll_loss": 5.14732,
        "valid_ppl": 35.44,
        "valid_best": 6.37204,
        "epoch": 9.0,
    }


def test_hydra_line_has_time() -> None:
    records, _ = read(SAMPLES / "fairseq__apollo_issue4_hydra.log")
    steps = [r for r in records if isinstance(r, Step)]
    assert [s.step for s in steps] == [100, 200, 300, 400, 500]
    assert steps[0].time == "2020-10-18T02:34:53"
    assert [s.metrics["loss"] for s in steps] == [12.834, 11.605, 10.995, 10.563, 10.128]
    assert steps[0].metrics["tokens_per_s"] == 130830.0 and steps[0].metrics["clip"] == 41.0


def test_half_matches_yield_nothing() -> None:
    for text in (
        "| epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, wpb=908, bsz=32, lr=0.001, clip=100%, gnorm=2.1427",  # no num_updates
        "2020-10-18 02:34:05 | INFO | fairseq.trainer | begin training epoch 1",
    ):
        assert run(FairseqParser(), text + "\n")[0].steps == [], text


def test_pipeline_legacy_sample() -> None:
    records, pipeline = read(SAMPLES / "fairseq__issue940_legacy.log")
    steps = [r for r in records if isinstance(r, Step)]
    assert [s.step for s in steps] == [445, 495, 545, 595, 600]
    assert steps[-1].metrics == {"eval_loss": 8.11425, "valid_nll_loss": 6.8834, "valid_ppl": 118.06, "epoch": 1.0}
    assert next(iter(pipeline.readers.values())).parser.stats.not_understood == 0


def test_2018_valid_line_has_no_step(tmp_path: Path) -> None:
    # facebookresearch/fairseq issue #301: no num_updates anywhere; the generic layer counts the batches
    path = tmp_path / "train.log"
    path.write_text(
        "".join(
            f"| epoch 010  {n} / 8223 loss={loss} (1.50), wps=962, wpb=908, bsz=32, lr=0.001, clip=100%, gnorm=2.14\n"
            for n, loss in ((7000, 0.86), (8000, 1.33))
        )
        + "| epoch 010 | valid on 'valid' subset | valid loss 1.94 | valid ppl 3.83\n",
        encoding="utf-8",
    )
    steps = [r for r in read(path)[0] if isinstance(r, Step)]
    assert [(s.step, s.metrics) for s in steps if "eval_loss" in s.metrics] == [
        (None, {"eval_loss": 1.94, "valid_ppl": 3.83, "epoch": 10.0})
    ]

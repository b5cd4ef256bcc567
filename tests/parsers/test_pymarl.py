"""PyMARL's console logger, read from a real QMIX run (tests/corpus/pymarl): the `Recent Stats` block is
one record at its environment timestep, with the run's `t_max` and the time left announced before it."""

from __future__ import annotations

from pathlib import Path

from _pipeline import read

from trainwatch.records import Step

LOG = Path(__file__).resolve().parents[1] / "corpus" / "pymarl" / "qmix-6h-vs-8z-recent-stats.log"


def test_a_recent_stats_block_is_one_step_at_its_timestep() -> None:
    records, _ = read(LOG)
    (block,) = [r for r in records if isinstance(r, Step)]
    assert block.step == 8443380
    assert {k: block.metrics[k] for k in ("total_steps", "eta_s", "episode", "loss", "grad_norm", "epsilon")} == {
        "total_steps": 10050000.0,
        "eta_s": 3 * 3600 + 52 * 60 + 47.0,
        "episode": 331792.0,
        "loss": 0.1001,
        "grad_norm": 1.2608,
        "epsilon": 0.05,
    }
    assert block.metrics["return_mean"] == 10.8696


def test_rows_without_their_header_are_not_read(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("epsilon:                   0.2386\tgrad_norm:                 8.2995\tloss:          1.5073\n")
    records, _ = read(log)
    assert not [r for r in records if isinstance(r, Step) and "epsilon" in r.metrics]

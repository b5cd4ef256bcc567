"""The evaluation loss is drawn on the loss chart beside the training loss (issue 22), from seed 004
(Megatron GPT-2: validation loss every 1,000 iterations, lowest at iteration 8,000)."""

from __future__ import annotations

from conftest import seed

from trainwatch.pipeline import Pipeline
from trainwatch.ui.data import chart_traces, chart_version


def test_loss_chart_carries_the_validation_loss_as_its_own_trace() -> None:
    pipeline = Pipeline([str(seed("004"))])
    pipeline.read_to_end()
    traces, _ = chart_traces(pipeline.store, "loss", last_n=None, wall_time=False)
    labels = [t.label for t in traces]
    evals = [t for t in traces if t.label.startswith("eval loss")]
    assert len(evals) == 1 and len(traces) == 2, labels
    ev = evals[0]
    best = min(range(len(ev.ys)), key=lambda i: ev.ys[i])
    assert ev.xs[best] == 8000 and abs(ev.ys[best] - 4.138) < 0.001
    training = next(t for t in traces if t is not ev)
    assert len(training.xs) > 10 * len(ev.xs)  # the training loss is logged far more often
    # the chart redraws when either series grows
    own, _ = chart_traces(pipeline.store, "eval_loss", last_n=None, wall_time=False)
    assert (
        chart_version(pipeline.store, "loss")
        > chart_version(pipeline.store, "eval_loss")
        == sum(len(t.xs) for t in own)
    )

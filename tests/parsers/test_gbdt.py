"""XGBoost, LightGBM and CatBoost rounds: named by data set and metric, early stops not read as steps going back."""

from __future__ import annotations

from _feed import events, feed, steps


def test_xgboost_rounds_name_each_data_set() -> None:
    got = steps(
        feed(
            [
                "[0]\tvalidation_0-logloss:0.60\tvalidation_0-auc:0.71\tvalidation_1-logloss:0.62\tvalidation_1-auc:0.70",
                "[1]\tvalidation_0-logloss:0.55\tvalidation_0-auc:0.74\tvalidation_1-logloss:0.58\tvalidation_1-auc:0.72",
            ]
        )
    )
    assert [s.step for s in got] == [0, 1]
    assert got[1].metrics == {"eval_loss": 0.55, "eval_auc": 0.74, "validation_1_loss": 0.58, "validation_1_auc": 0.72}


def test_xgboost_cv_mean_and_spaces_for_tabs() -> None:
    """`xgb.cv` prints mean+std; a paste may have turned the tabs into spaces."""
    got = steps(feed(["[10]  train-rmse:1.2345+0.0100  test-rmse:1.5000+0.0300"]))
    assert [(s.step, s.metrics) for s in got] == [(10, {"loss": 1.2345, "eval_loss": 1.5})]


def test_a_metric_that_is_not_a_loss_keeps_its_name() -> None:
    got = steps(feed(["[5]\ttrain-auc:0.91\teval-auc:0.88"]))
    assert got[0].metrics == {"auc": 0.91, "eval_auc": 0.88}


def test_the_best_round_after_an_early_stop_is_not_read_again() -> None:
    records = feed(
        [
            "[290]\ttrain-logloss:0.248382\tvalid-logloss:0.391635",
            "[300]\ttrain-logloss:0.245682\tvalid-logloss:0.392021",
            "Stopping. Best iteration:",
            "[290]\ttrain-logloss:0.248382\tvalid-logloss:0.391635",
        ]
    )
    assert [s.step for s in steps(records)] == [290, 300]
    assert len(events(records, "finished")) == 1


def test_a_best_round_never_printed_before_is_a_step() -> None:
    """LightGBM (period 2) ran out of time at round 3: its best round is printed only after the stop."""
    records = feed(
        [
            "\t[2]\ttrain_set's multi_logloss: 0.803377\tvalid_set's multi_logloss: 0.80468",
            "\tRan out of time, early stopping on iteration 3. Best iteration is:",
            "\t[3]\ttrain_set's multi_logloss: 0.751318\tvalid_set's multi_logloss: 0.752479",
        ]
    )
    assert [(s.step, s.metrics["loss"], s.metrics["eval_loss"]) for s in steps(records)] == [
        (2, 0.803377, 0.80468),
        (3, 0.751318, 0.752479),
    ]


def test_lightgbm_cli_lines_of_one_round_are_one_step_and_its_end() -> None:
    records = feed(
        [
            "[LightGBM] [Info] Iteration:1000, training's auc: 1.000000",
            "[LightGBM] [Info] Iteration:1000, training's log loss: 0.004583",
            "[LightGBM] [Info] 2.436162 seconds elapsed, finished 1000 iteration",
            "[LightGBM] [Info] Finish train",
        ]
    )
    assert [(s.step, s.metrics.get("loss"), s.metrics.get("auc")) for s in steps(records)] == [(1000, 0.004583, 1.0)]
    assert len(events(records, "finished")) == 1


def test_catboost_learn_test_and_times() -> None:
    records = feed(
        [
            "0:\tlearn: 0.6569860\ttest: 0.6570642\ttest1: 0.6600000\tbest: 0.6570642 (0)\ttotal: 70.1ms\tremaining: 1m 10s",
            "999:\tlearn: 0.1400000\ttotal: 47.5s\tremaining: 0us",
            "Shrink model to first 567 iterations.",
        ]
    )
    got = steps(records)
    assert got[0].metrics == {
        "loss": 0.656986,
        "eval_loss": 0.6570642,
        "test1_loss": 0.66,
        "best_eval_loss": 0.6570642,
        "elapsed_s": 0.0701,
        "eta_s": 70.0,
    }
    assert got[1].step == 999 and got[1].metrics["elapsed_s"] == 47.5
    assert len(events(records, "finished")) == 1


def test_lines_that_only_start_like_a_round_are_left_alone() -> None:
    assert steps(feed(["[1] starting worker", "[2]\tnote: done", "12: learn: more about it"])) == []


def test_each_model_of_a_log_names_its_own_sets() -> None:
    """AutoGluon / a CV loop trains one model after another: the second's first set is its eval set."""
    records = feed(
        [
            "[10]\ttrain-logloss:0.5\teval-logloss:0.6",
            "Stopping. Best iteration:",
            "[10]\ttrain-logloss:0.5\teval-logloss:0.6",
            "[0]\tvalidation_0-rmse:1.5",
            "[1]\tvalidation_0-rmse:1.4",
        ]
    )
    assert [(s.step, s.metrics) for s in steps(records)] == [
        (10, {"loss": 0.5, "eval_loss": 0.6}),
        (0, {"eval_loss": 1.5}),
        (1, {"eval_loss": 1.4}),
    ]


def test_hostile_lines_cost_linear_time() -> None:
    """A round's rest is split into tokens before any entry pattern (20,000 characters of one token)."""
    for text in ("[1] " + "a" * 20000 + "'s x", "[1] " + "a-" * 10000 + ":1", "[1] a" + " " * 20000 + "b"):
        assert steps(feed([text])) == []

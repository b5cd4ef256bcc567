"""Issue 22: the verdict a user gives reading the log, on the logs the issue names.

Each log is copied with its mtime an hour ago (the run ended long before anyone looked), except
where the age itself is what is tested.
- ranks_logdir_restart/: torchrun `--log-dir`; attempt 0 failed because rank 1 raised, ranks 0 and 2
  then died of "Connection closed by peer", the agent SIGTERMed the rest and printed
  `failed (exitcode: 1) local_rank: 1`; attempt 1 ran 12/12 with empty stderr.
- ranks__torchrun_unprefixed_restart.log: the same failure and relaunch, into one file.
- mmengine__runner_cpu_healthy.log: ends with `Epoch(train) [2][40/40]` and "Saving checkpoint at 2 epochs".
- ranks__deepspeed_pdsh_two_nodes_relaunch.log: ends with `Process N exits successfully.` for both ranks.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from conftest import SAMPLES

from trainwatch.cli import main

AN_HOUR = 3600.0


def _copy(src: Path, dest: Path, age_s: float = AN_HOUR) -> Path:
    if src.is_dir():
        shutil.copytree(src, dest)
        files = [p for p in dest.rglob("*") if p.is_file()]
    else:
        shutil.copyfile(src, dest)
        files = [dest]
    then = time.time() - age_s
    for f in files:
        os.utime(f, (then, then))
    return dest


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def _summary(path: Path) -> dict[str, Any]:
    code, out = _run("summary", "--json", str(path))
    assert code == 0, out
    return json.loads(out)


def test_logdir_restart_is_finished_and_attempt_0_failed_because_of_rank_1(tmp_path: Path) -> None:
    run = _copy(SAMPLES / "ranks_logdir_restart", tmp_path / "run")
    data = _summary(run)
    assert data["status"] == "finished", data["reason"]
    assert data["reason"] == "reached step 12 of 12 and stopped writing"
    first, second = data["attempts"]
    assert (first["attempt"], first["status"], first["last_step"]) == (0, "crashed", 5)
    assert first["root_cause"]["rank"] == 1
    assert first["root_cause"]["message"] == "RuntimeError: simulated failure on rank 1 at iteration 6"
    assert "local_rank 1 failed with exit code 1" in first["root_cause"]["evidence"]
    assert (second["attempt"], second["status"], second["last_step"], second["total_steps"]) == (1, "finished", 12, 12)
    # attempt 0's ranks were stopped by the relaunch, not left behind by a slow rank
    assert data["stragglers"] == []
    assert not [f for f in data["findings"] if f["kind"] in ("crash", "straggler") and "stopped" in f["message"]]
    assert data["root_cause"] is None  # the run did not crash: its history did
    code, line = _run("check", str(run))
    assert (code, line.strip()) == (0, "finished: reached step 12 of 12 and stopped writing")


def test_logdir_restart_text_summary_tells_the_history(tmp_path: Path) -> None:
    run = _copy(SAMPLES / "ranks_logdir_restart", tmp_path / "run")
    code, out = _run("summary", str(run))
    assert code == 0
    assert (
        "attempt 0 failed: rank 1 RuntimeError: simulated failure on rank 1 at iteration 6 (the launcher reports "
        "local_rank 1 failed with exit code 1); relaunched at step 5/12; attempt 1 finished step 12/12"
    ) in out
    assert "Connection closed by peer" not in out
    assert "CRASHED" not in out


def test_relaunch_into_one_file_has_the_same_verdict(tmp_path: Path) -> None:
    log = _copy(SAMPLES / "ranks__torchrun_unprefixed_restart.log", tmp_path / "out.log")
    data = _summary(log)
    assert data["status"] == "finished"
    first, second = data["attempts"]
    assert first["status"] == "crashed" and first["root_cause"]["rank"] == 1
    assert second["status"] == "finished" and second["last_step"] == 12


def test_phase_shares_never_exceed_the_step(tmp_path: Path) -> None:
    for name in ("ranks_logdir_restart", "ranks__torchrun_unprefixed_restart.log"):
        data = _summary(_copy(SAMPLES / name, tmp_path / name))
        shares = data["phases_share"]
        assert shares and max(shares.values()) <= 1.0, shares
        # batch_generator runs inside forward_backward: the two are not added up
        assert shares["batch_generator"] <= shares["forward_backward"]
        _code, out = _run("summary", str(tmp_path / name))
        assert "└ batch_generator" in out and "102.1%" not in out


def test_a_crash_names_the_rank_that_raised_not_the_ranks_that_lost_their_peer(tmp_path: Path) -> None:
    log = _copy(SAMPLES / "ranks__torchrun_tee3_crash.log", tmp_path / "out.log")
    data = _summary(log)
    assert data["status"] == "crashed"
    assert data["root_cause"]["rank"] == 3
    assert "simulated failure on rank 3" in data["root_cause"]["message"]


def test_mmengine_last_epoch_and_checkpoint_is_finished_not_running(tmp_path: Path) -> None:
    # Written a minute ago: still too recent for a stall, but the run is over.
    log = _copy(SAMPLES / "mmengine__runner_cpu_healthy.log", tmp_path / "mm.log", age_s=60)
    code, line = _run("check", str(log))
    assert (code, line.strip()) == (0, "finished: reached step 80 of 80 and saved its final checkpoint")


def test_deepspeed_launcher_clean_exits_are_a_finish(tmp_path: Path) -> None:
    log = _copy(SAMPLES / "ranks__deepspeed_pdsh_two_nodes_relaunch.log", tmp_path / "ds.log")
    code, line = _run("check", str(log))
    assert (code, line.strip()) == (0, "finished: Process 576485 exits successfully.")


def test_total_reached_and_quiet_is_finished(tmp_path: Path) -> None:
    lines = [f"step {i}/20 loss {3.0 - i * 0.05:.3f} time 0.5" for i in range(1, 21)]
    log = tmp_path / "loop.log"
    log.write_text("\n".join(lines) + "\n")
    then = time.time() - 30
    os.utime(log, (then, then))
    data = _summary(log)
    assert data["status"] == "finished", data["reason"]
    assert data["reason"] == "reached step 20 of 20 and stopped writing"


def test_trainer_train_runtime_summary_is_a_finish(tmp_path: Path) -> None:
    lines = [
        "{'loss': 1.2, 'grad_norm': 3.1, 'learning_rate': 1e-05, 'epoch': 0.5}",
        "{'loss': 1.0, 'grad_norm': 2.9, 'learning_rate': 1e-05, 'epoch': 1.0}",
        "{'train_runtime': 96.91, 'train_samples_per_second': 10.319, 'train_steps_per_second': 1.3, "
        "'train_loss': 0.5495, 'epoch': 1.0}",
    ]
    log = _copy_text(tmp_path / "hf.log", lines, age_s=5)
    data = _summary(log)
    assert data["status"] == "finished", data["reason"]
    assert "train_runtime" in data["reason"]


def _copy_text(path: Path, lines: list[str], age_s: float) -> Path:
    path.write_text("\n".join(lines) + "\n")
    then = time.time() - age_s
    os.utime(path, (then, then))
    return path


def test_seed004_validation_loss_rising_while_training_falls_is_overfitting(tmp_path: Path) -> None:
    from conftest import seed

    data = _summary(_copy(seed("004"), tmp_path / "gpt2.log"))
    ev = data["eval"]
    assert ev["overfitting"] is True
    assert ev["last_step"] == 22000 and ev["last_eval_loss"] > ev["best_eval_loss"] * 1.15
    assert ev["best_step"] < 12000 and ev["train_loss_now"] < ev["train_loss_at_best"]
    (f,) = [f for f in data["findings"] if f["kind"] == "overfitting"]
    assert f["message"].startswith(
        f"validation loss best {ev['best_eval_loss']:.4g} at {ev['best_step']:,}, now 4.9 at 22,000"
    )
    assert f"keep the checkpoint nearest step {ev['best_step']:,}" in f["remedy"]


def test_a_healthy_run_is_not_overfitting(tmp_path: Path) -> None:
    data = _summary(_copy(SAMPLES / "mmengine__runner_cpu_healthy.log", tmp_path / "mm.log"))
    assert not [f for f in data["findings"] if f["kind"] == "overfitting"]


def test_hf_trainer_bar_gives_step_total_and_pace(tmp_path: Path) -> None:
    # The LMSYS slice: five loss dicts and the bar `199/8264 [23:31<16:19:14, 7.29s/it]`, no banner.
    log = _copy(SAMPLES / "hf_trainer__lmsys_slice1_buffered_burst.log", tmp_path / "hf.log", age_s=60)
    got = _summary(log)
    assert (max(got["last_step"].values()), got["total_steps"]) == (200, 8264)
    assert abs(got["sec_per_step"] - 7.0) < 0.5
    assert got["status"] == "running" and got["eta_s"] > 8000 * 6
    code, line = _run("check", str(log))
    assert code == 0 and "step 200 of 8264" in line and "UNKNOWN" not in line.upper()


def test_composer_token_budget_is_not_a_step_total(tmp_path: Path) -> None:
    log = _copy(SAMPLES / "composer__awsome_distributed_mpt7b.log", tmp_path / "c.log", age_s=60)
    _, line = _run("check", str(log))
    assert "step 1 of 300" not in line  # was `running: step 1 of 300000000`
    assert "step 1 of a 300,000,000 token/sample budget (not a step count)" in line
    got = _summary(log)
    assert got["total_steps"] is None
    assert "budget" in json.dumps(got)


def test_a_crash_after_reports_without_step_numbers_says_so(tmp_path: Path) -> None:
    # microsoft/CNTK issue 406 (tests/corpus/cntk): minibatch reports carry no step number, then NaN stops the run
    log = _copy(
        Path(__file__).resolve().parents[1] / "corpus" / "cntk" / "brainscript_minibatch_qnan_exception_issue406.log",
        tmp_path / "cntk.log",
    )
    got = _summary(log)
    assert got["status"] == "crashed"
    assert "after its last report (the log numbers no steps)" in got["reason"]
    messages = [f["message"] for f in got["findings"]]
    assert any(m.startswith("the run crashed after its last report") for m in messages), messages
    assert any(m.startswith("loss first became NaN/inf at line 3") for m in messages), messages
    assert not any("before the first step" in m or "step None" in m for m in messages), messages


def test_a_final_evaluation_after_the_end_marker_keeps_the_run_finished(tmp_path: Path) -> None:
    # pygcn and the loops copied from it: the end, then the test set's figures at the same step, later
    log = _copy(
        Path(__file__).resolve().parents[1] / "corpus" / "custom_loop_q" / "gcn_knn_graph_iter_time_finish.log",
        tmp_path / "gcn.log",
    )
    data = _summary(log)
    assert data["status"] == "finished", data["reason"]
    assert "Optimization Finished!" in data["reason"]


def test_out_of_memory_the_loop_caught_is_a_warning_not_the_end(tmp_path: Path) -> None:
    # GPT2-Chinese catches the OOM, prints `WARNING: ran out of memory` and goes on with the next batch
    log = _copy(
        Path(__file__).resolve().parents[1] / "corpus" / "custom_loop_q" / "gpt2_chinese_batch_lr_list_oom.log",
        tmp_path / "gpt2.log",
    )
    data = _summary(log)
    assert data["status"] == "stalled", data["reason"]  # (the log ends there, an hour ago: not a crash)
    (memory,) = [f for f in data["findings"] if f["kind"] == "memory_pressure"]
    assert "ran out of device memory 10 times" in memory["message"]


def test_a_crash_names_the_worker_that_failed_not_the_agents_sigterms_to_the_others(tmp_path: Path) -> None:
    # ColossalAI issue 3514: torchrun SIGTERMs three workers, then says local rank 3 died of SIGKILL
    log = _copy(
        Path(__file__).resolve().parents[1]
        / "corpus"
        / "colossalai"
        / "coati_sigterm_then_exitcode_minus9_issue3514.log",
        tmp_path / "coati.log",
    )
    data = _summary(log)
    assert data["status"] == "crashed"
    assert data["reason"].startswith("failed (exitcode: -9) local_rank: 3"), data["reason"]
    assert "SIGKILL" in data["reason"]


def test_the_pace_of_a_loop_that_prints_its_clock(tmp_path: Path) -> None:
    # `step   4360 | loss 0.195255 | best 0.192754 | 2137.9s`: seconds since the start, 4.9 s per 10 steps
    log = _copy(
        next((Path(__file__).resolve().parents[1] / "corpus" / "custom_loop_n").glob("shakespeare_gpt2_124m_*.log")),
        tmp_path / "gpt2.log",
    )
    data = _summary(log)
    assert abs(data["sec_per_step"] - 0.49) < 0.01, data["sec_per_step"]  # (not 2231 s, the clock's value)


def test_one_report_then_the_end_of_the_run(tmp_path: Path) -> None:
    # the first report of a shape waits for the shape to repeat; what ends the run after it happened there
    report = "epoch 1 step 10 loss 2.31 lr 0.001\n"
    crash = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n    main()\n'
    crash += "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    for name, tail, status in (("oom", crash, "crashed"), ("end", "Training complete.\n", "finished")):
        src = tmp_path / f"{name}.src"
        src.write_text(report + tail)
        data = _summary(_copy(src, tmp_path / f"{name}.log"))
        assert (data["status"], data["last_step"]) == (status, {"-": 10}), data["reason"]  # (no rank: "-")


def test_the_end_is_said_in_the_trainers_words_without_its_logging_prefix(tmp_path: Path) -> None:
    src = tmp_path / "fairseq.src"
    src.write_text(
        "epoch 1 step 10 loss 2.31\nepoch 1 step 20 loss 2.21\n"
        "2023-05-01 10:00:00 | INFO | fairseq_cli.train | done training in 8354.1 seconds\n"
        "wandb: Waiting for W&B process to finish... (success).\n"
    )
    data = _summary(_copy(src, tmp_path / "fairseq.log"))
    assert data["status"] == "finished"
    assert data["reason"] == "done training in 8354.1 seconds (step 20)"


def test_reports_that_number_no_steps_are_training(tmp_path: Path) -> None:
    # HF Trainer's dicts: a loss a line, no step number; the verdict is no `unknown` "no step recognised"
    src = tmp_path / "hf.src"
    src.write_text(
        "".join(f"{{'loss': {2 - i / 10}, 'learning_rate': 5e-05, 'epoch': {i / 10}}}\n" for i in range(1, 4))
    )
    old = _summary(_copy(src, tmp_path / "old.log"))
    assert old["status"] == "stalled", old["reason"]
    assert old["reason"] == "no report for 1.0h (3 reports read; the log numbers no steps) and no end marker"
    fresh = _summary(_copy(src, tmp_path / "fresh.log", age_s=5))
    assert fresh["status"] == "running", fresh["reason"]

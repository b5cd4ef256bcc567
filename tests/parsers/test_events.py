"""Cross-format events (trainwatch/parsers/formats/events.py and its parts) from real log lines.

Sources of the lines are noted per test: seeds and real_logs under ../shared, lines users pasted
in public GitHub issues, and strings printed by torch.distributed.elastic (torch 2.13, read in
its source; the ChildFailedError summary below was produced by its `format_msg()`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _feed import events, feed
from conftest import REAL_LOGS, seed

from trainwatch.lines.assembler import Line
from trainwatch.parsers.formats.events import EventsParser
from trainwatch.parsers.runner import SourceParser
from trainwatch.records import Event, Record, Step


def _lines(path: Path, start: int = 1) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()[start - 1 :]


def _all_events(records: list[Record]) -> list[Event]:
    return [r for r in records if isinstance(r, Event)]


# --------------------------------------------------------------------------- signals + traceback
def test_seed_002_sighup_ending_gives_five_signals_and_one_traceback() -> None:
    path = seed("002")
    records = feed(_lines(path, 7054))
    signals = events(records, "signal")
    assert [s.data["signal"] for s in signals] == ["SIGHUP"] * 5
    assert "Received 1 death signal" in signals[0].message
    assert [s.data.get("pid") for s in signals[1:]] == [3664692, 3664693, 3664694, 3664695]
    (tb,) = events(records, "traceback")
    assert tb.message == "torch.distributed.elastic.multiprocessing.api.SignalException: Process 3664596 got signal: 1"
    assert tb.data["exception"] == "torch.distributed.elastic.multiprocessing.api.SignalException"
    assert tb.line == 6  # the `Traceback (most recent call last):` line (seed line 7059)
    assert tb.severity == "error"


def test_whole_seed_002_has_no_spurious_events_before_the_end() -> None:
    records = feed(_lines(seed("002")))
    mine = [e for e in _all_events(records) if e.kind not in ("overflow", "nan")]
    assert all(e.line >= 7054 for e in mine), [(e.line, e.kind, e.message) for e in mine if e.line < 7054]
    assert len(events(records, "checkpoint")) == 0  # "Removing key ... from pretrained checkpoint", checkpoint_path:


def test_keyboard_interrupt_tail_hf_trainer() -> None:
    # real_logs: HF Trainer run stopped with Ctrl-C; wandb's atexit hook then prints a second traceback.
    records = feed(_lines(REAL_LOGS / "hf_trainer__LMSYS_slice4_keyboardinterrupt_tail.log"))
    tbs = events(records, "traceback")
    assert [t.message for t in tbs] == ["KeyboardInterrupt", "KeyboardInterrupt:"]
    assert [t.severity for t in tbs] == ["error", "warning"]  # "Exception ignored in atexit callback"
    assert [s.data["signal"] for s in events(records, "signal")] == ["SIGINT"]  # one Ctrl-C, reported once


def test_interleaved_rank_prefixed_tracebacks_stay_per_rank() -> None:
    # Frames from the HF slice4 traceback and the OOM line from murong-xu/CADS#4, printed by two ranks
    # with PyTorch's `[rankN]:` prefix, interleaved line by line as several processes write one file.
    r0 = [
        "Traceback (most recent call last):",
        '  File "/root/autodl-tmp/LMSYS/train_gemma2_instruction.py", line 745, in <module>',
        "    train(args)",
        "RuntimeError: The server socket has failed to listen on any local network address.",
    ]
    r1 = [
        "Traceback (most recent call last):",
        '  File "/root/miniconda3/lib/python3.10/site-packages/transformers/trainer.py", line 1932, in train',
        "    return inner_training_loop(",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of "
        "31.47 GiB of which 12.73 GiB is free.",
    ]
    lines = [f"[rank{r}]:{text}" for pair in zip(r0, r1, strict=True) for r, text in enumerate(pair)]
    lines.append("[rank0]:step:2001/20000 train_loss:3.016191e-02 train_time:8864456ms step_avg:4430.01ms")
    records = feed(lines)
    tbs = sorted(events(records, "traceback"), key=lambda e: e.rank or 0)
    assert [(t.rank, t.data["exception"]) for t in tbs] == [(0, "RuntimeError"), (1, "torch.OutOfMemoryError")]
    assert [t.line for t in tbs] == [1, 2]
    (oom,) = events(records, "oom")
    assert oom.rank == 1
    assert oom.data["requested_gib"] == 22.78


def test_chained_exceptions_give_one_event_with_the_final_exception() -> None:
    # The OOM line and the chain marker as pasted in murong-xu/CADS#4; Python's chain layout.
    lines = [
        "Traceback (most recent call last):",
        '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1527, in _call_impl',
        "    return forward_call(*args, **kwargs)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of "
        "31.47 GiB of which 12.73 GiB is free.",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "/root/miniconda3/lib/python3.10/subprocess.py", line 1209, in wait',
        "    return self._wait(timeout=timeout)",
        "KeyboardInterrupt",
        "step:7151/20000 train_loss:6.580660e-02 train_time:31848444ms step_avg:4453.70ms",
    ]
    records = feed(lines)
    (tb,) = events(records, "traceback")
    assert tb.message == "KeyboardInterrupt"
    assert tb.line == 1
    assert tb.data["cause"].startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert len(events(records, "oom")) == 1


def test_dynamo_warning_traceback_is_a_warning_not_a_crash() -> None:
    # real_logs moddednanogpt L1-4: torch._dynamo logs a traceback with every line glog-prefixed (W...).
    records = feed(_lines(REAL_LOGS / "moddednanogpt__AkramjitS_gpt-lab-diffusion__train.log_L1-4_L5698-5730.log"))
    (tb,) = events(records, "traceback")
    assert tb.severity == "warning"
    assert tb.message == "SystemError: PY_SSIZE_T_CLEAN macro must be defined for '#' formats"
    assert [e for e in _all_events(records) if e.severity == "error"] == []


def test_traceback_at_end_of_a_live_file_is_released_when_input_pauses() -> None:
    records: list[Record] = []
    runner = SourceParser("t.log", [EventsParser()], records.append)
    lines = _lines(REAL_LOGS / "hf_trainer__LMSYS_slice4_keyboardinterrupt_tail.log")[:61]  # up to `KeyboardInterrupt`
    runner.feed_lines(Line(no, text) for no, text in enumerate(lines, 1))
    assert events(records, "traceback") == []  # may still be chained
    runner.at_eof()
    assert [t.message for t in events(records, "traceback")] == ["KeyboardInterrupt"]


# ----------------------------------------------------------------------------- torchrun crash summary
# lzhxmu/CPPO#6 (torch 2.x, worker killed by SIGKILL)
CPPO_6 = """\
  File "/home/tiger/.pyenv/versions/3.11.2/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 269, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
src/open_r1/grpo_gsm.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-05-21_15:43:03
  host      : mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker
  rank      : 0 (local_rank: 0)
  exitcode  : -9 (pid: 14750)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 14750
============================================================"""

# torch 2.13 `ChildFailedError("train.py", {2: ..., 3: ...}).format_msg()` (two failed ranks)
TORCH_213 = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2024-02-20_10:26:00
  host      : localhost
  rank      : 3 (local_rank: 3)
  exitcode  : -9 (pid: 3664695)  (SIGKILL)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 3664695
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-02-20_10:25:55
  host      : localhost
  rank      : 2 (local_rank: 2)
  exitcode  : 1 (pid: 3664694)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================"""


def test_child_failed_error_sigkill() -> None:
    lines = [
        # the agent's line before the traceback (Salience-DETR#4 layout, torch 2.x logging)
        "[2025-05-21 15:43:03,261] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) "
        "local_rank: 0 (pid: 14750) of binary: /home/tiger/.pyenv/versions/3.11.2/bin/python3.11",
        "Traceback (most recent call last):",
        *CPPO_6.splitlines(),
    ]
    records = feed(lines)
    (crash,) = events(records, "crash")
    assert crash.rank == 0
    assert crash.data["exitcode"] == -9
    assert crash.data["signal"] == "SIGKILL"
    assert "root cause rank 0" in crash.message and "src/open_r1/grpo_gsm.py FAILED" in crash.message
    signals = events(records, "signal")
    assert [(s.data["signal"], s.data["pid"]) for s in signals] == [("SIGKILL", 14750)]  # printed twice, one event
    (tb,) = events(records, "traceback")
    assert tb.data["exception"] == "torch.distributed.elastic.multiprocessing.errors.ChildFailedError"


def test_child_failed_error_root_cause_and_other_failures() -> None:
    records = feed(TORCH_213.splitlines())
    (crash,) = events(records, "crash")
    assert crash.rank == 2
    assert crash.data["exitcode"] == 1
    assert crash.data["local_rank"] == 2
    assert crash.data["failures"] == [{"rank": 3, "exitcode": -9, "pid": 3664695}]
    assert crash.line == 3  # the "train.py FAILED" line
    (sig,) = events(records, "signal")
    assert (sig.rank, sig.data["signal"]) == (3, "SIGKILL")


def test_child_failed_error_llamafactory_exitcode_1() -> None:
    # hiyouga/LlamaFactory#7032 (torch 2.4)
    text = """\
============================================================
llama_fc/lib/python3.10/site-packages/llamafactory/launcher.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-02-21_20:07:38
  host      : iZl4v544jr5cejwaqci3xvZ
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 14661)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================"""
    records = feed(text.splitlines())
    (crash,) = events(records, "crash")
    assert (crash.rank, crash.data["exitcode"], crash.data["pid"]) == (0, 1, 14661)
    assert events(records, "signal") == []


# ------------------------------------------------------------------------------------------- OOM
def test_oom_old_and_new_messages() -> None:
    lines = [
        # pytorch/pytorch#59778 (message without the exception type)
        "RuntimeError: CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; 6.00 GiB total capacity; "
        "781.59 MiB already allocated; 3.03 GiB free; 1.24 GiB reserved in total by PyTorch)",
        # pytorch/pytorch#16417 comment (torch >= 2.1 wording)
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity "
        "of 23.65 GiB of which 11.06 MiB is free.",
    ]
    ooms = events(feed(lines), "oom")
    assert [o.data["requested_gib"] for o in ooms] == [2.26, round(22 / 1024, 6)]
    assert all(o.data["gpu"] == 0 and o.severity == "error" for o in ooms)


# ------------------------------------------------------------------------------------------ NCCL
def test_nccl_watchdog_timeouts_each_generation() -> None:
    lines = [
        # hiyouga/LlamaFactory#7396 (torch 2.5, prefixed)
        "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) "
        "ran for 600060 milliseconds before timing out.",
        "[rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or "
        "timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: 1579.",
        # OFA-Sys/OFA#271 (torch 1.x)
        "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508, "
        "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.",
        # NVIDIA/Megatron-LM#935: the exception text repeats rank 7's own watchdog line
        "[E ProcessGroupNCCL.cpp:607] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=199, "
        "OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, NumelOut=443687168, Timeout(ms)=600000) ran for 882725 "
        "milliseconds before timing out.",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        "  what():  [PG 1 Rank 7] Process group watchdog thread terminated with exception: [Rank 7] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=199, OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, "
        "NumelOut=443687168, Timeout(ms)=600000) ran for 882725 milliseconds before timing out.",
    ]
    nccl = events(feed(lines), "nccl_timeout")
    assert [(e.rank, e.data["op"], e.data["timeout_ms"]) for e in nccl] == [
        (0, "ALLREDUCE", 600000),
        (1, "ALLREDUCE", 1800000),
        (7, "_REDUCE_SCATTER_BASE", 600000),
    ]
    assert nccl[0].data["ran_ms"] == 600060


def test_nccl_error_in_traceback_final_line() -> None:
    # NVIDIA/nccl#1016 title (torch 2.1 on H100) as the final line of a traceback
    lines = [
        "Traceback (most recent call last):",
        '  File "/opt/venv/lib/python3.12/site-packages/torch/distributed/run.py", line 918, in main',
        "RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
    ]
    records = feed(lines)
    (nccl,) = events(records, "nccl_timeout")
    assert nccl.data["error"] == "unhandled system error"
    assert len(events(records, "traceback")) == 1


# ------------------------------------------------------------------------------------ checkpoints
def test_checkpoint_saves_from_real_logs() -> None:
    found = []
    for name in (
        "moddednanogpt__AkramjitS_gpt-lab-diffusion__train.log_L7720-7732.log",
        "hf_trainer__LMSYS_slice3_eval_end_warnings_evaldict_checkpoint.log",
        "mmengine__chg0901_openmmlab2-hong__frcnn_20230604_120745_L1394-1432.log",
    ):
        found += [(e.data, e.severity) for e in events(feed(_lines(REAL_LOGS / name)), "checkpoint")]
    assert found == [
        ({"path": "experiments/20250530_144815_ModdedGPT/state_step002000.pt"}, "info"),
        ({"path": "output/toasty-sponge-403/checkpoint-200"}, "info"),
        ({"epoch": 5}, "info"),
        ({"path": "best_coco_bbox_mAP_epoch_5.pth"}, "info"),
    ]


def test_config_dumps_are_not_checkpoints() -> None:
    # seed 004 Megatron/DeepSpeed config dump: `checkpoint_activations ....... True`, checkpointing.py lines
    path = seed("004")
    records = feed(_lines(path)[:400])
    assert events(records, "checkpoint") == []
    assert [e for e in _all_events(records) if e.kind not in ("overflow", "nan")] == []


# ----------------------------------------------------------------------------- finish / restart
def test_finished_markers_are_reported_once() -> None:
    lines = [
        # Lightning prints through two handlers (find_string hit: a notebook run, lightning 2.x)
        "INFO: `Trainer.fit` stopped: `max_epochs=20` reached.",
        "INFO:lightning.pytorch.utilities.rank_zero:`Trainer.fit` stopped: `max_epochs=20` reached.",
    ]
    (done,) = events(feed(lines), "finished")
    assert done.data == {"max_epochs": 20}
    # torchrun agent after a clean run (strings from torch/distributed/elastic/agent/server/api.py)
    agent = [
        "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 "
        "seconds for other agents to finish.",
        "INFO:torch.distributed.elastic.agent.server.api:Local worker group finished (WorkerState.SUCCEEDED). "
        "Waiting 300 seconds for other agents to finish",
        "INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. Elapsed: 0.0012 seconds",
    ]
    assert len(events(feed(agent), "finished")) == 1
    # Ray Train / Tune 2.5+ (ray-project/ray issue #36790)
    ray = [
        "Trial TorchTrainer_8dace_00004 completed training after 20 iterations at 2023-06-23 15:30:42. Total running time: 14s"
    ]
    assert len(events(feed(ray), "finished")) == 1


def test_not_finished_markers() -> None:
    lines = [
        # seed 002: a barrier, not the end of training
        "2024-02-20,09:49:41 | INFO | Rank 0: Completed store-based barrier for key:store_based_barrier_key:1 with 4 nodes.",
        "  max_restarts     : 3",  # torchrun launch config dump (pytorch/pytorch#91943)
        "Validating on 40960 tokens (10 steps with 4096 batch size)",
    ]
    assert _all_events(feed(lines)) == []


def test_restarts() -> None:
    lines = [
        "INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:",  # pytorch#91943
        "[INFO] [ft_launcher] [default] Worker group FAILED. 3/3 attempts left; will restart worker group",
        "INFO:torch.distributed.launcher.api:Starting elastic_operator with launch configs:",
    ]
    restarts = events(feed(lines), "restart")
    assert restarts[0].data == {"attempt": 1, "attempts_left": 3, "max_restarts": 3, "state": "FAILED"}
    assert restarts[1].data == {"launch": 2}
    assert len(restarts) == 2  # the first launch is not a restart


def test_parser_never_raises_on_seed_004() -> None:
    records: list[Record] = []
    runner = SourceParser("t.log", [EventsParser()], records.append)
    runner.feed_lines(Line(no, text) for no, text in enumerate(_lines(seed("004")), 1))
    runner.finish()
    assert runner.stats.parser_errors == 0
    assert events(records, "checkpoint") == [] and events(records, "traceback") == []


def test_a_log_that_ends_inside_a_traceback_still_records_it() -> None:
    # tensorflow/tensor2tensor#106 as pasted: the traceback is cut before its exception line.
    records = feed(
        [
            "ERROR:tensorflow:Model diverged with loss = NaN.",
            "Traceback (most recent call last):",
            '  File "/usr/bin/t2t-trainer", line 82, in <module>',
            "    tf.app.run()",
        ]
    )
    (tb,) = events(records, "traceback")
    assert tb.line == 2 and tb.data["exception"] == "unknown"
    assert "ends before its exception line" in tb.message


# --------------------------------------------------------------------------- checkpoint saves, the family
def test_saves_as_custom_loops_and_smaller_frameworks_print_them() -> None:
    # lines from tests/corpus/ (nanoGPT, SpeechBrain, YOLOX, MLX, kohya, PaddleOCR, LitGPT, minGPT, Keras)
    lines = {
        "saving checkpoint to out": "out",
        "2023-06-09 22:28:29,323 - speechbrain.utils.checkpoints - INFO - Saved an end-of-epoch checkpoint in "
        "results/lstm/1986/save/CKPT+2023-06-09+22-28-28+00": "results/lstm/1986/save/CKPT+2023-06-09+22-28-28+00",
        "2023-08-10 08:54:49 | INFO     | yolox.core.trainer:352 - Save weights to ./YOLOX_outputs/yolox_voc_s": (
            "./YOLOX_outputs/yolox_voc_s"
        ),
        "Iter 100: Saved adapter weights to checkpoints/100_adapters.npz.": "checkpoints/100_adapters.npz",
        "saving checkpoint: K:/AI/model/test_woman_v1.safetensors": "K:/AI/model/test_woman_v1.safetensors",
        "[2025/09/24 12:21:24] ppocr INFO: save model in ./output/PP-OCRv5_mobile_det/latest": (
            "./output/PP-OCRv5_mobile_det/latest"
        ),
        "Saving LoRA weights to 'out/finetune/final/lit_model.pth.lora'": "out/finetune/final/lit_model.pth.lora",
        "Epoch 1: loss improved from inf to 1.09220, saving model to /di_test/model-0001-1.0922.h5": (
            "/di_test/model-0001-1.0922.h5"
        ),
        "saving model": None,
        "2024-04-17 05:30:45 INFO model saved. train_network.py:999": None,
    }
    for text, path in lines.items():
        got = events(feed([text], [EventsParser()]), "checkpoint")
        assert len(got) == 1, text
        assert got[0].data.get("path") == path, text
    (mlx,) = events(feed(["Iter 100: Saved adapter weights to checkpoints/100_adapters.npz."]), "checkpoint")
    assert mlx.step == 100


def test_saving_other_things_is_not_a_checkpoint() -> None:
    for text in (
        "Configuration saved in out/config.json",
        "tokenizer config file saved in out/tokenizer_config.json",
        "Saving the dataset (1/1 shards): 100%|██████████| 5000/5000",
        "Saving model config to out/config.json",
        "Deleted checkpoint in results/save/CKPT+2023-06-09+21-51-31+00",
        "save_steps = 500",
    ):
        assert events(feed([text], [EventsParser()]), "checkpoint") == [], text


def test_a_save_glued_after_a_bar_keeps_the_bar() -> None:
    line = "Steps: 100%|██████████| 500/500 [06:52<00:00,  1.71it/s, loss=0.208, lr=0.0001]Model weights saved in /out"
    records = feed([line])
    assert events(records, "checkpoint")
    assert [(s.step, s.metrics["loss"]) for s in records if isinstance(s, Step)] == [(500, 0.208)]


def test_a_traceback_cut_at_its_start_and_the_deepspeed_launchers_exit() -> None:
    # `tail -n 40 out.log`: the frames and the exception without their header; then DeepSpeed's
    # launcher kills the other workers and reports the failed one's exit code
    lines = [
        "    result = forward_call(*input, **kwargs)",
        '  File "/x/transformers/models/llama/modeling_llama.py", line 136, in apply_rotary_pos_emb',
        "    q_embed = (q * cos) + (rotate_half(q) * sin)",
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:3 and cpu!",
        "[2023-06-09 05:24:44,405] [INFO] [launch.py:314:sigkill_handler] Killing subprocess 75727",
        "[2023-06-09 05:24:52,263] [ERROR] [launch.py:320:sigkill_handler] ['/opt/conda/bin/python', '-u', "
        "'main.py', '--local_rank=15'] exits with return code = 1",
    ]
    records = feed(lines)
    (tb,) = events(records, "traceback")
    assert "RuntimeError" in tb.message
    assert [e.data.get("exitcode") for e in events(records, "crash")][-1:] == [1]


def test_slurm_ends_a_job() -> None:
    # scancel / a time limit (glued to a bar, as a job's stderr shows it), srun's per-task report, a cgroup OOM kill
    records = feed(
        [
            "Preparing test set...:  46%|████▋     | 31/67 [29:02<35:12, 58.67s/it]slurmstepd: error: *** STEP 6053.0 "
            "ON DEL2212S020 CANCELLED AT 2024-04-23T12:18:08 ***",
            "slurmstepd: error: *** JOB 81234 ON gpu-node-07 CANCELLED AT 2024-04-23T12:18:08 DUE TO TIME LIMIT ***",
            "srun: error: gpu-node-07: task 3: Killed",
            "srun: error: gpu-node-07: tasks 0-2: Exited with exit code 1",
            "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=81234.0. Some of your processes may have been "
            "killed by the cgroup out-of-memory handler.",
        ]
    )
    signals = events(records, "signal")
    assert [e.data["signal"] for e in signals] == ["SIGTERM", "SIGTERM", "SIGKILL"]
    assert signals[1].data["reason"] == "time limit" and signals[0].data["step"] == "6053.0"
    assert [e.data["exitcode"] for e in events(records, "crash")] == [1]
    assert len(events(records, "oom")) == 1


def test_processes_reported_dead_and_loops_that_say_they_are_done() -> None:
    deaths = {
        "Killed": "SIGKILL",  # the kernel's OOM killer, as the shell reports it
        "bash: line 1: 23670 Aborted                 (core dumped) ( nnet3-chain-compute-prob --l2 )": "SIGABRT",
        "Segmentation fault (core dumped)": "SIGSEGV",
        "Fatal Python error: Segmentation fault": "SIGSEGV",
        "ERROR: Unexpected segmentation fault encountered in worker.": "SIGSEGV",
        "TERM_RUNLIMIT: job killed after reaching LSF run time limit.": "SIGTERM",
    }
    for text, sig in deaths.items():
        assert [e.data["signal"] for e in events(feed([text]), "signal")] == [sig], text
    (crash,) = events(feed(["terminate called after throwing an instance of 'c10::CUDAError'"]), "crash")
    assert crash.data["exception"] == "c10::CUDAError"
    for done in (
        "2023-01-01 10:00:00,000 INFO: End of training. Time consumed: 3:06:01",
        "Training finished!",
        "02:13:51.152 [main] INFO yelpreview.TrainReviews - Training is Done",  # a DL4J example's log4j line
        "Total training time: 179.44m",  # nanochat
        "done, took 304.161 seconds",  # keras-rl's fit
    ):
        assert len(events(feed([done]), "finished")) == 1, done
    # not a run's end: Ray's per-iteration note, DLRM's progress line, a sentence that mentions the word
    quiet = [
        "Training finished iteration 1 at 2023-06-22 22:44:43. Total running time: 8s",
        "Finished training it 1024/2048437 of epoch 0, 53.58 ms/it, loss 0.138725, accuracy 96.726 %",
        "2024-01-01 10:00:00 INFO fold_1 - Training done",  # one fold of several: a word is no logger's name
        "done training tokenizer",
        "The job was Killed by",
    ]
    assert events(feed(quiet), "finished") == [] and events(feed(quiet), "signal") == []


def test_checkpoint_saves_in_more_words() -> None:
    saves = [
        "Saving checkpoint for epoch 5 at ./checkpoints/train/ckpt-1",  # TF tutorials' CheckpointManager
        "2023-01-01 10:00:00,000 INFO: Saving latest models and training states.",  # BasicSR
        "Saving ./log/2024-11-15_10-24-32/000000097.pth",
        "Training snapshot saved at ./snapshot.pt",  # PyTorch's DDP tutorial series
        "Saving best state,epoch 0",
        "[Checkpoint] saved ./checkpoints/ckpt_step0047850.pt",  # a from-scratch pretraining loop
    ]
    for text in saves:
        assert len(events(feed([text]), "checkpoint")) == 1, text
    (bracketed,) = events(feed(["[Checkpoint] saved ./checkpoints/ckpt_step0047850.pt"]), "checkpoint")
    assert bracketed.data == {"path": "./checkpoints/ckpt_step0047850.pt"}
    # nanochat: a file per rank and part of one save is one save
    shards = [f"Saved optimizer state to: /c/d24/optim_016704_rank{r}.pt" for r in range(8)]
    shards += ["Saved model parameters to: /c/d24/model_016704.pt", "Saved model parameters to: /c/d24/model_017000.pt"]
    assert [e.data["path"] for e in events(feed(shards), "checkpoint")] == [
        "/c/d24/optim_016704_rank0.pt",
        "/c/d24/model_017000.pt",
    ]
    (plain,) = events(feed(["Model saved successfully"]), "checkpoint")
    assert plain.data == {}  # (no path: `successfully` is not one)
    assert events(feed(["Saving the dataset (1/1 shards)", "saving state of the art results"]), "checkpoint") == []


def test_ctrl_c_echoed_alone_is_an_interrupt() -> None:
    got = events(feed(["tick 3     kimg 18.2     sec/tick 652.4", "^C"]), "signal")
    assert [(e.message, e.data["signal"]) for e in got] == [("^C", "SIGINT")]
    assert events(feed(["press ^C to stop", "a^Cb"]), "signal") == []


def test_a_save_to_a_weights_file_is_a_checkpoint() -> None:
    got = events(
        feed(
            [
                "save_checkpoint_lora_file: saving to checkpoint-10.gguf",
                "save_as_llama_lora: saving to lora.bin",
                "saving to disk the dataset index",
            ]
        ),
        "checkpoint",
    )
    assert [e.data["path"] for e in got] == ["checkpoint-10.gguf", "lora.bin"]


def test_saves_of_other_kinds_of_weights_are_checkpoints() -> None:
    got = events(
        feed(
            [
                "[ITER 7000] Saving Gaussians [11/07 13:58:39]",  # 3D Gaussian Splatting
                "2024-01-03 08:15.28 [info     ] Model parameters are saved to d3rlpy_logs/CQL/model_5000.d3",
            ]
        ),
        "checkpoint",
    )
    assert [(e.line, e.step) for e in got] == [(1, 7000), (2, 5000)]  # (the step its file is named by)


def test_each_save_at_an_iteration_is_its_own_checkpoint() -> None:
    """NVIDIA Tacotron 2: `Saving model and optimizer state at iteration N to PATH`, one per save."""
    got = events(
        feed(
            [
                "Saving model and optimizer state at iteration 0 to /data/models/run/checkpoint_0",
                "Train loss 0 48.220909 Grad Norm 13.484264 5.71s/it",
                "Saving model and optimizer state at iteration 1000 to /data/models/run/checkpoint_1000",
            ]
        ),
        "checkpoint",
    )
    assert [(e.step, e.data["path"]) for e in got] == [
        (0, "/data/models/run/checkpoint_0"),
        (1000, "/data/models/run/checkpoint_1000"),
    ]


def test_detectron2_non_finite_loss_error_is_a_nan_at_its_iteration() -> None:
    records = feed(
        [
            "Traceback (most recent call last):",
            '  File "tools/train_net.py", line 53, in main',
            "    return trainer.train()",
            "FloatingPointError: Loss became infinite or NaN at iteration=14671!",
        ]
    )
    assert [(e.step, e.data["metric"]) for e in events(records, "nan")] == [(14671, "loss")]


def test_ctrl_c_followed_by_more_output_is_not_the_end() -> None:
    """YOLOv5 (issue 11585): `^C` typed at the prompt, then the run's banner: no interrupt."""
    records = feed(["train: weights=best.pt, data=coco.yaml", "^C", "YOLOv5 🚀 v7.0-166 Python-3.7.0 torch-1.13.1"])
    assert events(records, "signal") == []


def test_files_that_are_not_weights_are_not_checkpoints() -> None:
    lines = ["Saving to /data/tokenized/train.bin", "Predictions saved to preds.npz", "saved to outputs/embeddings.pt"]
    assert events(feed(lines), "checkpoint") == []


@pytest.mark.parametrize(
    "line",
    [
        "[2024-11-15 13:21:57,096  INFO  train.py  line 119  2491476]  Saving ./log/2024-11-15_10-24-32/000000097.pth",
        "2024-11-15 13:21:57,096 INFO Saving ./log/run/000000097.pth",
        "Saving at log/classification/pointnet2_cls_ssg/checkpoints/best_model.pth",  # PointNet++
        "12 Nov 21:13    INFO  Saving current: saved/MAMO-Nov-12-2022_21-12-41.pth",  # RecBole
        "  ✓ Saved best (val_acc=0.5000)",
        "  *** New best AUC=0.3667 F1=0.4351 → saved",
        "  保存最佳模型 (val_loss=3.2508)",  # "save the best model"
        "保存模型...",
        "SAVED CHECKPOINT @ EPOCH 1",
        "Save checkpoint with 85 tensors and 32333580 parameters.",  # DreamerV2
        "Perform Evaluation on ['lfw', 'cfp_fp'] , and Save Checkpoints...",
        "2022-03-28 02:51:48.014417 | dqn_kung_fu_master_0 itr #9999 saving snapshot...",  # rlpyt
        "Checkpoint at step 276",  # darkflow
        "INFO:tensorflow:Saving checkpoints for 1719 into ../model/esim/model.ckpt.",  # TF Estimator
    ],
)
def test_saves_after_a_logging_prefix_and_in_more_families(line: str) -> None:
    assert len(events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line], [EventsParser()]), "checkpoint")) == 1


@pytest.mark.parametrize(
    "line",
    [
        "Saving at the end of each epoch: True",
        "save in: ./output",
        "Saving best: False",
        "Best model will be saved to out/best.pth",
        "The loop will save to out/model.pth",
        "Going to save best",
        "Saving current config: cfg.yaml",
        "Saving vocab: vocab.bin",
        "保存最佳模型路径: ./out",
        "saving snapshot of the dataset",
        "Checkpoint at step 500 will be written to disk",
    ],
)
def test_settings_and_other_files_in_those_words_are_no_save(line: str) -> None:
    assert events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line], [EventsParser()]), "checkpoint") == []


def test_a_save_before_any_step_line_is_at_the_step_its_file_is_named_by() -> None:
    def step_of(line: str) -> int | None:
        (save,) = events(feed([line], [EventsParser()]), "checkpoint")
        return save.step

    assert step_of("INFO:tensorflow:Saving checkpoints for 1719 into ../model/esim/model.ckpt.") == 1719
    assert step_of("[0119 15:39:22 @saver.py:82] Model saved to /training/logs/gillsoft/model-8000.") == 8000
    assert step_of("Saving model checkpoint to out/checkpoint-200") == 200
    assert step_of("Saved checkpoint to /results/phase_1/ckpt-47") == 47
    assert step_of("Saving checkpoint to exp/bad-model-2.pt") is None  # (rank 2's model, not step 2)
    assert step_of("Saving checkpoint to out/epoch_3.pth") is None  # (an epoch is no step)
    # once steps are read, the save is at the last of them (TF's `ckpt-1` of a CheckpointManager counts saves)
    lines = ["step 499 loss 2.0", "step 500 loss 1.9", "Saving checkpoint for epoch 1 at ./checkpoints/train/ckpt-1"]
    assert [e.step for e in events(feed(lines), "checkpoint")] == [500]


@pytest.mark.parametrize(
    "line",
    [
        "INFO:__main__:✅ Training completed successfully!",
        "[2022-06-27 05:56:21,505]Optimization Finished!",  # pygcn
        "Optimization Finished!",
    ],
)
def test_the_end_after_a_logging_prefix(line: str) -> None:
    assert len(events(feed(["epoch 1 loss 0.5", "epoch 2 loss 0.4", line]), "finished")) == 1


@pytest.mark.parametrize(
    ("line", "severity"),
    [
        ("RuntimeError: cuda runtime error (2) : out of memory at /b/wheel/THCStorage.cu:66", "error"),  # PyTorch 0.4
        ("Error: OOM when allocating tensor with shape[2048,1024,3,3] and type float on GPU:0", "error"),  # TF
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate", "error"),
        ("RuntimeError: MPS backend out of memory (MPS allocated: 8.07 GB)", "error"),
        ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB", "error"),
        ("2022-05-08 18:25:27,469 - INFO - WARNING: ran out of memory", "warning"),  # GPT2-Chinese: caught
        ("| WARNING: ran out of memory, skipping batch", "warning"),  # fairseq
    ],
)
def test_out_of_memory_as_each_backend_says_it(line: str, severity: str) -> None:
    (oom,) = events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line]), "oom")
    assert oom.severity == severity


def test_a_memory_figure_is_no_oom() -> None:
    lines = ["step 1 loss 2.0 mem 3.1GB", "max memory allocated 30GB; out of memory errors: 0 expected"]
    assert events(feed(lines), "oom") == []


def test_a_loop_that_says_it_received_a_nan_loss() -> None:
    lines = ["step 4691 loss 2.0", "WARNING: received a nan loss, setting loss value to 0"]  # deepspeech.pytorch
    assert [e.data["metric"] for e in events(feed(lines), "nan")] == ["loss"]


def test_a_save_said_with_the_figure_it_was_kept_for() -> None:
    lines = [
        "step 1 loss 2.0",
        "step 2 loss 1.9",
        "Saved new best SeqAR-Diffusion model at epoch 1 with val loss 0.7877",
    ]
    assert len(events(feed(lines), "checkpoint")) == 1
    assert events(feed(["step 1 loss 2.0", "step 2 loss 1.9", "Saving model with config cfg.yaml"]), "checkpoint") == []


def test_ray_tunes_end_names_the_iteration_it_ended_at() -> None:
    line = "Trial TorchTrainer_8dace_00004 completed training after 20 iterations at 2023-06-23 15:30:42."
    (end,) = events(feed([line]), "finished")
    assert end.step == 20


def test_the_agents_wait_after_a_failed_worker_group_is_no_end() -> None:
    prefix = "INFO:torch.distributed.elastic.agent.server.api:"
    failed = [prefix + "Local worker group finished (FAILED). Waiting 300 seconds for other agents to finish"]
    done = [prefix + "Done waiting for other agents. Elapsed: 0.0007698535919189453 seconds"]
    assert events(feed(failed + done), "finished") == []
    assert len(events(feed(done), "finished")) == 1


def test_wandbs_finish_after_a_clean_exit_is_the_end() -> None:
    done = "wandb: Waiting for W&B process to finish... (success)."
    failed = "wandb: Waiting for W&B process to finish... (failed 255). Press Control-C to abort syncing."
    assert len(events(feed(["step 1 loss 2.0", done]), "finished")) == 1
    assert events(feed(["step 1 loss 2.0", failed]), "finished") == []


@pytest.mark.parametrize(
    "line",
    [
        "300 epochs completed in 12.345 hours.",  # Ultralytics (YOLOv5, YOLOv8)
        "2023-05-01 10:00:00 | INFO | fairseq_cli.train | done training in 8354.1 seconds",  # fairseq
        "*** Best metric: 80.1 (epoch 299)",  # timm's train.py
    ],
)
def test_the_ends_frameworks_print_after_their_loop(line: str) -> None:
    assert len(events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line]), "finished")) == 1


def test_detectron2s_total_training_time_is_no_end() -> None:
    # its hooks print it in a `finally`: after an exception as after the last iteration
    line = "[05/01 10:00:00 d2.engine.hooks]: Total training time: 0:01:15 (0:00:08 on hooks)"
    assert events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line]), "finished") == []


@pytest.mark.parametrize(
    "line",
    ["Training Completed!!! Saving pre-trained model to ./out", "TRAINING COMPLETE", "training complete"],
)
def test_the_loops_last_word_in_any_case(line: str) -> None:
    assert len(events(feed(["step 1 loss 2.0", "step 2 loss 1.9", line]), "finished")) == 1


def test_an_ides_exit_code_under_a_pasted_log() -> None:
    lines = ["step 1 loss 2.0", "step 2 loss 1.9", ""]
    assert len(events(feed([*lines, "Process finished with exit code 0"]), "finished")) == 1
    (crash,) = events(feed([*lines, "Process finished with exit code 1"]), "crash")
    assert crash.data["exitcode"] == 1
    (killed,) = events(
        feed([*lines, "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)"]), "signal"
    )
    assert killed.data["signal"] == "SIGKILL"
    assert events(feed([*lines, "Process finished with exit code 1"]), "finished") == []


def test_ran_out_of_memory_is_an_oom_only_when_the_loop_says_it_went_on() -> None:
    base = ["step 1 loss 2.0", "step 2 loss 1.9"]
    (retry,) = events(feed([*base, "batch size 64 ran out of memory, retrying with batch size 32"]), "oom")
    assert retry.severity == "warning"
    assert events(feed([*base, "if the GPU ran out of memory, lower --batch-size"]), "oom") == []
    assert events(feed([*base, "(none ran out of memory)"]), "oom") == []


def test_a_stage_of_training_complete_is_no_end_and_a_date_no_step() -> None:
    stage = "Training complete (stage 1 of 3): switching to fine-tuning"
    assert events(feed(["step 1 loss 2.0", "step 2 loss 1.9", stage]), "finished") == []
    (save,) = events(feed(["Saving model to runs/model_20240501.pt"], [EventsParser()]), "checkpoint")
    assert save.step is None

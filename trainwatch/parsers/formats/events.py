"""Events any training log can contain: tracebacks, signals, launcher crash summaries, OOM,
NCCL timeouts, checkpoint saves, clean-finish markers and launcher restarts.

This module dispatches; what each kind looks like is in its own module: `tracebacks.py`,
`failures.py` (signals, OOM, NCCL), `launcher.py` (torchrun's failure summary and restarts),
`checkpoints.py` and `finished.py`. The parser has no triggers because a traceback's frames and
a torchrun failure summary are made of lines no trigger could name; it is offered only the
lines no format parser understood, and a line outside any open block costs one substring
pre-filter.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Kind, Line
from trainwatch.parsers.base import Emitter, Parser, Sample
from trainwatch.parsers.fields import prefix_end
from trainwatch.parsers.formats._tqdm import BAR_BEFORE
from trainwatch.parsers.formats.checkpoints import Checkpoints
from trainwatch.parsers.formats.failures import Failures
from trainwatch.parsers.formats.finished import FinishMarkers
from trainwatch.parsers.formats.launcher import FailureSummary, Relaunches
from trainwatch.parsers.formats.numerics import PREFILTER as NUMERICS_PREFILTER
from trainwatch.parsers.formats.numerics import Numerics
from trainwatch.parsers.formats.tracebacks import FRAME, IPYTHON_HEADER, TB_START, Tracebacks
from trainwatch.parsers.hints import Hinted
from trainwatch.parsers.rank import split_prefix
from trainwatch.parsers.timestamps import line_time
from trainwatch.records import Severity

# glog-style headers (torch C++ and torch._logging): `W0530 14:48:26.433000 2622492 path/file.py:1233] `,
# `[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] `, old `[E ProcessGroupNCCL.cpp:737] `.
_GLOG = re.compile(r"^\[?([IWEF])(?:\d{4} \d{2}:\d{2}:\d{2}\.\d+(?: +(\d{1,18}(?!\d)))? +| )[^\s\]]+:\d+\] ?")
_GLOG_SEVERITY: dict[str, Severity] = {"I": "info", "W": "warning", "E": "error", "F": "error"}

# Every single-line event contains one of these (`_prefiltered`): the words, the start of a
# `Training time` summary, or what the numerics module reads (`loss is nan`, `overflow`).
_PREFILTER = Hinted(
    r"signal|Signal|SIG|KeyboardInterrupt|exitcode|out of memory|Out of memory|OutOfMemory|OOM when|Watchdog|watchdog|NCCL|nccl"
    r"|heckpoint|[Ss]av(?:e|ed|ing)\s|SAV(?:E|ED|ING)\s|[Ss]aved\b|Training completed|stopped: `max_|successfully finished"
    r"|worker group finished|Done waiting|after training is done|elastic_operator|will restart worker group"
    r"|exits successfully|SystemExit|An exception has occurred|completed training after|exits with return code|CANCELLED AT|srun: error|oom.kill|Killed|已杀死|Aborted|[Ss]egmentation fault|Terminated|Bus error"
    r"|Illegal instruction|Floating point exception|User defined signal|TERM_|terminate called|End of training"
    r"|Training (?:is )?(?:finished|complete|[Dd]one)|Finished [Tt]raining|done training|done, took|Successfully completed|\^C"
    r"|Training [\w.-]+ complete in|[Ee]arly[ _-]?[Ss]top(?:ping|ped)?(?: triggered| at |\.\.)|CUDA error: |保存|训练完成"
    r"|训练结束|[Dd]ump|improv|Signaling Trainer to stop|: Assertion [`'].*' failed|Optimization [Ff]inished|W&B process to finish|Process finished with exit code|[Tt]raining (?:is )?(?:[Ff]inished|[Cc]omplete|[Dd]one)|TRAINING (?:IS )?(?:FINISHED|COMPLETE|DONE)|epochs? completed in|\*\*\* Best metric",
    (
        "ignal", "SIG", "KeyboardInterrupt", "exitcode", "ut of memory", "OutOfMemory", "OOM when", "atchdog", "NCCL", "nccl",
        "heckpoint", "av", "SAV", "Training ", "stopped: `max_", "finished", "done training", "done, took", "Done waiting", "after training is done",
        "elastic_operator", "will restart worker group", "exits ", "SystemExit", "An exception has occurred",
        "completed training after", "CANCELLED AT", "srun: error", "kill", "Killed", "已杀死", "Aborted",
        "egmentation fault", "Terminated", "Bus error", "Illegal instruction", "Floating point exception",
        "End of training", "Finished ", "Successfully completed", "terminate called", "TERM_", "^C",
        "arly", "CUDA error: ", "保存", "训练完成", "训练结束", "ump", "improv", "Signaling Trainer",
        ": Assertion ", "Optimization ", "W&B process", " completed in", "*** Best metric", "exit code", "raining ", "TRAINING ",
    ),
)  # fmt: skip
_TRAINING_TIME = re.compile(r"(?:Total )?[Tt]raining [Tt]ime")
_NUMERICS = re.compile(NUMERICS_PREFILTER)
_NUMERIC_WORDS = ("nan", "inf", "overflow")


def _prefiltered(body: str) -> bool:
    """Whether `body` may hold a single-line event."""
    if _PREFILTER.search(body) is not None or _TRAINING_TIME.match(body) is not None:
        return True
    if body.isascii():  # (`re`'s case-insensitive `i` also matches `İ` and `ı`: other text is searched)
        low = body.lower()
        if not any(map(low.__contains__, _NUMERIC_WORDS)):
            return False
    return _NUMERICS.search(body) is not None


# Text a traceback header can be glued to: a progress bar (read by the bar formats), a `^C` echo.


class EventsParser(Parser):
    name = "events"
    title = "Training events (tracebacks, signals, crashes, OOM, NCCL, checkpoints)"
    triggers = ()
    example = (
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB ...\n"
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3664692 closing signal SIGHUP"
    )
    priority = 500
    samples = (
        Sample(  # murong-xu/CADS issue #4: a traceback whose exception is a CUDA OOM
            "Traceback (most recent call last):\n"
            '  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1527, in _call_impl\n'
            "    return forward_call(*args, **kwargs)\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of "
            "31.47 GiB of which 12.73 GiB is free.\n",
            events=("traceback", "oom"),
        ),
        Sample(  # hiyouga/LlamaFactory issue #7396: the NCCL watchdog's collective timeout (torch 2.5)
            "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
            "Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n"
            "[rank0]:[E321 02:07:08.465150152 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or "
            "timeout) detected by watchdog at work: 1580, last enqueued NCCL work: 1582, last completed NCCL work: "
            "1579.\n",
            events=("nccl_timeout",),
        ),
        Sample(  # lzhxmu/CPPO issue #6: torchrun's failure summary, the worker killed by SIGKILL
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
            "============================================================\n"
            "src/open_r1/grpo_gsm.py FAILED\n"
            "------------------------------------------------------------\n"
            "Failures:\n"
            "  <NO_OTHER_FAILURES>\n"
            "------------------------------------------------------------\n"
            "Root Cause (first observed failure):\n"
            "[0]:\n"
            "  time      : 2025-05-21_15:43:03\n"
            "  host      : mlxlab115rp2n7682d40d9-20250521025625-6dyyd3-8nir8b-worker\n"
            "  rank      : 0 (local_rank: 0)\n"
            "  exitcode  : -9 (pid: 14750)\n"
            "  error_file: <N/A>\n"
            "  traceback : Signal 9 (SIGKILL) received by PID 14750\n"
            "============================================================\n",
            events=("crash", "signal"),
        ),
        Sample(  # a 4-rank DeepSpeed run hung up (sample_logs/deepspeed__coca_4rank_zero1_sighup.log)
            "WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers\n"
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3664692 closing signal SIGHUP\n"
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3664693 closing signal SIGHUP\n"
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3664694 closing signal SIGHUP\n"
            "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 3664695 closing signal SIGHUP\n",
            events=("signal",),
        ),
        Sample(  # facebookresearch/fairseq issue #1967: fp16 loss-scale overflows
            "2020-04-05 18:47:19 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 64.0\n"
            "2020-04-05 18:49:04 | INFO | fairseq.trainer | NOTE: overflow detected, setting loss scale to: 32.0\n",
            events=("overflow",),
        ),
        Sample(  # HF Trainer saving a checkpoint (../shared/real_logs/hf_trainer__LMSYS_slice3_*)
            "Saving model checkpoint to output/toasty-sponge-403/checkpoint-200\n",
            events=("checkpoint",),
        ),
        Sample(  # Megatron-DeepSpeed's last iteration and end marker (sample_logs/megatron__llm_action_*)
            " iteration     2500/    2500 | consumed samples:        80000 | consumed tokens:    163840000 | elapsed "
            "time per iteration (ms): 1206.4 | learning rate: 1.371E-04 | global batch size:    32 | lm loss: "
            "1.254951E+01 | loss scale: 1.0 | grad norm: 2.265 | num zeros: 0.0 | actual seqlen:  2048 | number of "
            "skipped iterations:   0 | number of nan iterations:   0 | samples per second: 26.526 | TFLOPs: 59.42 |\n"
            "[after training is done] datetime: 2023-08-15 07:22:31\n",
            steps=((2500, {"loss": 12.54951}),),
            events=("finished",),
        ),
    )

    def __init__(self) -> None:
        self._failures = Failures()
        self._tracebacks = Tracebacks(self._failures.derived)
        self._summary = FailureSummary(self._failures)
        self._checkpoints = Checkpoints()
        self._finished = FinishMarkers()
        self._relaunches = Relaunches()
        self._numerics = Numerics()
        self._last_text = ""
        self._last_no = 0  # the last line offered to this parser (the one before went to another format)
        self._ctrl_c: tuple[Line, int | None, int] | None = None  # a `^C` line, its rank, the lines read then

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if line.kind is Kind.FRAME:
            return False
        if self._ctrl_c is not None and text.strip():
            self._ctrl_c = None  # output after it: the run went on (a `^C` typed at a prompt, then a relaunch)
        if text.strip() == "^C":
            # the terminal's echo of Ctrl-C alone on its line: an interrupt if nothing follows it (`at_eof`)
            self._ctrl_c = (Line(line.no, text), split_prefix(line.text)[0], out.lines_read())
            return True
        previous, self._last_text = self._last_text, text
        previous_no, self._last_no = self._last_no, line.no
        prefix_rank = split_prefix(line.text)[0] if len(line.text) != len(text) else None
        body, level, logger = text, None, None
        if text[:1] in "IWEF[":
            m = _GLOG.match(text)
            if m:
                body, level, logger = text[m.end() :], m.group(1), "glog:" + (m.group(2) or "")
        if self._summary.feed_open(body, line, out):
            return True
        key = (prefix_rank, logger)
        handled = self._tracebacks.feed(key, body, line, out)
        if handled is not None:
            return handled
        if body.startswith(TB_START):
            severity: Severity = _GLOG_SEVERITY[level] if level else "error"
            if previous.startswith("Exception ignored in"):
                severity = "warning"  # Python reports and then ignores it (atexit, __del__)
            self._tracebacks.start(key, line.no, line_time(text), severity)
            return True
        if "Traceback (most recent call last)" in body:
            return self._glued_traceback(key, body, line, out, level)
        if body[:1] in " \t" and FRAME.match(body) and not previous.startswith("Stack (most recent call last)"):
            # The first frame, its header glued to the line before (which another format read), or
            # a traceback whose start the log does not hold (`tail -n 200`, a paste): from here.
            start = line.no - 1 if previous_no != line.no - 1 else line.no
            self._tracebacks.start(key, start, line_time(text), _GLOG_SEVERITY[level] if level else "error")
            return True
        opened = self._summary.feed_start(body, line)
        if opened is not None:
            return opened
        if not _prefiltered(body):
            return False
        return self._single(body.strip(), body, line, out, prefix_rank)

    def at_eof(self, out: Emitter) -> None:
        self._tracebacks.at_eof(out)
        self._ctrl_c_ends(out)

    def _ctrl_c_ends(self, out: Emitter) -> None:
        """A `^C` nothing came after (no line this parser was offered, no line another format read:
        its count of lines moved on) ended the run."""
        if self._ctrl_c is not None:
            ctrl_c, rank, lines = self._ctrl_c
            self._ctrl_c = None
            if out.lines_read() == lines:
                self._failures.sigint(ctrl_c.text.strip(), ctrl_c, out, rank)

    def segment_ends(self, out: Emitter) -> None:
        self.at_eof(out)  # a chain never spans a relaunch

    def finish(self, out: Emitter) -> None:
        self._ctrl_c_ends(out)
        self._tracebacks.finish(out)
        self._summary.finish(out)

    def _glued_traceback(
        self, key: tuple[int | None, str | None], body: str, line: Line, out: Emitter, level: str | None
    ) -> bool:
        """A header after other text (`^CTraceback ...`, `...it/s]Traceback ...`) or IPython's header."""
        severity: Severity = _GLOG_SEVERITY[level] if level else "error"
        m = IPYTHON_HEADER.match(body.strip())
        if m:
            self._tracebacks.start(key, line.no, line_time(body), severity, header=m.group(1))
            if severity == "error":
                self._failures.derived(m.group(1), m.group(1), line, out, key[0])
            return True
        at = body.find(TB_START)
        if at < 0 or body[at + len(TB_START) :].strip():
            return False  # the words inside a message, not a header
        self._tracebacks.start(key, line.no, line_time(body), severity)
        return not BAR_BEFORE.search(body, 0, at)  # the bar before it is still offered to the bar formats

    def _single(self, body: str, text: str, line: Line, out: Emitter, rank: int | None) -> bool:
        if self._failures.line(body, line, out, rank):
            return True
        understood, stopped = self._numerics.line(body, text, line, out, rank)
        if stopped:
            self._failures.crash(body, {"reason": "non-finite"}, line.no, out, rank)
        if understood:
            return True
        if self._failures.exit_note(body, line, out, rank):
            return True
        # (a save or an end said after a logging prefix: `[2024-11-15 13:21:57,096  INFO  train.py  line 119
        # 2491476]  Saving ./log/000000097.pth`, `INFO:__main__:✅ Training completed successfully!`)
        message = body[prefix_end(body) :]
        saved = self._checkpoints.line(body, message, line, out)
        if self._finished.line(body, message, line, out) or saved:
            return True  # (`训练完成! 保存模型到 ./out`: the end, and a save, on one line)
        if self._relaunches.line(body, line, out):
            self._finished.restarted()
            return True
        return False

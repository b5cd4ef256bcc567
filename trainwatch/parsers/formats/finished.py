"""Lines that say a run ended cleanly: the trainer's own end marker, or the launcher's.

A helper of `events.py`, not a parser. Each family's marker gives one `finished` event per
attempt (DeepSpeed's launcher prints its line once per local rank); a restart forgets them.
"""

from __future__ import annotations

import re

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter

_FINISHED = (
    ("hf", re.compile(r"\bTraining completed\.(?: Do not forget|\s*$)")),
    ("lightning", re.compile(r"`Trainer\.fit` stopped: `(max_epochs|max_steps)=(\d{1,18}(?!\d))` reached\.")),
    ("torchrun", re.compile(r"\] worker group successfully finished\.")),
    ("torchrun", re.compile(r"Local worker group finished \(WorkerState\.SUCCEEDED\)")),
    ("torchrun", re.compile(r"\bDone waiting for other agents\. Elapsed: ")),
    ("megatron", re.compile(r"\[after training is done\]")),
    # Ray Train / Tune (>= 2.5): `Training completed after 20 iterations at 2023-06-23 15:30:42.`,
    # `Trial TorchTrainer_8dace_00004 completed training after 20 iterations at ...`
    # (the iterations it ran are the step it ended at: the trial's result box may come after the line)
    (
        "ray",
        re.compile(r"^(?:Training completed|Trial \S+ completed training) after (?P<iterations>\d{1,18}) iterations\b"),
    ),
    # A loop's own last word, on a line of its own: BasicSR `End of training. Time consumed: 3:06:01`, Coqui
    # `Training finished!`, `Finished training`, `Training complete.`, DL4J examples' `Training is Done`, dlib's
    # examples' `done training` (not Ray's
    # `Training finished iteration 1`, nor DLRM's progress `Finished training it 1024/2048437 of epoch 0, ...`)
    (
        "end_of_training",
        re.compile(
            r"^(?:[\W_]*|.*\b(?:INFO|Info)\b\W*(?:[\w$]+(?:\.[\w$]+)+ - )?)"  # (a logger's name: log4j's `a.b.Main - `)
            # (`Training Completed!!!` axolotl, `TRAINING COMPLETE`, `training complete`)
            r"(?:End of training|(?:[Tt]raining|TRAINING) (?:is |IS )?(?:[Ff]inished|[Cc]omplete|[Cc]ompleted|[Dd]one"
            r"|FINISHED|COMPLETE|COMPLETED|DONE)|Finished [Tt]raining"
            r"|Optimization [Ff]inished)"  # (pygcn and the GCN loops copied from it: `Optimization Finished!`)
            # (nor a stage's: `Training complete (stage 1 of 3): switching to fine-tuning`)
            r"(?!\s+(?:iteration|iter|it|epoch|step|batch|after)\b|\s*\((?:stage|phase|part|step|fold|round)\b)"
            r"\s*[.!]*(?:\s|$)"
        ),
    ),
    # PyTorch's fine-tuning tutorial, copied into many loops: `Training complete in 2m 30s`, and with the
    # model's name when a script trains several: `Training SqueezeNetBypass complete in 96m 21s`
    # (not a phase's: `Training epoch complete in 45s`)
    (
        "tutorial",
        re.compile(r"^Training (?!(?:epoch|step|batch|iter|data|phase)\b)(?:[\w.-]+ )?complete in \d{1,9}[hms]"),
    ),
    # A loop's early stop, said as the end: `no optimization for a long time, early stop....`,
    # `Early stopping triggered`, `Early stopping at epoch 12` (not a patience counter or a setting:
    # `Using early stopping.`, `early stopping at epoch 50 if no improvement`)
    (
        "early_stop",
        re.compile(
            r"\b[Ee]arly[ _-]?[Ss]top(?:ping|ped)?"
            r"(?:\s+triggered\b|\s+at (?:epoch|step|iter|iteration)\s+\d{1,9}\s*[.!]?\s*$|\.{2,}\s*$)"
        ),
    ),
    # Chinese loops: `训练完成!` (training complete), `训练结束` (training ended)
    # (not an epoch's or round's: `第1轮训练完成`, `Epoch 1 训练结束, 开始验证`; nor `训练完成度`, `训练结束后`)
    ("zh", re.compile(r"^(?!.*(?:第\s*\d+\s*[轮个次]|[Ee]poch\s*\d|本轮)).*训练(?:完成|结束)(?![度后])(?!\s*\d)")),
    # `No improvement over 5 epochs, stop training` (a loop's own patience ran out)
    (
        "early_stop",
        re.compile(
            r"\b(?:[Nn]o improvement|not improv\w*|did not improve)\b(?!.*\b(?:will|would|if|patience)\b)"
            r".{0,80}\bstop(?:ping)? training\b"
        ),
    ),
    # Lightning's EarlyStopping: `Monitored metric val_loss did not improve in the last 3 records. Best score:
    # 0.123. Signaling Trainer to stop.`
    ("early_stop", re.compile(r"\bSignaling Trainer to stop\.")),
    # LSF's job report after the job's output: `Successfully completed.`
    ("lsf", re.compile(r"^Successfully completed\.$")),
    # DeepSpeed's launcher, once per local rank: `[launch.py:318:main] Process 9104 exits successfully.`
    ("deepspeed", re.compile(r"\bProcess \d{1,18} exits successfully\.")),
    # The total a loop prints once its training loop returned, on a line of its own: LitGPT's
    # `Training time: 583.36s`, torchvision references / DeiT / MAE `Training time 1 day, 2:03:04`.
    # nanochat's `Total training time: 179.44m`.
    (
        "training_time",
        re.compile(r"^(?:Total )?[Tt]raining [Tt]ime:?\s+(?:\d{1,9} days?, )?\d[\d:.]*\s*(?:s|m|min|mins|h)?$"),
    ),
    # wandb's finish when the script ends without an error: `wandb: Waiting for W&B process to finish... (success).`
    # (`(failed 1)` after an exception is not)
    ("wandb", re.compile(r"\bWaiting for W&B process to finish\.\.\. \(success\)")),
    # Ultralytics (YOLOv5, YOLOv8 and later) after its last epoch: `300 epochs completed in 12.345 hours.`
    ("ultralytics", re.compile(r"^\s*\d{1,9} epochs? completed in \d{1,9}(?:\.\d+)? hours\.?\s*$")),
    # fairseq's train.py when its loop returns: `done training in 8354.1 seconds`
    ("fairseq", re.compile(r"^(?:\|\s*)?done training in \d{1,12}(?:\.\d+)? seconds\s*$")),
    # timm's train.py after its epochs: `*** Best metric: 80.1 (epoch 299)` (also after a Ctrl-C it caught: the
    # run ended there either way). Not detectron2's `Total training time: 0:01:15 (0:00:08 on hooks)`: its
    # hooks print it in a `finally`, after an exception too.
    ("timm", re.compile(r"^\*\*\* Best metric: [-\d.eE+]+ \(epoch \d{1,9}\)\s*$")),
    # an IDE's run console under a pasted log: `Process finished with exit code 0` (other codes: `failures.py`)
    ("ide", re.compile(r"^Process finished with exit code 0\s*$")),
    # dlib's examples: `done training` alone on its line
    ("dlib", re.compile(r"^\W*done training\s*[.!]*$")),
    # keras-rl's `fit` and `test` when their loop returns: `done, took 304.161 seconds`
    ("keras_rl", re.compile(r"^done, took \d{1,9}(?:\.\d+)? seconds$")),
)


# torchrun's agent after a failed worker group: the wait for the other agents that follows ends nothing well
_GROUP_FAILED = re.compile(
    r"Local worker group finished \(WorkerState\.FAILED\)|Local worker group finished \(FAILED\)"
)


class FinishMarkers:
    """The end-of-run markers of one source, each family's reported once per attempt."""

    def __init__(self) -> None:
        self._finished: set[str] = set()

    def line(self, body: str, message: str, line: Line, out: Emitter) -> bool:
        """message: the body after its logging prefix (timestamps, levels, logger labels)."""
        if _GROUP_FAILED.search(message):
            self._finished.add("torchrun")  # (its `Done waiting for other agents` after it is no clean end)
            return False
        for family, pattern in _FINISHED:
            m = pattern.search(message)
            if m:
                if family not in self._finished:
                    self._finished.add(family)
                    data = {m.group(1): int(m.group(2))} if family == "lightning" else {}
                    step = int(m.group("iterations")) if family == "ray" else None
                    out.event("finished", "info", body, data, line=line.no, step=step)
                return True
        return False

    def restarted(self) -> None:
        """A new attempt: its end is a new event."""
        self._finished.clear()

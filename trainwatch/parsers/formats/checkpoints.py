"""Checkpoint saves as frameworks and custom loops announce them.

A helper of `events.py`, not a parser. One save is one `checkpoint` event: DeepSpeed's shards
of one `global_stepN/` and Megatron's `successfully saved` confirmation of an announced save
are not new ones.
"""

from __future__ import annotations

import re
from typing import Any

from trainwatch.lines.assembler import Line
from trainwatch.parsers.base import Emitter
from trainwatch.parsers.fields import read_fields
from trainwatch.parsers.formats._tqdm import BAR_BEFORE

_CKPT_PATTERNS = (
    # HF Trainer: `Saving model checkpoint to output/run/checkpoint-200`
    re.compile(r"\bSaving model checkpoint to (\S+)"),
    # Ray Train (>= 2.5): `Training saved a checkpoint for iteration 1 at: /home/ray/.../checkpoint_000000`
    re.compile(r"\bsaved a checkpoint for iteration (?P<iteration>\d{1,18}(?!\d)) at:? (\S+)"),
    # DeepSpeed engine: `Saving model checkpoint: /ckpt/global_step100/mp_rank_00_model_states.pt`
    re.compile(r"\bSaving model checkpoint: (\S+)"),
    # modded-nanogpt & generic: `Saved checkpoint to experiments/.../state_step002000.pt`
    re.compile(r"^(?:.*\s)?(?:Saved|Saving) checkpoint to (\S+)"),
    # Megatron: `saving checkpoint at iteration    1000 to checkpoints/gpt2`
    re.compile(r"^\s*saving checkpoint at iteration\s+(?P<iteration>\d{1,18}(?!\d)) to (\S+)"),
    # NVIDIA Tacotron 2 / WaveGlow: `Saving model and optimizer state at iteration 61000 to /ckpt/checkpoint_61000`
    re.compile(
        r"\b[Ss]aving (?:model|checkpoint)(?: and optimizer)?(?: state)? at (?:iteration|step) "
        r"(?P<iteration>\d{1,18}(?!\d)) to (\S+)"
    ),
    # TF Estimator's CheckpointSaverHook: `Saving checkpoints for 1719 into ../model/esim/model.ckpt.`
    re.compile(r"\bSaving checkpoints? for (?P<iteration>\d{1,18}(?!\d)) into (\S+)"),
    # darkflow: `Checkpoint at step 276` on a line of its own
    re.compile(r"^\s*[Cc]heckpoint(?:ing)? at (?:step|iteration|iter) (?P<iteration>\d{1,18}(?!\d))\s*(?:[.!]\s*)?$"),
    # mmengine: `Saving checkpoint at 5 epochs` / `Saving checkpoint at 2000 iterations`
    re.compile(r"\bSaving checkpoint at (?P<count>\d{1,18}(?!\d)) (?P<unit>epochs|iterations)\b"),
    # mmengine best: `The best checkpoint with 0.4590 coco/bbox_mAP at 5 epoch is saved to best_....pth.`
    re.compile(r"\bThe best checkpoint with .* is saved to (\S+)"),
    # Lightning ModelCheckpoint(verbose=True): `... saving model to '/path/epoch=0-step=100.ckpt' as top 1`
    re.compile(r"\bsaving model to '([^']+)'"),
    # The family custom loops and smaller frameworks print: a saving verb, up to two words, what is
    # saved, and where: `saving checkpoint to out` (nanoGPT), `Saved an end-of-epoch checkpoint in
    # results/...` (SpeechBrain), `Save weights to ./YOLOX_outputs` (YOLOX), `Saved adapter weights to
    # adapters.npz` (MLX), `saving checkpoint: K:/model.safetensors` (kohya), `save model in ./output`
    # (PaddleOCR), `Saving LoRA weights to 'out/...'` (LitGPT), `saving model` alone (minGPT).
    re.compile(
        r"\b(?:[Ss]av(?:e|ed|ing)|SAV(?:E|ED|ING)|[Dd]ump(?:ed|ing))\s+(?:an?\s+|the\s+|new\s+)?(?:[\w-]+\s+){0,2}?"
        r"(?:[Cc]heckpoint|CHECKPOINT|ckpt|CKPT|[Mm]odel|MODEL|[Ww]eights|WEIGHTS|adapters?|state_dict|state|optimizer"
        r"|[Gg]aussians|snapshot)s?"
        r"(?:\s+(?:parameters|params|state|weights))?\b"
        # (what follows `and` is words a space apart: `\s+and\s+[\w ]{1,40}?` let a run of spaces split
        # between it and the `\s` after it, seconds a line of long runs)
        r"(?:\s+(?:for|at)\s+(?:epoch|step|iteration|iter)\s+\d{1,18})?(?:\s+and\s+\w+(?: +\w+){0,19}?)?"
        r"(?:\s+(?:to|in|into|at):?\s+(?P<path>['\"]?[^\s'\"]+)|\s*:\s*(?P<path2>\S+)|\s*,\s*(?:epoch|step|iter|iteration)\b.*"
        # (where in the run: `SAVED CHECKPOINT @ EPOCH 1`; what: dreamer's `Save checkpoint with 85 tensors and ...`)
        r"|\s*@\s*(?i:epoch|step|iter|iteration)\s*\d{1,18}\b.*|\s+with\s+\d[\d,]*\s+(?:tensors|parameters|params|variables)\b.*"
        # (why: `Saved new best model at epoch 1 with val loss 0.7877`)
        r"|\s+with\s+(?i:val\w*|eval\w*|valid\w*|test\w*|loss|acc\w*|best|score|metric|f1|auc|bleu|ppl|perplexity|mae|rmse)\b.*"
        # (a stamp after it: 3DGS `... Saving Gaussians [11/07 13:58:39]`; each run of spaces has one place
        # to go: `\s*\.{0,3}\s*(...)?\s*$` split a long run three ways, seconds a line)
        r"|\s*(?:\.{1,3}\s*)?(?:\[[\d/:. -]{5,30}\]\s*)?$)"
    ),
    # Chinese loops: `保存模型到 ./out/30` (save the model to), `模型已保存至 ...` (the model has been saved to)
    # `完成第750的保存` (the 750th save is done), `保存成功`
    re.compile(
        # (`保存最佳模型 (val_loss=3.2508)`: the best model; `保存模型...`)
        r"(?<!是否)保存(?:最佳|最优|最好的?|当前)?(?:模型|权重|检查点|checkpoint)(?!路径|间隔|配置|日志|[:：]\s*(?:True|False|None)\b)"
        r"(?:\s*(?:到|至|于|在)\s*(?:[:：]\s*)?(?P<path6>[^\s，,/.]*[/.][^\s，,]*))?\s*(?:$|[，,。!！(（]|\.{2,}|…)"
        r"|模型已?保存(?!路径|间隔)"
        r"|完成第\d{1,12}\S{0,4}保存|保存(?:完成|成功)"
    ),
    # ba-dls-deepspeech: `Checkpointing model to: ./model/` (the verb itself, with where)
    re.compile(
        r"^(?:.*\s)?[Cc]heckpointing (?:the )?(?:model|weights|state)s? (?:to|in|into|at):? (?P<path7>\S*[/.]\S*)\s*$"
    ),
    # PyTorch-BigGraph: `Writing the checkpoint...` (after `checkpointing global state`)
    re.compile(r"\b(?:[Ww]riting|[Ww]rote) (?:the |a )?checkpoint\b(?! (?:config|metadata))"),
    # A save to a file its name or extension says holds weights: llama.cpp `save_checkpoint_lora_file:
    # saving to checkpoint-10.gguf`, `saving to lora.bin`, `Saved to ./out/ckpt_3.pt`, PointNet++'s `Saving at
    # log/.../best_model.pth`, RecBole's `Saving current: saved/MAMO-Nov-12-2022_21-12-41.pth`
    re.compile(
        # (`Best model will be saved to out/best.pth`, `will save to out.pth`: not yet)
        r"(?<!will be )(?<!to be )(?<!would be )(?<!shall be )(?<![Ww]ill )(?<!to )(?<![Ww]ould )"
        r"\b(?:[Ss]av(?:e|ed|ing)|SAV(?:E|ED|ING))\s+(?:(?:to|into|at|in)\s+|\w+:\s+)['\"]?(?P<path4>[^\s'\"]+)['\"]?\s*\.{0,3}$"
    ),
    # The best so far, saved (where, the loop does not say): `✓ Saved best (val_acc=0.5000)`,
    # `*** New best AUC=0.3667 F1=0.4351 → saved`
    re.compile(
        r"(?<![Ww]ill )(?<!to )(?<![Ww]ould )"
        r"\b(?:[Ss]av(?:e|ed|ing)|SAV(?:E|ED|ING))\s+(?:the\s+|a\s+|new\s+)?(?:[Bb]est|BEST)(?:\s*\(|[.!]*\s*$)"
    ),
    re.compile(
        # (anchored, with the best a lookahead: one start per line, not one `.*` per word)
        r"^(?=.*?\b(?:[Nn]ew [Bb]est|[Bb]est|BEST|[Ii]mproved?)\b).*(?:→|->|=>)\s*(?:(?:the\s+)?(?:model|checkpoint|weights)\s+)?"
        r"[Ss]aved[\s.!]*$"
    ),
    # TF's `Saving checkpoint for epoch 5 at ./checkpoints/train/ckpt-1` is above; a bare file:
    # `Saving ./log/2024-11-15_10-24-32/000000097.pth`
    re.compile(
        r"^\s*[Ss]aving:? (?P<file>\S+\.(?:pth|pt|ckpt|safetensors|bin|h5|hdf5|keras|npz|pkl|tar|msgpack)"
        r"|\S*/[^/\s.]*(?:model|ckpt|checkpoint)[^/\s.]*[-_]\d{1,12})\s*\.{0,3}$"  # (TF's saver prefix: `Saving checkpoint/run1/model-1000`)
    ),
    # `model saved.` (kohya), `Model weights saved in /home/...` (diffusers), `[Checkpoint] saved ./ckpt_step0047850.pt`
    # d3rlpy `Model parameters are saved to d3rlpy_logs/CQL/model_5000.d3`
    re.compile(
        r"\b(?:[Cc]heckpoint|[Mm]odel(?: parameters| weights| state)?|[Ww]eights|ckpt|[Ss]napshot|[Oo]ptimizer)s?\]?"
        r"\s+(?:was\s+|is\s+|are\s+|were\s+|has been\s+|have been\s+)?[Ss]aved\b(?:\s+(?:to|in|at)\s+(?P<path3>\S+)|:?\s+(?P<path5>\.{0,2}/\S+|\S+\.(?:pth|pt|ckpt|safetensors|bin|h5|pdparams)\b))?"
    ),
)
# `Iter 100: Saved adapter weights to ...`: the step the save belongs to, where the line says it.
# (3D Gaussian Splatting: `[ITER 7000] Saving Gaussians`)
# The file a bare `saving to PATH` names holds weights: its name or extension says so (not a data
# set's `train.bin`, `preds.npz`, `results.pkl`).
_NOT_PATHS = frozenset({"epoch", "step", "iter", "iteration", "batch", "the", "end"})
_WEIGHTS_FILE = re.compile(
    r"(?:checkpoint|ckpt|model|weights|lora|adapter)[^/]*$|\.(?:pth|pt|ckpt|safetensors|h5|hdf5|keras|gguf|pdparams)$",
    re.I,
)
_NOT_WEIGHTS = re.compile(r"(?:embed|pred|result|metric|data|token|sample|output)[^/]*$", re.I)
_CKPT_STEP = re.compile(r"^\s*\[?(?:Iter|Iteration|Step|iter|iteration|step|ITER|STEP)\s*:?\s*(\d{1,18})\b")
# The step a save's file is named by, the step counter's word right before it, for a save before any step
# line: TF's `model.ckpt-1719`, HF's `checkpoint-200`, torchtitan's `step-400`, `global_step100`,
# `state_step002000.pt`; tensorpack's `model-8000` and d3rlpy's `model_5000.d3` (a model's number of three
# digits or more: icefall's `bad-model-2.pt` is rank 2's). Not `epoch_3.pth`: an epoch is no step.
_STEP_OF_FILE = re.compile(
    r"(?:^|[^A-Za-z])(?:(?:ckpt|checkpoint|step|iter|iteration|global_step)[-_.]?(\d{1,18})|model[-_.]?(\d{3,7}))(?!\d)"
    r"(?:\.[A-Za-z]\w{0,15})?/?$",
    re.I,
)
_MEGATRON_SAVED = re.compile(r"^\s*successfully saved checkpoint at iteration\s+(\d{1,18}(?!\d)) to ")
_GLOBAL_STEP = re.compile(r"(.*/global_step\d+)/")


# The step a save's file names carry between underscores (`optim_016704_rank2.pt`; not `rank2`'s digit,
# nor a date's year in SpeechBrain's `CKPT+2023-06-09+22-28-29+00`, which names each save apart).
_STEP_IN_NAME = re.compile(r"(?<=_)\d{3,18}(?=[_.])")


def _save_id(path: str) -> str | None:
    """DeepSpeed writes one file per shard into `global_stepN/`, nanochat one per rank and part
    (`optim_016704_rank2.pt`, `model_016704.pt`, `meta_016704.json`): each is one save, named by its
    directory and the step its files carry."""
    m = _GLOBAL_STEP.match(path)
    if m:
        return m.group(1)
    head, _, name = path.rpartition("/")
    n = _STEP_IN_NAME.search(name)
    return f"{head}/{int(n.group(0))}" if n else path  # (the number, not its padding)


# Lines between two saves to the same place for the second to be another save.
_APART = 8


def _report_before(body: str, end: int) -> int | None:
    """The step of a progress report before the save's words (a step counter and figures), if any."""
    if end < 16:
        return None
    reading = read_fields(body[:end])
    return reading.step if reading is not None and reading.step is not None and reading.metrics else None


class Checkpoints:
    """Reads the checkpoint saves of one source."""

    def __init__(self) -> None:
        self._last_checkpoint: tuple[str | None, int | None, int] | None = None  # (save, step, line)
        self._megatron_saving: str | None = None

    def line(self, body: str, message: str, line: Line, out: Emitter) -> bool:
        """message: the body after its logging prefix, which the save's words are read from; the
        event's message is the body."""
        if not (
            "heckpoint" in message
            or "sav" in message
            or "Sav" in message
            or "SAV" in message
            or "ump" in message
            or "保存" in message
        ):
            return False
        m = _MEGATRON_SAVED.match(message)
        if m:
            return self._megatron_saving == m.group(1)  # `successfully saved` closes the announced save
        for pattern in _CKPT_PATTERNS:
            m = pattern.search(message)
            if not m:
                continue
            groups = m.groupdict()
            target = groups.get("path4")
            if target is not None and (not _WEIGHTS_FILE.search(target) or _NOT_WEIGHTS.search(target)):
                continue  # `saving to train.bin`: some file, not the model's
            data: dict[str, Any] = {}
            if groups.get("unit"):
                data["epoch" if groups["unit"] == "epochs" else "iteration"] = int(groups["count"])
            elif m.lastindex is not None:
                path = m.group(m.lastindex).strip("'\"").rstrip(".,")
                if path.isalpha() and path.lower() in _NOT_PATHS:
                    path = ""  # `Snapshot saved at epoch 3`: where in the run, not where on disk
                if path:
                    data["path"] = path
                if groups.get("iteration"):
                    self._megatron_saving = groups["iteration"]
                    data["iteration"] = int(groups["iteration"])
                # A save to the same place after more steps, well after the last, is another save
                # (llama2.c's `saving checkpoint to out` at every evaluation); each rank's line of
                # one save, or `Saving ...` / `Saved ...` around a step line, stay one
                save_id = _save_id(path)
                last = self._last_checkpoint
                if save_id is not None and last is not None and save_id == last[0]:
                    moved = save_id == path and out.last_step() != last[1] and line.no - last[2] >= _APART
                    if not moved:
                        return True  # another shard or rank's line of the same save
                self._last_checkpoint = (save_id, out.last_step(), line.no)
            at = _CKPT_STEP.match(message)
            step = int(at.group(1)) if at else int(groups["iteration"]) if groups.get("iteration") else None
            report = _report_before(message, m.start()) if step is None else None
            if report is not None:
                step = report
            elif step is None and data.get("path") and out.last_step() is None:
                named = _STEP_OF_FILE.search(data["path"].rstrip("."))
                step = int(named.group(1) or named.group(2)) if named else None
            out.event("checkpoint", "info", body, data, line=line.no, step=step)
            # A message glued after a progress bar (`...| 500/500 [06:52<00:00]Model weights saved in`):
            # the bar before it is still offered to the formats that read bars; so is a step's report
            # the save ends (tesseract's `At iteration 900/900/900, Mean rms=0.841%, ... wrote checkpoint.`).
            return report is None and not BAR_BEFORE.search(message, 0, m.start())
        return False

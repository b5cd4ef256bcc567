"""Canonical metric and phase names (README "The record contract": canonical metric names, phase names)."""

from __future__ import annotations

import re
from functools import lru_cache

_NON_WORD = re.compile(r"[^0-9a-zA-Z]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# The contract's metric names (README "Canonical metric names"), in the order reports list them.
CONTRACT_METRIC_ORDER = (
    "loss",
    "eval_loss",
    "lr",
    "grad_norm",
    "loss_scale",
    "step_time_s",
    "data_time_s",
    "samples_per_s",
    "tokens_per_s",
    "tflops",
    "mfu_pct",
    "mem_gib",
    "epoch",
    "max_mem_gib",
    "total_steps",
)

# Printed label (already snake_cased) -> canonical metric name.
CANONICAL: dict[str, str] = {
    "lm_loss": "loss",
    "loss": "loss",
    "total_loss": "loss",
    "train_loss": "loss",
    "learning_rate": "lr",
    "lr": "lr",
    "grad_norm": "grad_norm",
    "gradient_norm": "grad_norm",
    "loss_scale": "loss_scale",
    "loss_scaler": "loss_scale",
    "elapsed_time_per_iteration_ms": "step_time_s",
    "batch_t": "step_time_s",
    "data_t": "data_time_s",
    "data_time": "data_time_s",
    "samples_per_sec": "samples_per_s",
    "samples_per_second": "samples_per_s",
    "curr_samples_per_sec": "samples_per_s",
    "tokens_per_sec": "tokens_per_s",
    "tokens_per_second": "tokens_per_s",
    "tps": "tokens_per_s",
    "tok_s": "tokens_per_s",
    "tflops": "tflops",
    "throughput_per_gpu_tflop_s_gpu": "tflops",
    "mfu": "mfu_pct",
    "epoch": "epoch",
    "train_epoch": "epoch",
    "eval_loss": "eval_loss",
    "val_loss": "eval_loss",
    "validation_loss": "eval_loss",
}

PHASE_ALIASES: dict[str, str] = {
    "fwd": "forward",
    "bwd": "backward",
    "fwd_microstep": "forward_microstep",
    "bwd_microstep": "backward_microstep",
    "bwd_inner": "backward_inner",
    "bwd_inner_microstep": "backward_inner_microstep",
    "bwd_allreduce": "backward_allreduce",
    "bwd_allreduce_microstep": "backward_allreduce_microstep",
}


@lru_cache(maxsize=4096)
def snake(label: str) -> str:
    """`Loss(CLIP)` -> `loss_clip`, `consumed samples` -> `consumed_samples`, `CurrSamplesPerSec` -> `curr_samples_per_sec`."""
    s = _CAMEL.sub("_", label.strip())
    s = s.replace("%", "_pct")
    return _NON_WORD.sub("_", s).strip("_").lower()


@lru_cache(maxsize=4096)
def metric_name(label: str) -> str:
    key = snake(label)
    return CANONICAL.get(key) or SYNONYMS.get(key) or key


@lru_cache(maxsize=4096)
def phase_name(label: str) -> str:
    key = snake(label)
    return PHASE_ALIASES.get(key, key)


# ---------------------------------------------------------------- the field reader's vocabulary
# Labels (snake_cased) that count steps: their value is the step, never a metric.
COUNTER_KEYS = frozenset(
    {
        "step",
        "steps",
        "iter",
        "iters",
        "current_step",
        "ite",  # U-2-Net, BASNet: `[epoch:   2/100000, batch:  8268/13617, ite: 1824]`
        "it",
        "iteration",
        "iterations",
        "global_step",
        "globalstep",
        "global_steps",
        "step_num",
        "iter_num",
        "num_updates",
        "update",
        "updates",
        "train_step",
        "training_step",
        "trainer_global_step",
        "train_global_step",
        "optimizer_step",
        "optim_step",
        "opt_step",
        "global_iteration",
        "nupdates",  # wav2letter / flashlight: the updates so far (it does not restart per epoch)
        "acc_iter",  # OpenPCDet: the accumulated iteration, across epochs
        "global_batch_idx",
        "batch_idx_train",
        "total_steps_done",
        "训练次数",  # Chinese tutorials' loops: `训练次数：100, Loss：1.98` (times trained), iterations, steps
        "迭代次数",
        "迭代",
        "步数",
        "total_train_updates",  # ParlAI
        "total_updates",
    }
)
# Labels of a batch index (often within an epoch): the step where a line has no better counter.
BATCH_KEYS = frozenset({"batch", "batch_idx", "batch_num", "batch_id", "batches"})
EPOCH_KEYS = frozenset({"epoch", "epochs", "train_epoch", "ep", "epch", "epoch_num", "轮次", "轮数"})
# Words that are never the label of the number after them (`at 2 epochs`, `of 10`).
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "at",
        "of",
        "to",
        "in",
        "on",
        "for",
        "by",
        "from",
        "with",
        "after",
        "before",
        "is",
        "was",
        "are",
        "be",
        "than",
        "every",
        "and",
        "or",
        "into",
        "over",
        "last",
        "first",
        "next",
        "top",
        "took",
        "took:",
        "saved",
        "saving",
        "using",
        "use",
        "found",
        "have",
        "has",
        "had",
        "total",
        "size",
        "version",
        "v",
        "x",
        "pid",
        "port",
        "line",
        "rank",
        "ranks",
        "world",
        "node",
        "nodes",
        "gpu",
        "gpus",
        "device",
        "devices",
        "worker",
        "workers",
        "seed",
        "cuda",
        "python",
        "torch",
        "cpu",
        "cpus",
        "thread",
        "threads",
        "process",
        "processes",
        "job",
        "id",
        "day",
        "days",
        "hour",
        "hours",
        "minutes",
        "seconds",
    }
)
# Labels whose value identifies a process or configuration, never training progress.
NOT_METRICS = frozenset(
    {
        "v_num",
        "set",  # `VALID SET 0 LOSS:0.1780`: which data set, not a figure
        "pid",
        "port",
        "local_rank",
        "global_rank",
        "rank",
        "world_size",
        "seed",
        "gpu",
        "gpu_id",
        "device",
        "node",
        "node_rank",
        "worker",
        "line",
        "version",
        "cuda",
        "xpu",
        "npu",
        "hpu",
        "mps",
        "num_workers",
        "batch_size",
        "micro_batch_size",
        "global_batch_size",
        "max_steps",
        "max_epochs",
        "num_epochs",
        "warmup_steps",
        "total_steps",  # read from an `n/M` counter, not from a label
    }
)
# Further synonyms the field reader maps (canonical where the meaning is certain).
SYNONYMS: dict[str, str] = {
    "training_loss": "loss",
    "reduced_train_loss": "loss",  # NeMo / Megatron-core
    "ips": "samples_per_s",  # PaddlePaddle: instances per second
    "imps": "samples_per_s",  # IRN, PSA: `imps:26.6`, images per second
    "step_loss": "loss",
    "avr_loss": "loss",  # kohya sd-scripts: its only loss, averaged over the epoch so far
    "closs": "loss",  # LLaMA-Accessory: the causal-LM loss
    "gpt_loss": "loss",  # OpenRLHF SFT: the language-model loss (`loss_mean` beside it is its moving average)
    "loss_train": "loss",
    "loss_val": "eval_loss",  # DropEdge's `loss_train: 1.7560 ... loss_val: 1.8142`
    "loss_valid": "eval_loss",
    "loss_eval": "eval_loss",
    "loss_dev": "eval_loss",
    "train_lm_loss": "loss",
    "batch_loss": "batch_loss",
    "train_total_loss": "loss",
    "cur_lr": "lr",
    "current_lr": "lr",
    "curr_lr": "lr",
    "current_learning_rate": "lr",
    "cur_learning_rate": "lr",
    "lr_now": "lr",
    "now_lr": "lr",
    "learning_rate_0": "lr",
    "lr_0": "lr",
    "learningrate": "lr",
    "grad_norm_total": "grad_norm",
    "gradnorm": "grad_norm",
    "gnorm": "grad_norm",  # fairseq
    "g_n": "grad_norm",  # tensorflow/nmt and its forks: `gN 5.63`, the global gradient norm
    "grdn": "grad_norm",  # LeRobot
    "grad": "grad_norm",  # `loss 1.47 | lr 1.8e-04 | grad 0.075`: the gradient's norm, the one figure a loop prints of it
    "norm": "grad_norm",  # build-nanogpt / llm.c / nanoGPT forks: `norm: 27.0154`, the clip_grad_norm_ result
    "train_gnorm": "grad_norm",
    "wps": "tokens_per_s",  # fairseq: target words (tokens) per second
    "ups": "it_per_s",  # MMF, fairseq: optimizer updates per second
    "train_wps": "tokens_per_s",
    "train_loss_scale": "loss_scale",
    "global_grad_norm": "grad_norm",
    "total_grad_norm": "grad_norm",
    "grad_l2_norm": "grad_norm",
    "valid_loss": "eval_loss",
    "vali_loss": "eval_loss",  # Informer, Autoformer, Time-Series-Library: `Train Loss: ... Vali Loss: ... Test Loss: ...`
    "main_loss": "loss",  # Chainer's reporter: `main/loss` is the updater's target link's loss
    "validation_main_loss": "eval_loss",  # Chainer's Evaluator: `validation/main/loss`
    "dev_loss": "eval_loss",
    "val_lm_loss": "eval_loss",
    "validation_lm_loss": "eval_loss",
    "eval_lm_loss": "eval_loss",
    "samples_sec": "samples_per_s",
    "samples_s": "samples_per_s",
    "sample_per_sec": "samples_per_s",
    "train_samples_per_second": "samples_per_s",
    "images_per_sec": "samples_per_s",
    "img_s": "samples_per_s",
    "imgs_s": "samples_per_s",
    "tok_sec": "tokens_per_s",
    "tokens_sec": "tokens_per_s",
    "tokens_s": "tokens_per_s",
    "tok_per_sec": "tokens_per_s",
    "toks_per_sec": "tokens_per_s",
    "tokens_per_sec_per_gpu": "tokens_per_s_per_gpu",
    "tokens_per_second_per_gpu": "tokens_per_s_per_gpu",
    "tokens_per_second_per_device": "tokens_per_s_per_gpu",
    "tokens_per_sec_per_device": "tokens_per_s_per_gpu",
    "tokens_s_device": "tokens_per_s_per_gpu",
    "throughput_device_tokens_per_second": "tokens_per_s_per_gpu",
    "throughput_device_tokens_per_sec": "tokens_per_s_per_gpu",
    "tgs": "tokens_per_s_per_gpu",  # tokens per GPU per second
    "samples_s_device": "samples_per_s_per_gpu",
    "samples_per_second_per_gpu": "samples_per_s_per_gpu",
    "throughput_device_samples_per_sec": "samples_per_s_per_gpu",
    "tflop_s_device": "tflops",
    # steps per second: the reader turns a rate of steps into the step time
    "steps_per_second": "it_per_s",
    "steps_per_sec": "it_per_s",
    "step_per_sec": "it_per_s",
    "steps_sec": "it_per_s",
    "train_steps_sec": "it_per_s",  # DiT's `Train Steps/Sec: 1.46`
    "train_steps_per_sec": "it_per_s",
    "steps_per_s": "it_per_s",
    "global_step_sec": "it_per_s",
    "iters_per_sec": "it_per_s",
    "it_s": "it_per_s",
    "train_learning_rate": "lr",
    "train_lr": "lr",
    "tok_s_gpu": "tokens_per_s_per_gpu",
    "tokens_s_gpu": "tokens_per_s_per_gpu",
    "tflops_per_gpu": "tflops",
    "tflop_s": "tflops",
    "tflop_s_gpu": "tflops",
    "model_tflops": "tflops",
    "mfu_pct": "mfu_pct",
    "train_loss_step": "loss",  # Lightning `self.log(..., on_step=True, on_epoch=True)`: the step's value
    "loss_step": "loss",
    "train_step_runtime": "step_time_s",  # HF Trainer forks: seconds of the last step
    "step_runtime": "step_time_s",
    "train_step_samples_per_second": "samples_per_s",
    "step_samples_per_second": "samples_per_s",
    "step_tokens_per_second": "tokens_per_s",
    "step_tokens_per_sec": "tokens_per_s",
}
# Names that are the contract metric only when the line has no better one: `xent` (OpenNMT) and
# `ce` (audiocraft) are the training loss where no `loss` is printed, one loss term beside it.
WEAK_SYNONYMS: dict[str, str] = {
    "xent": "loss",
    "cost": "loss",
    "ce": "loss",
    "losses": "loss",  # maskrcnn-benchmark prints: `iteration : 7, losses : nan`
    "mean_loss": "loss",  # ParlAI rankers
    "avg_loss": "loss",
    "cross_entropy": "loss",  # TF's retrain / tutorials: `Step 80: Cross entropy = 0.037101`
    "ce_loss": "loss",
    "nll_loss": "loss",
    "log_loss": "loss",  # LightGBM: `training's log loss: 0.0046`
    "logloss": "loss",  # ctrNet-tool, CTR models: `logloss 0.191605`
    "grad_scale": "loss_scale",  # audiocraft / fairseq2: the AMP grad scaler's scale
    "avg_tokens_per_second": "tokens_per_s",
    "train_tokens_per_second": "tokens_per_s",
}


# (`Iter Mean Loss 0.52`, `batch_avg_loss`, `running_avg_loss`: what the average is over, first)
_AVERAGED_LOSS = re.compile(
    r"^(?:(?:iter|batch|step|epoch|running|train|training)_)?(?:avg|average|mean|smoothed)_(?:train_|training_)?loss(?:_so_far|_avg)?$"
)
_EVAL_LOSS_ENDS = ("_val_loss", "_valid_loss", "_eval_loss", "_test_loss", "_evaluation_loss", "_validation_loss")
# An evaluation set's loss by its name: wav2letter's `dev-clean-loss`, `valid_0_loss`, `test-other-loss`.
_EVAL_SET_LOSS = re.compile(r"^(?:dev|val|valid|validation|test|eval)_[a-z0-9_]{1,30}_loss$")
_LOSS_WORDS = frozenset(("loss", "losses"))  # (`total_losses:1.578` beside `cls_loss`, `reg_loss`)
_TOTAL_LOSS = re.compile(r"^(?:(?:total|tot)_loss(?:es)?|loss_total)(?:_[a-z0-9]{1,8})?$|^[a-z0-9]{1,8}_total_loss$")
# Words that make a name holding `loss` something else than a loss (`loss_scale`, `num_loss_tokens`).
_NOT_A_LOSS = frozenset("scale scaler tokens token count num n weight weights coef ratio lambda factor fn type".split())
# Words that make a `*_loss` another figure than the training loss (an evaluation's, a best so far).
_NOT_TRAINING = frozenset(
    "val valid validation eval evaluation test dev best min max smoothed avg average mean ema".split()
)


def settle_weak(metrics: dict[str, float], listed: set[str] | frozenset[str] = frozenset()) -> None:
    """Weak names take the contract name when the line printed no value under it (in place); not
    one whose value is the first of a list (so-vits-svc `Losses: [disc, gen, fm, mel, kl]`)."""
    for weak, strong in WEAK_SYNONYMS.items():
        if weak in metrics and strong not in metrics and weak not in listed:
            metrics[strong] = metrics.pop(weak)
    if "loss" not in metrics:
        # `avg loss so far is 0.0217`, `average_loss`, `running_loss`: the loss where nothing else is
        for key in metrics:
            if key not in listed and _AVERAGED_LOSS.match(key):
                metrics["loss"] = metrics.pop(key)
                break
    if "eval_loss" not in metrics:
        # `clip_val_loss`, `test_loss` (DeiT's log.txt: its evaluation on the test split)
        for key in metrics:
            if key in ("test_loss", "evaluation_loss", "validation_loss") or key.endswith(_EVAL_LOSS_ENDS):
                metrics["eval_loss"] = metrics.pop(key)
                break
        else:
            # `dev-clean-loss`: an evaluation set's loss by its name, when the line prints only one (not
            # `val_recon_loss` beside `val_kl_loss`, the terms of one loss)
            named = [k for k in metrics if k.endswith("_loss") and _EVAL_SET_LOSS.match(k)]
            if len(named) == 1:
                metrics["eval_loss"] = metrics.pop(named[0])


# Names of a loss's terms: a bare total beside one of them adds up a loss (not memory, a reward, norms).
_LOSS_TERMS = frozenset(
    "policy value mse mae ce bce nll kl kld reg l1 l2 xent entropy ctc rec recon perceptual adv gan disc gen"
    " cls box obj dice focal triplet contrastive commit vq".split()
)
# Figures of quality, not terms of a loss: a total beside them is no loss.
_QUALITY = frozenset(
    "acc accuracy f1 precision recall auc map iou miou bleu rouge top1 top5 score reward return returns"
    " correct err error wer cer psnr ssim fid".split()
)
# The parts of a time (`data=0.01 fwd=0.2 bwd=0.1 total=0.35`): their total is no loss.
_TIME_WORDS = re.compile(r"time|data|fwd|bwd|forward|backward|optim|comm|sync|wait|load|io\b|^t_|_t$|_s$|_ms$")


def settle_sole_loss(metrics: dict[str, float], listed: set[str] | frozenset[str] = frozenset()) -> None:
    """`the cls_loss is : 3572.3`, HiFi-GAN's `Gen Loss Total : 25.9`: the only loss a report prints
    is its loss (not one term of several, nor an evaluation's or a best one). For a line with its own
    counter: a block's line of one figure (Coqui's `| > loss_text_ce: 0.14`) is one term of many."""
    if "loss" in metrics:
        return
    losses = [k for k in metrics if not _LOSS_WORDS.isdisjoint(k.split("_")) and k not in listed]
    totals = [k for k in losses if _TOTAL_LOSS.match(k)]
    if len(totals) == 1:  # `total_loss_g` beside its terms (`adv_g_loss`, `feat_loss`, ...): the total is the loss
        losses = totals
    if len(losses) == 1:
        words = losses[0].split("_")
        if losses[0] not in CANONICAL and _NOT_TRAINING.isdisjoint(words) and _NOT_A_LOSS.isdisjoint(words):
            metrics["loss"] = metrics.pop(losses[0])
    elif not losses and "total" in metrics and "total" not in listed and not metrics["total"].is_integer():
        # Leela's `policy=6.17 mse=0.17 reg=0.37 total=7.24`: a bare total beside the terms it adds up
        # (two or more figures of no contract name, none a time) is the loss; not a count, not a time's total
        terms = [k for k in metrics if k != "total" and k not in CONTRACT_METRICS]
        if (
            len(terms) >= 2
            and any(k in _LOSS_TERMS or "loss" in k for k in terms)
            and not any(
                _TIME_WORDS.search(k)
                or not (_NOT_A_LOSS.isdisjoint(k.split("_")) and _QUALITY.isdisjoint(k.split("_")))
                for k in terms
            )
        ):
            metrics["loss"] = metrics.pop("total")


# Labels of the time one step takes (seconds unless a unit says otherwise).
STEP_TIME_KEYS = frozenset(
    {
        "dt",
        "iter_dt",  # minGPT: `iter_dt 5850.34ms; iter 10: train loss 2.31135`
        "time",
        "step_time",
        "iter_time",
        "batch_time",
        "btime",  # VISSL: the batch's time
        "bch",  # wav2letter / flashlight: `bch(ms)`, the mean time of a batch
        "s_b",  # HiFi-GAN: `s/b : 1.108`, seconds per batch
        "sec_batch",
        "s_batch",
        "secs_batch",
        "time_per_step",
        "timer",  # ssd.pytorch: `iter 90 || Loss: 16.6367 || timer: 0.2197 sec.`
        "time_per_iter",
        "time_per_iteration",
        "time_per_batch",
        "time_step",
        "time_iter",
        "time_batch",
        "step_duration",
        "iteration_time",
        "elapsed_time_per_iteration",
        "train_step_time",
        "sec_per_step",
        "sec_per_iter",
        "s_per_step",
        "s_per_iter",
        "s_it",
        "sec_it",
        "time_per_it",
        "batch_t",
        "batch_cost",  # PaddlePaddle (PaddleNLP/OCR/Seg/Det/Clas)
        "avg_batch_cost",  # PaddleOCR / PaddleClas: the mean over the logging interval
        "train_step_timing",  # NeMo
        "step_timing",
        "updt",  # LeRobot: `updt_s:4.478 data_s:0.038`, the update's seconds (the unit read off the name)
    }
)
DATA_TIME_KEYS = frozenset(
    {
        "data_time",
        "data",
        "data_t",
        "dataload_time",
        "data_load_time",
        "data_loading_time",
        "reader_cost",  # PaddleNLP / PaddleSeg
        "avg_reader_cost",  # PaddleOCR / PaddleClas
        "data_cost",  # PaddleDetection
    }
)
MEM_KEYS = {
    "memory": "mem_gib",
    "mem": "mem_gib",
    "gpu_mem": "mem_gib",
    "gpu_memory": "mem_gib",
    "max_mem": "max_mem_gib",
    "max_memory": "max_mem_gib",
    "peak_memory": "max_mem_gib",
    "peak_mem": "max_mem_gib",
    "max_memory_allocated": "max_mem_gib",
    "max_mem_allocated": "max_mem_gib",
}
CONTRACT_METRICS = frozenset(CANONICAL.values()) | {"tokens_per_s_per_gpu", "max_mem_gib", "mem_gib", "total_steps"}


# `train.py:88`, `ProcessGroupNCCL.cpp:1664`: a source location, not a metric's label
_SOURCE_FILE = re.compile(r"\.(?:py|cpp|cc|cu|cuh|h|hpp|c|rs|go|java)\b")


# Namespaces that only group a figure, not name whose it is: Catalyst's `_base/lr` and
# `_timers/batch_time`, `optim/lr`, `perf/step_time`, `timers/data_time` (unlike `G/loss` or `val/loss`).
_NAMESPACES = frozenset(
    "base timers timer time times train training optim optimizer perf performance throughput speed metrics"
    " stats info misc general sys system progress".split()
)


_HELD_OUT = re.compile(r"\s*(?:val|valid|validation|test|eval)", re.I)  # (`Valid_PPYoloELoss/loss` is an evaluation's)


def _namespaced(label: str) -> str | None:
    """The name of `group/name` when the group is a mere namespace and the name a known one."""
    head, _, tail = label.rpartition("/")
    leaf = snake(tail)
    if leaf.startswith("loss") and head.strip().endswith("Loss") and "/" not in head and not _HELD_OUT.match(head):
        return leaf  # a criterion's class names its terms (SuperGradients' `PPYoloELoss/loss`, `.../loss_cls`)
    for part in head.split("/"):  # every group must only group (`eval/metrics/loss` is an evaluation's)
        group = snake(part)
        if not group or not (group in _NAMESPACES or part.lstrip().startswith("_")):
            return None
    known = SYNONYMS.get(leaf) or CANONICAL.get(leaf)
    if known is not None:
        return known
    return leaf if leaf in STEP_TIME_KEYS or leaf in DATA_TIME_KEYS else None


# A loss called cost in words (Raschka's notebooks, Ng's courses: `Cost after iteration 100: 0.69`; not an
# epoch's or a total cost, which is time as often)
_COST = re.compile(
    r"(?:(?:[Cc]urr\.|[Cc]urrent|[Bb]atch|[Mm]inibatch|[Tt]rain|[Tt]raining|[Aa]vg\.?|[Aa]verage|[Mm]ean) )*[Cc]ost"
)
_SCHEDULED_LR = re.compile(r"\s*(\w[\w ]*?)\s*\([A-Za-z]\w*\)\s*")
RATES = frozenset({"samples_per_s", "tokens_per_s", "it_per_s", "samples_per_s_per_gpu", "tokens_per_s_per_gpu"})


def _windowed(key: str) -> str | None:
    """A rate over the logging interval is the rate (PaddleNLP's `interval_samples_per_second`)."""
    if not key.startswith("interval_"):
        return None
    rest = key[len("interval_") :]
    name = SYNONYMS.get(rest) or CANONICAL.get(rest)
    return name if name in RATES else None


@lru_cache(maxsize=8192)
def field_name(label: str, unit: str) -> str:
    """The metric name of a printed label whose value came with `unit` ("" none, "%", "s", "gib", "/s").

    "" means the label does not name a metric (a file name, a process id, configuration)."""
    if _SOURCE_FILE.search(label) or not any(c.isalpha() for c in label):
        return ""
    scheduled = _SCHEDULED_LR.fullmatch(label)
    if scheduled is not None and field_name(scheduled.group(1), unit) == "lr":
        return "lr"  # PaddleClas' `lr(PiecewiseDecay): 0.001`: the rate, its scheduler named beside it
    key = snake(label)
    if not key or key in NOT_METRICS:
        return ""
    if key.endswith("cost") and unit == "" and _COST.fullmatch(label.strip()):
        return "cost"  # `Cost: 0.69`, `Curr. Batch Cost: 2.31` (a loss; Paddle's `batch_cost` is a step's seconds)
    if "/" in label:
        per = snake(label.replace("/", " per "))
        per = SYNONYMS.get(per) or CANONICAL.get(per) or per
        if per in CONTRACT_METRICS:
            return per
    name = SYNONYMS.get(key) or CANONICAL.get(key) or _windowed(key) or key
    if "/" in label and name not in CONTRACT_METRICS:
        name = _namespaced(label) or name
        if name in STEP_TIME_KEYS or name in DATA_TIME_KEYS:
            key = name  # (`_timers/batch_time`: the step time, below)
    if unit == "%":
        return name if name.endswith("_pct") else name + "_pct"
    if unit == "s" or (unit == "" and (key in STEP_TIME_KEYS or key in DATA_TIME_KEYS)):
        if key in STEP_TIME_KEYS or name == "step_time_s" or (key == "latency" and unit == "s"):
            # (OneFlow's `Rank[0], Step 46, Loss 3.1016, Latency 18.955 ms`: with its unit only)
            return "step_time_s"
        if key in DATA_TIME_KEYS or name == "data_time_s":
            return "data_time_s"
        return name if unit == "" else f"{name}_s"
    if unit == "gib":
        return MEM_KEYS.get(key) or (name if name.endswith("_gib") else f"{name}_gib")
    if unit == "/s":
        return name if name.endswith("_per_s") else f"{name}_per_s"
    return name

"""Metrics printed as tables: key | value blocks, and a header row followed by value rows.

    -----------------------------------------          epoch    train_loss    valid_loss     dur
    | time/                   |             |        -------  ------------  ------------  ------
    |    total_timesteps      | 4096        |              1        4.4168        3.0788  0.0292
    | train/                  |             |              2        2.0120        0.4565  0.0270
    |    loss                 | 6.04        |
    -----------------------------------------        epoch     train_loss  valid_loss  accuracy  time
                                                     0         0.169874    0.023511    0.992000  00:11

Left: stable-baselines3's logger (and RLlib-style pretty prints): one block per report, its step the
`total_timesteps` (else `timesteps_total`, `iterations`, `training_iteration`). Right: skorch, fastai
and Keras-style epoch tables: each row is a step, numbered by its epoch/step column. A table is
only read when its header names an epoch or step column and a loss or metric column, so aligned
text that merely looks tabular does not become steps.
"""

from __future__ import annotations

import math
import re

from trainwatch.lines.assembler import Kind, Line
from trainwatch.names import field_name, snake
from trainwatch.numbers import parse_number
from trainwatch.parsers.base import Emitter, Parser, Sample

_RULE = re.compile(r"^\s*-{8,}\s*$")
_KV_ROW = re.compile(r"^\|\s*(?P<key>[^|]*?)\s*\|\s*(?P<value>[^|]*?)\s*\|\s*$")
# Ray (>= 2.5) result boxes: `╭───╮`, a title row, `├───┤`, `│ loss      50 │` rows, `╰───╯`.
_BOX_RULE = re.compile(r"^\s*[╭├┌╰└][─━]{8,}[╮┤┐╯┘]\s*$")
_BOX_ROW = re.compile(r"^\s*│ ?(?P<key>\S.*?)(?:\s{2,}(?P<value>\S+))?\s*│\s*$")
# (OpenAI baselines' logger, also guided/improved-diffusion's: `| steps | 4008662 |`, `| step | 1.11e+04 |`)
_BLOCK_STEP_KEYS = (
    "total_timesteps",
    "timesteps_total",
    "num_env_steps_sampled",
    "iterations",
    "training_iteration",
    "step",
    "steps",
    "timesteps",
)
_BLOCK_STEP_TIME = "time_this_iter_s"  # Ray: the seconds of this training iteration
_MAX_ROWS = 200

_COLS = re.compile(r"\S+(?: \S+)*")  # cells: separated by two or more spaces (or tabs)
_STEP_COLUMNS = {
    "epoch": "epoch",
    "step": "step",
    "iter": "step",
    "iteration": "step",
    "epochs": "epoch",
    "epoch_num": "epoch",  # PointMLP's log.txt (a TSV table): `Epoch-Num  Learning-Rate  Train-Loss ...`
    "epoch_no": "epoch",
    "step_num": "step",
    "iter_num": "step",
    "global_step": "step",  # Lightning's CSVLogger under a logger that names it so (ldm's metrics.csv)
    "trainer_global_step": "step",
    "steps": "step",  # ChainerRL's scores.txt, RL loggers' progress files
    "timesteps": "step",
    "total_timesteps": "step",
}
# A header names a figure of training, not only counters: aligned text that merely looks tabular
# (a config dump, a table of files) is no table of steps.
_FIGURES = frozenset(
    ("rmse", "mse", "mae", "error", "reward", "return", "ppl", "perplexity")
)  # (and any `loss`, `acc`)
# A cell holding one number in brackets (DeepXDE's `[5.47e+03]`, a numpy repr `[ 0.0804]`).
_ONE_IN_BRACKETS = re.compile(r"^\[\s*([^\s,\[\]]+)\s*\]$")
_CLOCK = re.compile(r"^(?:\d{1,2}:)?\d{1,2}:\d{2}$")
_DASHES = re.compile(r"^(?=.*-)[\s+|=-]+$")  # a rule: `-------  ------`, `+------+------+` (Turi Create)
_DIGIT = re.compile(r"[0-9]")
_RESUME_LINES = 12  # lines of other output a table's rows may go on after  # (ASCII: `snake` keeps these, so a name holding one is no step column)


def _csv(text: str) -> bool:
    """A comma-separated row (a metrics.csv pasted into the log): commas, no column padding."""
    return "," in text and "  " not in text and "\t" not in text and "|" not in text and "{" not in text


def _cells(text: str) -> list[str]:
    if _csv(text):
        return [c.strip() for c in text.strip().split(",")]  # empty cells kept: a metric not logged at that step
    if "|" in text:
        return [c.strip() for c in text.strip().strip("|").split("|")]
    return [c for c in re.split(r"\s{2,}|\t", text.strip()) if c]


class KeyValueTableParser(Parser):
    name = "kv_table"
    title = "key | value blocks (stable-baselines3 logger)"
    triggers = ("|", "----", "│", "─")
    example = "|    loss                 | 6.04        |"
    priority = 850
    samples = (
        Sample(  # DLR-RM/stable-baselines3 issue #156 (PPO on CartPole, no Monitor: no rollout/ section)
            "-----------------------------------------\n"
            "| time/                   |             |\n"
            "|    fps                  | 1284        |\n"
            "|    iterations           | 2           |\n"
            "|    time_elapsed         | 3           |\n"
            "|    total_timesteps      | 4096        |\n"
            "| train/                  |             |\n"
            "|    approx_kl            | 0.015479716 |\n"
            "|    clip_fraction        | 0.118       |\n"
            "|    clip_range           | 0.2         |\n"
            "|    entropy_loss         | -0.685      |\n"
            "|    explained_variance   | -171        |\n"
            "|    learning_rate        | 0.0003      |\n"
            "|    loss                 | 6.04        |\n"
            "|    n_updates            | 10          |\n"
            "|    policy_gradient_loss | -0.0183     |\n"
            "|    value_loss           | 48.8        |\n"
            "-----------------------------------------\n",
            # The block's step is its `total_timesteps`.
            steps=((4096, {"loss": 6.04, "lr": 0.0003, "fps": 1284, "entropy_loss": -0.685, "value_loss": 48.8}),),
        ),
        Sample(  # ray-project/ray issue #36795: Ray Train 2.5's result box (the config rows are not metrics)
            "Training finished iteration 1 at 2023-06-22 22:44:43. Total running time: 8s\n"
            "╭─────────────────────────────────────────────────╮\n"
            "│ Training result                                 │\n"
            "├─────────────────────────────────────────────────┤\n"
            "│ time_this_iter_s                        5.42888 │\n"
            "│ time_total_s                            5.42888 │\n"
            "│ training_iteration                            1 │\n"
            "│ config/train_loop_config/lr               0.001 │\n"
            "│ loss                                         50 │\n"
            "╰─────────────────────────────────────────────────╯\n"
            "Training saved a checkpoint for iteration 1 at: /home/ray/ray_results/TorchTrainer/checkpoint_000000\n",
            steps=((1, {"loss": 50, "step_time_s": 5.42888}),),
            events=("checkpoint",),
        ),
    )

    def __init__(self) -> None:
        self._rows: list[tuple[str, str, int]] | None = None
        self._section = ""

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if line.kind is Kind.FRAME:
            return False
        if _RULE.match(text) or _BOX_RULE.match(text):
            if self._rows:
                self._release(out)
            self._rows = [] if text.lstrip()[0] not in "╰└" else None
            self._section = ""
            return True
        if self._rows is None:
            return False
        m = _KV_ROW.match(text) or _BOX_ROW.match(text)
        if m is None:
            self._rows = None
            return False
        key, value = m.group("key"), m.group("value") or ""
        if key.startswith("config/"):
            return True  # Ray: the trial's configuration, not a metric
        if key.endswith("/") and not value:
            self._section = key
        elif len(self._rows) < _MAX_ROWS:
            self._rows.append((self._section + key, value, line.no))
        return True

    def finish(self, out: Emitter) -> None:
        # Not at_eof: while following, a block is complete only at its closing rule (which releases it).
        if self._rows:
            self._release(out)
        self._rows = None

    def _release(self, out: Emitter) -> None:
        rows, self._rows = self._rows or [], None
        values: dict[str, float] = {}
        for key, raw, _no in rows:
            number = parse_number(raw)
            if number is not None:
                values[key] = number
        if not values:
            return
        step: int | None = None
        for want in _BLOCK_STEP_KEYS:
            for key, number in values.items():
                if key.rsplit("/", 1)[-1] == want and number.is_integer():
                    step = int(number)
                    break
            if step is not None:
                break
        metrics: dict[str, float] = {}
        for key, number in values.items():
            leaf = key.rsplit("/", 1)[-1]
            name = field_name(leaf, "")
            if leaf == _BLOCK_STEP_TIME:
                metrics.setdefault("step_time_s", number)
            elif name and leaf not in _BLOCK_STEP_KEYS:
                metrics.setdefault(name, number)
        if metrics:
            out.step(step, metrics, line=rows[0][2])


class HeaderTableParser(Parser):
    name = "header_table"
    title = "Epoch tables (skorch, fastai, Keras-style header + rows)"
    triggers = ()
    example = "  epoch    train_loss    valid_loss     dur"
    priority = 850
    samples = (
        Sample(  # skorch-dev/skorch issue #851 (NeuralNetRegressor's PrintLog table)
            "  epoch    train_loss    valid_loss     dur\n"
            "-------  ------------  ------------  ------\n"
            "      1        4.4168        3.0788  0.0292\n"
            "      2        2.0120        0.4565  0.0270\n"
            "      3        0.3343        0.2262  0.0263\n",
            steps=(
                (1, {"epoch": 1, "loss": 4.4168, "eval_loss": 3.0788}),
                (2, {"epoch": 2, "loss": 2.0120, "eval_loss": 0.4565}),
                (3, {"epoch": 3, "loss": 0.3343, "eval_loss": 0.2262}),
            ),
        ),
        Sample(  # timeseriesAI/tsai issue #639 (fastai's table pasted from a notebook: tab-separated, NaN losses)
            "epoch\ttrain_loss\tvalid_loss\taccuracy\ttime\n"
            "0\tnan\tnan\t0.958595\t00:03\n"
            "1\tnan\tnan\t0.958595\t00:03\n",
            steps=(
                (0, {"epoch": 0, "loss": math.nan, "eval_loss": math.nan, "accuracy": 0.958595}),
                (1, {"epoch": 1, "loss": math.nan, "accuracy": 0.958595}),
            ),
            events=("nan",),
        ),
        Sample(  # espnet/espnet PR #1138: Chainer's PrintReport leaves a column blank until it has a value
            "epoch       iteration   main/loss   main/loss_ctc  validation/main/loss  main/acc\n"
            "0           100         622.995     1544.82                              0.000281725\n"
            "1           300         500.1       1400.2         480.5                 0.0003\n",
            steps=((100, {"epoch": 0, "loss": 622.995}), (300, {"epoch": 1, "loss": 500.1, "eval_loss": 480.5})),
        ),
        Sample(  # espnet/espnet PR #1138: Chainer's ProgressBar prints between the rows; the rows go on
            "epoch       iteration   main/loss   main/loss_ctc  elapsed_time\n"
            "0           100         622.995     1544.82        114.502\n"
            "     total [..................................................]  0.00%\n"
            "this epoch [..................................................]  0.21%\n"
            "       100 iter, 0 epoch / 100 epochs\n"
            "       inf iters/sec. Estimated time to finish: 0:00:00.\n"
            "0           200         677.669     1669.19        152.819\n",
            steps=((100, {"epoch": 0, "loss": 622.995}), (200, {"epoch": 0, "loss": 677.669})),
        ),
        Sample(  # explosion/spaCy issue #7083: `spacy train`'s table
            "E    #       LOSS TOK2VEC  LOSS NER  ENTS_F  ENTS_P  ENTS_R  SCORE \n"
            "---  ------  ------------  --------  ------  ------  ------  ------\n"
            "  0       0          0.00     40.00    9.57    6.09   22.33    0.10\n"
            "  0     200         35.70   2163.45   83.16   83.79   82.53    0.83\n",
            steps=((0, {"epoch": 0, "loss_ner": 40.0}), (200, {"epoch": 0, "loss_tok2_vec": 35.7, "score": 0.83})),
        ),
        Sample(  # chainer/chainerrl PR #126: scores.txt, tab-separated, its `steps` column the step
            "steps\tepisodes\telapsed\tmean\tmedian\taverage_v\taverage_loss_policy\n"
            "50099\t52\t992.45\t-19.8\t-20.0\t[-2.17921662]\t-0.0195257508921\n"
            "100524\t96\t2090.0\t-18.6\t-19.0\t[-1.29867995]\t-0.120943714859\n",
            steps=((50099, {"episodes": 52, "average_v": -2.17921662}), (100524, {"mean": -18.6})),
        ),
        Sample(  # DeePMD-kit's lcurve.out: its header commented out for plotting tools; errors keep their names
            "#  step      rmse_val    rmse_trn         lr\n"
            "      0      1.05e+01    1.10e+01    1.0e-03\n"
            "    100      7.63e+00    9.65e+00    1.0e-03\n",
            steps=((0, {"rmse_val": 10.5, "rmse_trn": 11.0, "lr": 1e-3}), (100, {"rmse_trn": 9.65})),
        ),
        Sample(  # lululxvi/deepxde PR #491: one figure per bracket; its test loss the only held-out loss
            "Step      Train loss    Test loss     Test metric\n"
            "0         [5.47e+03]    [6.44e+03]    [1.00e+00]\n"
            "2000      [nan]         [nan]         [nan]\n",
            steps=((0, {"loss": 5470.0, "eval_loss": 6440.0}), (2000, {"loss": math.nan})),
            events=("nan",),
        ),
        Sample(  # Lightning-AI/pytorch-lightning issue #32467: CSVLogger's metrics.csv pasted (empty cells)
            "epoch,step,train_loss_epoch,train_loss_step,val_loss\n"
            "0,49,,0.6689074635505676,\n"
            "0,99,,0.6776237487792969,\n"
            "0,99,0.66,,0.71\n",
            steps=(
                (49, {"epoch": 0, "loss": 0.6689074635505676}),
                (99, {"epoch": 0, "loss": 0.6776237487792969}),
                (99, {"eval_loss": 0.71}),
            ),
        ),
    )

    def __init__(self) -> None:
        self._header: list[str] | None = None
        self._eval_alias: str | None = None  # the column that is the evaluation loss under another name
        self._step_col: int | None = 0  # None: the table has no step column (each row a report)
        self._starts: list[int] = []  # where each column of a space-aligned header starts
        # Other output came after the last row (Chainer's progress bar prints between its rows):
        # the table may go on, but only with a row of numbers whose step does not go back.
        self._interrupted = False
        self._last_step = -1
        self._last_line = 0  # the line of the last row read

    def feed(self, text: str, line: Line, out: Emitter) -> bool:
        if line.kind is Kind.FRAME or not text.strip():
            return False
        if self._header is not None:
            if _DASHES.match(text) and not self._interrupted:
                return True
            cells = _cells(text)
            row = cells if len(cells) == len(self._header) else None
            if row is None and self._starts and len(cells) < len(self._header):
                row = self._by_position(text)
            if row is not None and (not self._interrupted or self._resumes(row, line.no)) and self._row(row, out):
                self._interrupted = False
                self._last_line = line.no
                return True
            self._interrupted = True  # (the header is kept; a header below replaces it)
        if "  " not in text and "\t" not in text and "|" not in text and not _csv(text):
            return False
        cells = _cells(text)
        if len(cells) < 2 or len(cells) > 24:
            return False
        if all(map(_DIGIT.search, cells)):
            return False  # a row of values (no step column's name holds a digit): not a header
        if "#" in cells and "E" in cells:  # spaCy's `spacy train` table: `E` the epoch, `#` the step
            cells = ["epoch" if c == "E" else "step" if c == "#" else c for c in cells]
        elif cells[0] == "#" or (cells[0].startswith("# ") and len(cells[0]) > 2):
            # a header commented out for plotting tools (DeePMD's lcurve.out: `#  step  rmse_val ... lr`)
            text = text.replace("#", " ", 1)
            cells = _cells(text)
            if len(cells) < 2:
                return False
        names = [snake(c) for c in cells]
        step_cols = [i for i, n in enumerate(names) if n in _STEP_COLUMNS]
        if not all(n and not n[0].isdigit() for n in names):
            return False
        figures = [("loss" in n or "acc" in n or not _FIGURES.isdisjoint(n.split("_"))) for n in names]
        if not any(figures):
            return False
        if not step_cols and not ("\t" in text and all(figures) and any("loss" in n for n in names)):
            # (no step column: only a tab-separated header of figures, losses among them, and rows
            # of numbers only, one per report: PGNet's `total loss\tscore loss\tctc loss`)
            return False
        mapped = {field_name(n, "") for n in names}
        # The only held-out loss of a table is its evaluation loss (DeepXDE's `Train loss  Test loss`; not
        # beside a validation column, `val_acc`).
        held_out = any(m.startswith(("eval_", "val", "valid")) for m in mapped)
        self._eval_alias = "test_loss" if "test_loss" in mapped and not held_out else None
        self._header = names
        self._interrupted = False
        self._last_step = -1
        spaced = not _csv(text) and "|" not in text and "\t" not in text
        self._starts = [m.start() for m in _COLS.finditer(text)] if spaced else []
        # `epoch,step,train_loss_step,...`: the step column numbers the rows, the epoch is a value
        by_step = [i for i in step_cols if _STEP_COLUMNS[names[i]] == "step"]
        self._step_col = (by_step or step_cols)[0] if step_cols else None
        return True

    def _by_position(self, text: str) -> list[str] | None:
        """A space-aligned row with empty cells (Chainer's PrintReport leaves a column blank until
        it has a value): each value goes to the column it starts under."""
        cells = [""] * len(self._starts)
        for m in re.finditer(r"\S+", text):
            col = min(range(len(self._starts)), key=lambda i: abs(self._starts[i] - m.start()))
            if cells[col]:
                return None  # two values under one column: not this table's row
            cells[col] = m.group(0)
        return cells if self._step_col is not None and cells[self._step_col] else None

    def _resumes(self, cells: list[str], line_no: int) -> bool:
        """A row soon after other output (Chainer's progress bar is four lines): every cell a number (or
        a wall time), its step past the last row's (a later report's numbers are not the table's)."""
        if line_no - self._last_line > _RESUME_LINES or self._step_col is None:
            return False
        values = [c.rstrip("+* ") for c in cells if c]
        if len(values) < 2 or not all(parse_number(v) is not None or _CLOCK.match(v) for v in values):
            return False
        step = parse_number(cells[self._step_col].rstrip("+* "))
        return step is not None and step > self._last_step

    def _row(self, cells: list[str], out: Emitter) -> bool:
        header = self._header or []
        if self._step_col is None:
            return self._unnumbered_row(header, cells, out)
        step_raw = parse_number(cells[self._step_col].rstrip("+* "))
        if step_raw is None or not step_raw.is_integer() or step_raw < 0:
            return False
        metrics: dict[str, float] = {}
        for name, cell in zip(header, cells, strict=True):
            value = cell.rstrip("+* ")
            if _CLOCK.match(value):
                continue  # fastai's wall time per epoch
            one = _ONE_IN_BRACKETS.match(value) if value.startswith("[") else None
            number = parse_number(one.group(1) if one else value)
            metric = "epoch" if _STEP_COLUMNS.get(name) == "epoch" else field_name(name, "")
            if metric is not None and metric == self._eval_alias:
                metric = "eval_loss"
            if number is not None and metric:
                metrics.setdefault(metric, number)
        if _STEP_COLUMNS[header[self._step_col]] == "epoch":
            metrics["epoch"] = step_raw
        else:
            metrics.pop("step", None)
            metrics.pop(field_name(header[self._step_col], ""), None)  # (`iteration`: the step itself)
        if len(metrics) < 2 and "epoch" in metrics:
            return False
        self._last_step = int(step_raw)
        out.step(int(step_raw), metrics)
        return True

    def _unnumbered_row(self, header: list[str], cells: list[str], out: Emitter) -> bool:
        """A row of a table without a step column: every cell a number, a report of no known step,
        in a source that numbers none (beside step lines, such rows are a summary: an epoch's averages,
        a final cross-validation, which no step of the run's series should take)."""
        values = [parse_number(c) for c in cells]
        if any(v is None for v in values) or out.last_step() is not None:
            return False
        metrics: dict[str, float] = {}
        for name, value in zip(header, values, strict=True):
            metric = field_name(name, "")
            if metric and value is not None:
                metrics.setdefault(metric, value)
        if not metrics:
            return False
        out.step(None, metrics)
        return True

"""Label probing: does a source put `srun -l` task ids or pdsh host names before its lines?

`srun -l` task labels (`3: `) and pdsh host labels (`worker-0: `) are only honoured when the
source consistently uses them: one `0: ` at the start of a line is not enough. The first
`PROBE_LINES` lines are held back and the label mode is decided on them before any line is
parsed; afterwards `split` takes every line's labels off the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from trainwatch.lines.assembler import Kind, Line
from trainwatch.parsers.rank import host_label, looks_srun_labelled, split_host, split_prefix, split_srun_label

# Real lines held to decide, and how many of them must be labelled.
PROBE_LINES = 16
PROBE_MIN_LABELLED = 4
PROBE_MAX_HELD = 512  # bounds the hold (and its memory) when a log starts with progress frames

LabelMode = Literal["", "srun", "host"]


class LabelProbe:
    """Holds a source's first lines until its label mode is known, then splits labels off."""

    def __init__(self) -> None:
        self._held: list[Line] | None = []
        self._real = 0  # non-empty LINEs held (frames do not count)
        self.mode: LabelMode = ""  # "srun" (task id labels), "host" (pdsh host labels) or none

    @property
    def holding(self) -> bool:
        """Lines are still held: the mode is not decided yet."""
        return self._held is not None

    def hold(self, line: Line) -> bool:
        """Hold one more line; True when enough are held to decide (a frame storm fills the hold too)."""
        held = self._held
        assert held is not None, "the probe has decided"
        held.append(line)
        if line.kind is Kind.LINE and line.text.strip():
            self._real += 1
        return self._real >= PROBE_LINES or len(held) >= PROBE_MAX_HELD

    def decide(self) -> list[Line]:
        """Decide the mode on the held lines and hand them back, in order, to be parsed now."""
        held, self._held = self._held or [], None
        texts = [p.text for p in held if p.kind is Kind.LINE and p.text.strip()]
        if _consistently(texts, looks_srun_labelled):
            self.mode = "srun"
        elif _consistently(texts, _has_host_label):
            self.mode = "host"
        return held

    def split(self, text: str, path_host: str | None) -> tuple[str, int | None, str | None, str | None]:
        """(text, prefix rank, host, launcher) of a line without its labels and launcher prefix.

        launcher: the host whose launcher printed the line (`srun -l -n 2 torchrun ...`: each task
        is its own launcher and prints its own banner)."""
        host = path_host
        label_rank: int | None = None
        if self.mode == "host":
            found_host, text = split_host(text)
            host = found_host or host
        elif self.mode == "srun":
            label_rank, text = split_srun_label(text)
        prefix_rank, text = split_prefix(text)
        if label_rank is None:
            return text, prefix_rank, host, host
        launcher = f"task{label_rank}"
        if prefix_rank is not None:
            # `srun -l torchrun --tee 3`: one task per node, so the label is the node
            # and `[default3]:` the local rank on it.
            return text, prefix_rank, launcher, launcher
        return text, label_rank, host, launcher


def _has_host_label(text: str) -> bool:
    # Host names carry a digit (worker-0, node12, gpu-dev006); "INFO: ..." / "Epoch: 3" don't.
    label = host_label(text)
    return label is not None and any(c.isdigit() for c in label)


def _consistently(texts: Sequence[str], labelled: Callable[[str], bool]) -> bool:
    """From the first labelled line on (launcher preamble lines come before), >= 3/4 are."""
    flags = [labelled(t) for t in texts]
    if True not in flags:
        return False
    rest = flags[flags.index(True) :]
    n = sum(rest)
    return n >= PROBE_MIN_LABELLED and n * 4 >= len(rest) * 3

"""TensorBoard event files (`events.out.tfevents.*`), read with the `tensorboard` package's own
record reader (the extra `trainwatch-tui[tensorboard]`). Its TensorFlow-free reader, not
`EventFileLoader`: that one imports `tensorflow` when anything by that name is importable (a
`tensorflow/` directory in the working directory is enough) and then fails. The reader keeps
its place: a growing file is not read from the start again, and a torn last record (a
`DataLossError`) is kept and completed by the next read. Scalars only."""

from __future__ import annotations

import os
from typing import Any

from trainwatch.names import snake
from trainwatch.records import Step
from trainwatch.sources.records.base import Got, canonical

EXTRA = "trainwatch-tui[tensorboard]"
MISSING = f"TensorBoard event files are not read: pip install '{EXTRA}'"
PREFIXES = {"train/": "", "eval/": "eval_"}


def tag_name(tag: str) -> str:
    """`train/loss` -> `loss`, `train/learning_rate` -> `lr`, `eval/loss` -> `eval_loss`, else snake_case."""
    for prefix, prepend in PREFIXES.items():
        if tag.startswith(prefix):
            rest = snake(tag[len(prefix) :])
            return canonical(rest) if not prepend else canonical(prepend + rest)
    return snake(tag)


def available() -> bool:
    try:
        import tensorboard.compat.tensorflow_stub.pywrap_tensorflow  # noqa: F401
    except ImportError:
        return False
    return True


def _float32(value: Any) -> float:
    """A float32 as the shortest decimal that reads back as it: the `1.9902` that was logged, not
    `1.9902000427246094` (what a text log printing the same value shows, and what it is compared to)."""
    import numpy

    return float(str(numpy.float32(value)))


def _scalar(value: Any) -> float | None:
    if value.HasField("simple_value"):
        return _float32(value.simple_value)
    if value.HasField("tensor"):
        from tensorboard.util import tensor_util

        array = tensor_util.make_ndarray(value.tensor)
        if array.size == 1 and array.dtype.kind in "fiu":
            scalar = array.reshape(())
            return _float32(scalar) if array.dtype.name == "float32" else float(scalar)
    return None


class EventFile:
    kind = "tensorboard"

    def __init__(self, source: str, path: str) -> None:
        self.source = source
        self.path = path
        self._reader: Any = None
        self._records = 0

    def _events(self) -> Any:
        """The events written since the last read, complete ones only."""
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.tensorflow_stub import errors
        from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import PyRecordReader_New

        if self._reader is None:
            if not os.path.isfile(self.path):
                return
            self._reader = PyRecordReader_New(self.path)
        while True:
            try:
                self._reader.GetNext()
            except (errors.OutOfRangeError, errors.DataLossError):
                return  # the end, or a record not whole yet: the reader starts it again next time
            yield Event.FromString(self._reader.record())

    def read(self, limit: int) -> Got:
        got = Got()
        for event in self._events():
            self._records += 1
            got.got_data = True
            metrics: dict[str, float] = {}
            for value in event.summary.value:
                scalar = _scalar(value)
                if scalar is not None:
                    metrics[tag_name(value.tag)] = scalar
            if metrics:
                got.records.append(Step(self.source, None, int(event.step), None, self._records, metrics))
        return got

    def quiet(self) -> bool:
        return False  # the loader's own read at the end of the file is as cheap as a stat

    def close(self) -> None:
        if self._reader is not None:
            self._reader.file_handle.close()
            self._reader = None

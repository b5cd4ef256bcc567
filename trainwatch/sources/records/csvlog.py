"""Lightning CSVLogger's `metrics.csv`: a header, then one row per logged step, blank where a metric
was not logged that step. Rows are appended; when a new metric appears Lightning rewrites the
file under a longer header (`_ExperimentWriter.save`), so each change is read whole and only the
rows past those already read become records."""

from __future__ import annotations

import csv
import io

from trainwatch.records import Step
from trainwatch.sources.records.base import Got, Rewritten, metrics_of, step_of

NOT_METRICS = frozenset({"step", "created_at"})


class LightningCsv:
    kind = "lightning_csv"

    def __init__(self, source: str, path: str) -> None:
        self.source = source
        self._file = Rewritten(path)
        self._rows = 0  # data rows already read

    def read(self, limit: int) -> Got:
        data = self._file.read()
        if data is None:
            return Got()
        whole = data[: data.rfind(b"\n") + 1]  # a row still being written waits for its newline
        rows = list(csv.DictReader(io.StringIO(whole.decode("utf-8", "replace"), newline="")))
        got = Got(got_data=True)
        if len(rows) < self._rows:  # a new run wrote the file anew
            self._rows, got.note = 0, "file started again"
        for index in range(self._rows, len(rows)):
            row = {k: v for k, v in rows[index].items() if k is not None and v not in (None, "")}
            metrics = metrics_of(row, NOT_METRICS)
            if metrics:
                got.records.append(Step(self.source, None, step_of(row.get("step")), None, index + 2, metrics))
        self._rows = len(rows)
        return got

    def quiet(self) -> bool:
        return self._file.quiet()

    def close(self) -> None:
        pass

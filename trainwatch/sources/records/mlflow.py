"""MLflow's local file store: `mlruns/<exp>/<run>/metrics/<name>`, one file per metric (a name with
`/` is a subdirectory), lines `timestamp value step` appended by `FileStore.log_metric`. The
`metrics` directory is one source: metric files that appear later are picked up."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from trainwatch.records import Step
from trainwatch.sources.records.base import Appended, Got, canonical, number, step_of


class MlflowMetrics:
    kind = "mlflow"

    def __init__(self, source: str, path: str) -> None:
        self.source = source
        self.path = path
        self._files: dict[str, tuple[Appended, bytearray]] = {}
        self._line = 0

    def _metric_files(self) -> list[str]:
        found: list[str] = []
        for directory, dirs, files in os.walk(self.path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found += [os.path.join(directory, f) for f in sorted(files) if not f.startswith(".")]
        return found

    def read(self, limit: int) -> Got:
        got = Got()
        for path in self._metric_files():
            if path not in self._files:
                self._files[path] = (Appended(path), bytearray())
            tail, partial = self._files[path]
            data, restarted, more = tail.read(limit)
            if restarted:
                partial.clear()
            got.more = got.more or more
            if not data:
                continue
            got.got_data = True
            partial += data
            cut = partial.rfind(b"\n") + 1
            name = canonical(os.path.relpath(path, self.path).replace(os.sep, "/"))
            for raw in bytes(partial[:cut]).split(b"\n")[:-1]:
                self._line += 1
                step = self._parse(raw, name)
                if step is not None:
                    got.records.append(step)
            del partial[:cut]
        return got

    def _parse(self, raw: bytes, name: str) -> Step | None:
        fields = raw.split()
        if len(fields) < 2:
            return None
        stamp, value = number(fields[0].decode()), number(fields[1].decode())
        if value is None:
            return None
        step = step_of(fields[2].decode()) if len(fields) > 2 else None
        time = datetime.fromtimestamp(stamp / 1000, timezone.utc).isoformat() if stamp is not None else None
        return Step(self.source, None, step, time, self._line, {name: value})

    def quiet(self) -> bool:
        return False  # new metric files may appear: a read is a few stats

    def close(self) -> None:
        pass

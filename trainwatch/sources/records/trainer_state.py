"""HF Trainer's `trainer_state.json`: `log_history` grows, and the whole file is rewritten at each
checkpoint (`TrainerState.save_to_json`). Each rewrite is read whole; only entries not seen
before become records."""

from __future__ import annotations

import json

from trainwatch.names import snake
from trainwatch.records import Step
from trainwatch.sources.records.base import Got, Rewritten, canonical, metrics_of, step_of

NOT_METRICS = frozenset({"step"})
RUN_TOTALS = "train_runtime"  # the entry `Trainer.train` logs at the end: averages over the run


class TrainerState:
    kind = "trainer_state"

    def __init__(self, source: str, path: str) -> None:
        self.source = source
        self._file = Rewritten(path)
        self._seen: set[str] = set()

    def read(self, limit: int) -> Got:
        data = self._file.read()
        if data is None:
            return Got()
        try:
            state = json.loads(data)
        except ValueError:
            self._file.forget()  # caught mid-write: read it again next time
            return Got()
        history = state.get("log_history") if isinstance(state, dict) else None
        got = Got(got_data=True)
        for index, entry in enumerate(history if isinstance(history, list) else []):
            if not isinstance(entry, dict):
                continue
            key = json.dumps(entry, sort_keys=True)
            if key in self._seen:
                continue
            self._seen.add(key)
            # The run's closing entry holds averages (`train_loss`): not one step's loss.
            name = snake if RUN_TOTALS in entry else canonical
            metrics = metrics_of(entry, NOT_METRICS, name)
            if metrics:
                got.records.append(Step(self.source, None, step_of(entry.get("step")), None, index + 1, metrics))
        return got

    def quiet(self) -> bool:
        return self._file.quiet()

    def close(self) -> None:
        pass

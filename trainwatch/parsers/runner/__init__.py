"""The parser runner: one `SourceParser` per source turns its lines into records.

Parts, each with its own state and a narrow interface:
- `source`: `SourceParser`, the facade: dispatch to the format parsers, feeding, end of input,
  and the Emitter the parsers report through.
- `probe`: `srun -l` / pdsh label probing and stripping.
- `ranks`: rank resolution (prefix > text > path > the reporting rank), the current line.
- `merge`: the pending step, merging and duplicate step lines.
- `segments`: restarts and attempts, each stream's last step.
- `catchup` and `runs`: the bulk catch-up path (learned line shapes, column blocks).
- `stats`: `SourceStats`, the counts `summary` reports.
"""

from trainwatch.parsers.runner.source import SourceParser
from trainwatch.parsers.runner.stats import SourceStats

__all__ = ["SourceParser", "SourceStats"]

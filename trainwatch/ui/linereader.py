"""Read a few lines around a line number from a log file — in a worker thread, never on
the UI thread. Lines are numbered as the pipeline numbers them (1-based, split on \\n) and
made inert with the same sanitizer as ingest."""

from __future__ import annotations

from trainwatch.lines.sanitize import sanitize

MAX_SHOWN = 4096  # characters of one line shown


def clean(raw: bytes) -> str:
    text = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8", errors="replace")
    if "\r" in text:
        text = text.rsplit("\r", 1)[-1]
    return sanitize(text[:MAX_SHOWN])


def read_context(path: str, line_no: int, radius: int = 200) -> list[tuple[int, str]]:
    """Lines [line_no - radius, line_no + radius] of the file at path (fewer at its edges)."""
    first, last = max(1, line_no - radius), line_no + radius
    out: list[tuple[int, str]] = []
    with open(path, "rb") as f:
        for no, raw in enumerate(f, start=1):
            if no < first:
                continue
            if no > last:
                break
            out.append((no, clean(raw)))
    return out

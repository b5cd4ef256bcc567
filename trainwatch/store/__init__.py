"""Parsed truth, held in bounded columnar series; views read it, never parse."""

from trainwatch.store.store import SeriesKey, SourceState, Store

__all__ = ["SeriesKey", "SourceState", "Store"]

"""Headless views: summary (Rich / JSON) and export (JSONL / CSV)."""

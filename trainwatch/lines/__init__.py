"""Bytes -> sanitized lines: the only place raw log bytes become text."""

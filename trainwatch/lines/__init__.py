"""Bytes -> sanitized lines: where ingested log bytes become text. (The dashboard's excerpt reader,
`ui/linereader`, decodes the lines it re-reads with the same `sanitize`.)"""

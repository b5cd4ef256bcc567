"""`trainwatch compare`: several runs on one screen, each with its own pipeline, store and ingest worker."""

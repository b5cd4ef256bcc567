"""trainwatch: a live terminal dashboard for training logs."""

__version__ = "0.1.0"

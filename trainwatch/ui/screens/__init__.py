"""Modal screens: help, metric picker."""

"""Log-format parsers: one module per family under `formats/`, discovered automatically."""

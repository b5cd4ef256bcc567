"""One module per log family. Each defines `Parser` subclasses; the registry finds them."""

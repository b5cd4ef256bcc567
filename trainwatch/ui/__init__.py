"""The Textual dashboard: draws the store on timers and never parses. The one file it reads itself
is an excerpt of a source around a line the user jumps to (`linereader`, in a worker thread)."""

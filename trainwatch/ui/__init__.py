"""The Textual dashboard: reads the store on timers, never parses or reads files itself."""

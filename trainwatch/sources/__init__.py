"""Where bytes come from: files (followed like tail -F), directories, globs, stdin."""

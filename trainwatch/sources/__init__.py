"""Where bytes come from and when they are read: files (followed like tail -F), directories, globs,
stdin; each source's bytes made lines (`reader`), and the follow loop's schedule (`schedule`)."""

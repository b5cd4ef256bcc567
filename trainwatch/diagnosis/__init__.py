"""What the run is doing and what is wrong with it, computed from the store (never from text).

`status.run_status` (running / stalled / finished / crashed / unknown, why, and its cause as a
field), `progress` (step N of M, the one pace, the ETA, and the line every screen prints),
`findings` (what a performance engineer would tell the user, with the usual remedy), `ranks`
(stragglers, root cause), `attempts`, `phases` (which timers split a step, in which order),
`units` and `clock` (the one duration format and the one age), `judge` (the dashboard's repeated
judging) and `check.check_line` (the one-line `trainwatch check`). The verdict and findings read
the recent window of the store's series, so the dashboard can call them on a timer; the Phases
tab's trend (`shares.phase_trend`) reads whole series, on screen only.
"""

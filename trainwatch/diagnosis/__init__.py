"""What the run is doing and what is wrong with it, computed from the store (never from text).

`status.run_status` (running / stalled / finished / crashed / unknown, and why), `findings.findings`
(what a performance engineer would tell the user, with the usual remedy), `ranks` (stragglers, root
cause), `eta`, and `check.check_line` (the one-line `trainwatch check`). Most read only the recent
window of the store's series, so the dashboard can call them on a timer; a few read whole series
(`shares.phase_trend`, the Phases tab's trend over the run).
"""

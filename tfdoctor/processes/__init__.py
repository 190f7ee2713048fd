"""Child processes: every external command and child started in its own session, killed with everything it started (escaped or not), and the one total deadline of each operation."""

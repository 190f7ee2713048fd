"""`tfdoctor serve`, the team server (extra [server]): reports posted by `--report-to`, the fleet, drift,
baselines, Prometheus metrics. See docs/server.md."""

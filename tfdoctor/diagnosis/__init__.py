"""One diagnosis, start to end: settings and flags merged (config, options), collectors and checks run (doctor)."""

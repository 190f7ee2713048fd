"""The command line, by job: app.py the typer commands, emit.py the output (formats, files, GitHub),
interrupts.py every signal handler of the process. The entry point is tfdoctor/__main__.py."""

"""The report: the run's report (run.py), the document and its verdict (document.py), saved reports read back (saved.py), two reports compared (compare.py), and the one redaction (redact.py)."""

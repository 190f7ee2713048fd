"""What a check returns: its outcome and result (model), the repairs it asks for, the worst of its findings."""

"""The deadlines the operations keep (processes/deadline.py holds them), for a door to state in its help."""

from tfdoctor.processes.deadline import FIX_S, PROVE_S, RUN_MARGIN_S, SCAN_S, UNDO_S, run_s, words

__all__ = ["FIX_S", "PROVE_S", "RUN_MARGIN_S", "SCAN_S", "UNDO_S", "run_s", "words"]

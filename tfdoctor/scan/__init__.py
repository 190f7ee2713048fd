"""`tfdoctor scan`: every Python environment on the machine, diagnosed at once.

find.py finds them (the I/O of listing directories and asking conda); run.py diagnoses each with the
doctor's own run path (tfdoctor.diagnosis.doctor.diagnose, the options `tfdoctor --python PATH` would use),
several at a time; render/scan_table.py prints the one table.
"""

"""Files the doctor writes: its own (locks, records, ids, pending reports; never through a link) and the report at -o."""

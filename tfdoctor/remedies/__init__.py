"""Shared advice built from facts: the repair intents, the words and the commands that two or more checks
give for one problem, so they never disagree. Above facts/ and the installer room (environment/), below the
checks; never a collector (tests/project/test_import_floors.py holds the floors).
  arm64           the Mac fixes: a GPU pair here, or a new native arm64 environment (its commands)
  cuda            the CUDA build made the installed TensorFlow
  experiments     what a proof by experiment says and how it is repaired
  import_causes   an import error tied to its cause, with one repair for all of it
  integrity       damaged files reinstalled as they were; a clash: uninstall all, install one
  requires_dist   one install intent per unmet Requires-Dist pin
  signatures      the fix a known failure signature names, for the installed TensorFlow
  tf_keras        the tf-keras made for the installed TensorFlow
"""

"""Live suite: real broken TensorFlow environments built from the package index, diagnosed and repaired."""

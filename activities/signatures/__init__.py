"""Failure signatures: the catalog (data), the scanner (matching) and the log diagnosis."""

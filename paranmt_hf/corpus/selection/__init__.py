"""Choosing pairs.

The filter registry (the papers' filters, thresholds), the ``corpus filter`` stage and exact de-duplication
(``corpus dedup``).
"""

"""The ``paranmt-hf`` command line."""

"""The ``paranmt_tatoeba`` metric module (``paranmt_tatoeba.py``) and its implementation (``mining.py``)."""

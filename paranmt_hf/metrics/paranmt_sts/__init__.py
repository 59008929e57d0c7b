"""The ``paranmt_sts`` metric module (``paranmt_sts.py``) and its implementation (``sts_protocol.py``)."""

"""What a corpus becomes.

The builder's rows and pivots, the Hub export (Parquet, dataset card), the score histogram (ACL 2018 Table 3)
and the paraphrase lexicon.
"""

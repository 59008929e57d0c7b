"""The small English corpus that the loading and featurisation tests build their models from."""
from __future__ import annotations

SENTENCES = [
    "A man is playing a guitar.",
    "A woman is slicing an onion.",
    "I don't think it's 3.5 dollars.",
    "Two dogs run in the park!",
    "The coal-colored shadows spread.",
]

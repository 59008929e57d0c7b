"""Conversion of the original released checkpoints (para-nmt-50m, paraphrastic-representations-at-scale)."""

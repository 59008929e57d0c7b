"""Evaluation: STS 2012-2016, STS-B, STS17, bitext mining; mteb integration."""

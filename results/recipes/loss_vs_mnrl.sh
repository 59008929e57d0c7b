#!/usr/bin/env bash
# The papers' mega-batch margin loss against sentence-transformers' MultipleNegativesRankingLoss through the real
# pipeline (`paranmt-hf train --loss megabatch|mnrl`): the same TRIGRAM model (300-d, Adam 1e-2, batch 100), data
# (Flickr30k caption pairs + the ParaNMT sample) and 3,000 steps; the margin loss with M=1 (in-batch hardest
# negatives: on Flickr captions larger mega-batches surface true paraphrases) and M=40. Then `paranmt-hf eval`.
#   bash results/recipes/loss_vs_mnrl.sh        # from the repository root, venv active
# Results: results/recipes/pipeline/loss/*.json; table: pipeline.md.
source "$(dirname "${BASH_SOURCE[0]}")/pipeline_jobs.sh"
COMMON=(--recipe acl2018-trigram --lr 0.01
        --train "$DATA/train/flickr30k-caption-pairs.tsv.gz" "processed-5m:$DATA/train/paranmt5m-sample-10k.tsv.gz"
        --max-steps 3000 --eval-steps 1500 --save-steps 1500 --dev STS17:en-en STSBenchmark:validation --seed 0)
run loss margin_M1 --loss megabatch --megabatch-size 1 "${COMMON[@]}"
run loss mnrl --loss mnrl "${COMMON[@]}"
if [ "${WITH_M40:-1}" = 1 ]; then
  run loss margin_M40 --loss megabatch --megabatch-size 40 "${COMMON[@]}"
  # M=40 from the first step collapsed on captions (loss 2*delta); PRAS grows the mega-batch instead
  run loss margin_M40_anneal150 --loss megabatch --megabatch-size 40 --anneal 150 "${COMMON[@]}"
fi
finish

#!/usr/bin/env bash
# Seed variation of a recipe on the main job's data and flags (scripts/main.sh): `paranmt-hf train --recipe RECIPE
# --seed N` on Flickr30k caption pairs + the ParaNMT sample x10 + Tatoeba pivots x3, then `paranmt-hf eval`.
#   bash results/recipes/seeds.sh [RECIPE] [SEED ...]    # default: best 0 1 2 (seed 0 = the main job's run)
# Results: results/recipes/pipeline/seeds-RECIPE/RECIPE_seedN.json; table: pipeline.md.
source "$(dirname "${BASH_SOURCE[0]}")/pipeline_jobs.sh"
RECIPE="${1:-best}"
SEEDS=("${@:2}")
[ "${#SEEDS[@]}" -gt 0 ] || SEEDS=(0 1 2)
for seed in "${SEEDS[@]}"; do
  run "seeds-$RECIPE" "${RECIPE}_seed$seed" --recipe "$RECIPE" \
    --train "$DATA/train/flickr30k-caption-pairs.tsv.gz" "processed-5m:$DATA/train/paranmt5m-sample-10k.tsv.gz@10" \
    "pairs:$PIVOTS@3" --dev STS17:en-en --seed "$seed" --save-steps 1000
done
finish

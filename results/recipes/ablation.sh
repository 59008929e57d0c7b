#!/usr/bin/env bash
# Mega-batch ablation (the paper's Table 6) through the real pipeline: `paranmt-hf train --megabatch-size M` for
# M = 1, 20, 40 and the WORD, TRIGRAM and LSTM models, 3,000 steps of 100 pairs, MAX sampling, on English paraphrase
# pairs (the ParaNMT sample + English paraphrases pivoted through the Tatoeba bitext); then `paranmt-hf eval`.
# Dev (STS17 en-en, STS-B validation) and test (STS12-16, STS-B test) side by side; nothing is chosen on test.
#   bash results/recipes/ablation.sh            # from the repository root, venv active; MS="1 40" for a subset
# Results: results/recipes/pipeline/ablation/*.json; table: pipeline.md; plot: ablation.png.
source "$(dirname "${BASH_SOURCE[0]}")/pipeline_jobs.sh"
COMMON=(--train "processed-5m:$DATA/train/paranmt5m-sample-10k.tsv.gz" "pairs:$PIVOTS"
        --max-steps 3000 --eval-steps 1500 --save-steps 1500 --dev STS17:en-en STSBenchmark:validation --seed 0)
for m in ${MS:-1 20 40}; do
  run ablation "word_M$m" --recipe acl2018-word --lr 0.05 --vector-vocab-size 100000 --megabatch-size "$m" "${COMMON[@]}"
  run ablation "trigram_M$m" --recipe acl2018-trigram --lr 0.01 --megabatch-size "$m" "${COMMON[@]}"
  run ablation "lstm_M$m" --recipe acl2018-lstm --lr 0.001 --vector-vocab-size 100000 --megabatch-size "$m" \
    --threads 1 "${COMMON[@]}"
done
finish

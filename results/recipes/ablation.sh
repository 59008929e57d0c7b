#!/usr/bin/env bash
# Mega-batch ablation (paper's Table 6) on English paraphrase pairs: the ParaNMT sample + English paraphrases pivoted
# through the Tatoeba bitext. 9 runs of 3,000 steps (about 25 min on 2 cores, two at a time); appends to explore.jsonl.
#   bash results/recipes/ablation.sh   (from the repository root, venv active)
set -euo pipefail
DATA="${PARANMT_HF_DATA:-../shared/data}"
WORK="${WORK:-$(mktemp -d)}"
paranmt-hf corpus pivot "$DATA"/train/bitext/tatoeba-en-{es,fr,de}.tsv.gz -o "$WORK/tatoeba-pivots.tsv.gz"
FILES="\"files\": [\"$DATA/train/paranmt5m-sample-10k.tsv.gz\", \"$WORK/tatoeba-pivots.tsv.gz\"], \"steps\": 3000, \"every\": 1500"
WORD='"kind": "word", "word_vectors": "glove-6b-50d", "vector_vocab_size": 100000, "learning_rate": 0.05'
TRIGRAM='"kind": "trigram", "embedding_dim": 300, "learning_rate": 0.01'
LSTM='"kind": "lstm", "word_vectors": "glove-6b-50d", "vector_vocab_size": 100000, "scramble_rate": 0.3, "learning_rate": 0.001'
for m in 1 20 40; do
  python results/recipes/explore.py "{$WORD, \"megabatch_size\": $m, $FILES}" "en_word_M$m" &
  python results/recipes/explore.py "{$TRIGRAM, \"megabatch_size\": $m, $FILES}" "en_tri_M$m"
  wait
  python results/recipes/explore.py "{$LSTM, \"megabatch_size\": $m, $FILES}" "en_lstm_M$m"
done
python results/recipes/make_table.py

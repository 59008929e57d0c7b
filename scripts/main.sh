#!/usr/bin/env bash
# Main job: install, train the best recipe on the shared corpora, evaluate it (STS12-16 paper protocol, mteb Spearman,
# STS-B, STS17, Tatoeba), write a Hub-ready folder with its model card, and print the results table.
#   bash scripts/main.sh                 # everything, outputs in outputs/main/
#   OUT=/tmp/run RECIPE=acl2018-trigram bash scripts/main.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/install.sh
export PARANMT_HF_DATA="${PARANMT_HF_DATA:-$(paranmt-hf data path)}"  # ../shared/data if present, else the user cache
if [ ! -f "$PARANMT_HF_DATA/train/STATS.json" ]; then  # no data: fetch it (offline, it stops and says what to do)
  paranmt-hf data fetch --dest "$PARANMT_HF_DATA" || exit 1
fi
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false
DATA="$PARANMT_HF_DATA"
OUT="${OUT:-$ROOT/outputs/main}"
RECIPE="${RECIPE:-best}"
NAME="${NAME:-paranmt-hf/paranmt-${RECIPE}}"
rm -rf "$OUT" && mkdir -p "$OUT/data"
start=$(date +%s)

echo "== 1/4 English paraphrases pivoted through the Tatoeba bitext (translations of one sentence)"
paranmt-hf corpus pivot "$DATA"/train/bitext/tatoeba-en-{es,fr,de}.tsv.gz -o "$OUT/data/tatoeba-pivots.tsv.gz"

echo "== 2/4 train ($RECIPE) on $DATA/train: Flickr30k caption pairs, the ParaNMT sample x10, the pivots x3"
paranmt-hf train --recipe "$RECIPE" \
  --train "$DATA/train/flickr30k-caption-pairs.tsv.gz" "processed-5m:$DATA/train/paranmt5m-sample-10k.tsv.gz@10" \
  "pairs:$OUT/data/tatoeba-pivots.tsv.gz@3" \
  --dev STS17:en-en --output "$OUT/model" --seed 0 --save-steps 1000 --no-progress

echo "== 3/4 evaluate"
paranmt-hf eval "$OUT/model" --tasks sts12-16 STSBenchmark STS17 Tatoeba --data-dir "$DATA" \
  --name "$NAME" --output "$OUT/eval" | tee "$OUT/results_table.txt"

echo "== 4/4 Hub-ready folder"
paranmt-hf publish "$OUT/model" --output "$OUT/hub" --eval-dir "$OUT/eval" --model-id "$NAME"

echo "== done in $(( $(date +%s) - start )) s: model $OUT/model, Hub folder $OUT/hub, card $OUT/hub/README.md"
cat "$OUT/results_table.txt"

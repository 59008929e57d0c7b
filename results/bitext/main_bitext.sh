#!/usr/bin/env bash
# The cross-lingual part of the main job (issue 13): train the pras-bitext recipe on the X-English bitext together
# with the English paraphrase data, evaluate it, write its Hub folder, and print it next to the English model.
#   bash results/bitext/main_bitext.sh                   # after scripts/main.sh (reuses OUT and its pivots)
#   OUT=/tmp/run bash results/bitext/main_bitext.sh      # alone: makes the pivots itself
# Outputs: $OUT/bitext/{model,eval,hub}, $OUT/bitext/results_table.txt; the English model's eval is $OUT/eval.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export PARANMT_HF_DATA="${PARANMT_HF_DATA:-$(cd "$ROOT/.." && pwd)/shared/data}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false
DATA="$PARANMT_HF_DATA"
OUT="${OUT:-$ROOT/outputs/main}"
NAME="${BITEXT_NAME:-paranmt-hf/paranmt-pras-bitext}"
BITEXT="$DATA/train/bitext"
PIVOTS="$OUT/data/tatoeba-pivots.tsv.gz"
rm -rf "$OUT/bitext" && mkdir -p "$OUT/bitext" "$OUT/data"
start=$(date +%s)

if [ ! -f "$PIVOTS" ]; then
  echo "== English paraphrases pivoted through the Tatoeba bitext"
  paranmt-hf corpus pivot "$BITEXT"/tatoeba-en-{es,fr,de}.tsv.gz -o "$PIVOTS"
fi

echo "== train pras-bitext: Tatoeba en-es/fr/de + Multi30k en-de/fr/cs bitext, Flickr30k pairs, ParaNMT x10, pivots x3"
paranmt-hf train --recipe pras-bitext \
  --train "$BITEXT"/tatoeba-en-{es,fr,de}.tsv.gz "$BITEXT"/multi30k-en-{de,fr,cs}.tsv.gz \
  "$DATA/train/flickr30k-caption-pairs.tsv.gz" "processed-5m:$DATA/train/paranmt5m-sample-10k.tsv.gz@10" \
  "pairs:$PIVOTS@3" \
  --dev STS17:en-en --output "$OUT/bitext/model" --seed 0 --save-steps 1000 --no-progress

echo "== evaluate"
paranmt-hf eval "$OUT/bitext/model" --tasks sts12-16 STSBenchmark STS17 Tatoeba --data-dir "$DATA" \
  --name "$NAME" --output "$OUT/bitext/eval" > "$OUT/bitext/eval_table.txt"

echo "== Hub-ready folder"
paranmt-hf publish "$OUT/bitext/model" --output "$OUT/bitext/hub" --eval-dir "$OUT/bitext/eval" --model-id "$NAME"

echo "== done in $(( $(date +%s) - start )) s: model $OUT/bitext/model, Hub folder $OUT/bitext/hub"
models=()
[ -d "$OUT/eval" ] && models+=("english=$OUT/eval")
models+=("bitext=$OUT/bitext/eval")
python results/bitext/side_by_side.py "${models[@]}" --targets bitext --json "$OUT/bitext/side_by_side.json" \
  | tee "$OUT/bitext/results_table.txt"

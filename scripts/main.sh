#!/usr/bin/env bash
# Main job: install, train two models on the shared corpora -- the English model (recipe `best`) and the cross-lingual
# SP model (recipe `pras-bitext`: X-English bitext + the English paraphrases) -- evaluate both (STS12-16 paper protocol,
# mteb Spearman, STS-B, STS17, Tatoeba), write a Hub-ready folder with its model card for each, print both side by side.
#   bash scripts/main.sh                 # everything, outputs in outputs/main/ (bitext model in outputs/main/bitext/)
#   OUT=/tmp/run RECIPE=acl2018-trigram bash scripts/main.sh
#   BITEXT=0 bash scripts/main.sh        # the English model only
# The two trainings run side by side (averaging encoders train on one thread each); so do the two evaluations and the
# two publishes. The run's total time (install included) and each stage's time and load average go to
# $OUT/main_job.json (benchmarks/quality/main_job.py's layout).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
t0=$(date +%s.%N)
STAGES="$(mktemp)"
trap 'rm -f "$STAGES"' EXIT
stage_start=$t0
stage() {  # stage NAME: the time since the previous stage ended, and the 1-minute load average now
  local now; now=$(date +%s.%N)
  printf '{"stage": "%s", "seconds": %.1f, "load_1min": %s}\n' "$1" "$(awk -v a="$now" -v b="$stage_start" 'BEGIN {print a - b}')" \
    "$(cut -d' ' -f1 /proc/loadavg)" >> "$STAGES"
  stage_start=$now
}
EXTRAS=recipes source scripts/install.sh  # what the job runs (the tests install every extra: scripts/test.sh)
stage install
export PARANMT_HF_DATA="${PARANMT_HF_DATA:-$(paranmt-hf data path)}"  # ../shared/data if present, else the user cache
if [ ! -f "$PARANMT_HF_DATA/train/STATS.json" ]; then  # no data: fetch it (offline, it stops and says what to do)
  paranmt-hf data fetch --dest "$PARANMT_HF_DATA" || exit 1
fi
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false
DATA="$PARANMT_HF_DATA"
OUT="${OUT:-$ROOT/outputs/main}"
RECIPE="${RECIPE:-best}"
NAME="${NAME:-paranmt-hf/paranmt-${RECIPE}}"
BITEXT="${BITEXT:-1}"
BITEXT_RECIPE="${BITEXT_RECIPE:-pras-bitext}"
BITEXT_NAME="${BITEXT_NAME:-paranmt-hf/paranmt-${BITEXT_RECIPE}}"
ENGLISH=("$DATA/train/flickr30k-caption-pairs.tsv.gz" "processed-5m:$DATA/train/paranmt5m-sample-10k.tsv.gz@10"
         "pairs:$OUT/data/tatoeba-pivots.tsv.gz@3")
rm -rf "$OUT" && mkdir -p "$OUT/data"
start=$(date +%s)
stage "data check"

echo "== 1/4 English paraphrases pivoted through the Tatoeba bitext (translations of one sentence)"
paranmt-hf corpus pivot "$DATA"/train/bitext/tatoeba-en-{es,fr,de}.tsv.gz -o "$OUT/data/tatoeba-pivots.tsv.gz"
stage pivot

bitext_pid=""
if [ "$BITEXT" = 1 ]; then
  echo "== 2/4 (background, log $OUT/bitext/train.log) train $BITEXT_RECIPE: Tatoeba en-es/fr/de + Multi30k" \
    "en-de/fr/cs bitext with the English data below"
  mkdir -p "$OUT/bitext"
  paranmt-hf train --recipe "$BITEXT_RECIPE" \
    --train "$DATA"/train/bitext/tatoeba-en-{es,fr,de}.tsv.gz "$DATA"/train/bitext/multi30k-en-{de,fr,cs}.tsv.gz \
    "${ENGLISH[@]}" --dev STS17:en-en --output "$OUT/bitext/model" --seed 0 --save-steps 1000 --no-progress \
    > "$OUT/bitext/train.log" 2>&1 &
  bitext_pid=$!
  trap 'kill "$bitext_pid" 2>/dev/null || true; rm -f "$STAGES"' EXIT  # a failed English step does not leave it running
fi

echo "== 2/4 train ($RECIPE) on $DATA/train: Flickr30k caption pairs, the ParaNMT sample x10, the pivots x3"
paranmt-hf train --recipe "$RECIPE" --train "${ENGLISH[@]}" \
  --dev STS17:en-en --output "$OUT/model" --seed 0 --save-steps 1000
stage "train $RECIPE (teacher pass included)"

if [ -n "$bitext_pid" ] && ! wait "$bitext_pid"; then
  tail -n 40 "$OUT/bitext/train.log" >&2
  echo "training $BITEXT_RECIPE failed: see $OUT/bitext/train.log" >&2
  exit 1
fi
trap 'rm -f "$STAGES"' EXIT  # the background training has ended: nothing left to stop
[ -n "$bitext_pid" ] && stage "wait for $BITEXT_RECIPE"

echo "== 3/4 evaluate (the results tables are printed at the end; the two models side by side, one core each)"
eval_pid=""
if [ "$BITEXT" = 1 ]; then
  paranmt-hf eval "$OUT/bitext/model" --tasks sts12-16 STSBenchmark STS17 Tatoeba --data-dir "$DATA" \
    --name "$BITEXT_NAME" --output "$OUT/bitext/eval" > "$OUT/bitext/results_table.txt" 2> "$OUT/bitext/eval.log" &
  eval_pid=$!
  trap 'kill "$eval_pid" 2>/dev/null || true; rm -f "$STAGES"' EXIT
fi
paranmt-hf eval "$OUT/model" --tasks sts12-16 STSBenchmark STS17 Tatoeba --data-dir "$DATA" \
  --name "$NAME" --output "$OUT/eval" > "$OUT/results_table.txt"
if [ -n "$eval_pid" ] && ! wait "$eval_pid"; then
  cat "$OUT/bitext/eval.log" >&2
  echo "evaluating $BITEXT_RECIPE failed: see $OUT/bitext/eval.log" >&2
  exit 1
fi
trap 'rm -f "$STAGES"' EXIT
stage "evaluate $RECIPE${eval_pid:+ and $BITEXT_RECIPE}"

echo "== 4/4 Hub-ready folders (the two side by side)"
publish_pid=""
if [ "$BITEXT" = 1 ]; then
  paranmt-hf publish "$OUT/bitext/model" --output "$OUT/bitext/hub" --eval-dir "$OUT/bitext/eval" \
    --model-id "$BITEXT_NAME" --no-progress > "$OUT/bitext/publish.log" 2>&1 &
  publish_pid=$!
  trap 'kill "$publish_pid" 2>/dev/null || true; rm -f "$STAGES"' EXIT
fi
paranmt-hf publish "$OUT/model" --output "$OUT/hub" --eval-dir "$OUT/eval" --model-id "$NAME" --no-progress
if [ -n "$publish_pid" ] && ! wait "$publish_pid"; then
  cat "$OUT/bitext/publish.log" >&2
  echo "publishing $BITEXT_RECIPE failed: see $OUT/bitext/publish.log" >&2
  exit 1
fi
trap 'rm -f "$STAGES"' EXIT
[ -n "$publish_pid" ] && cat "$OUT/bitext/publish.log"
stage publish

echo "== done in $(( $(date +%s) - start )) s: model $OUT/model, Hub folder $OUT/hub, card $OUT/hub/README.md"
cat "$OUT/results_table.txt"
if [ "$BITEXT" = 1 ]; then
  echo "== bitext model $OUT/bitext/model, Hub folder $OUT/bitext/hub; both models side by side:"
  python benchmarks/quality/side_by_side.py "english=$OUT/eval" "bitext=$OUT/bitext/eval" --targets bitext \
    --json "$OUT/side_by_side.json" | tee "$OUT/side_by_side.txt"
  stage "side by side"
fi
times > "$STAGES.cpu"  # CPU seconds of every finished child (user + sys), the trainings and the install included
cpu=$(awk 'NR == 2 {gsub(/s/, ""); split($1, u, "m"); split($2, s, "m"); print u[1] * 60 + u[2] + s[1] * 60 + s[2]}' \
  "$STAGES.cpu")
rm -f "$STAGES.cpu"
python benchmarks/quality/main_job.py --out "$OUT" --wall "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN {print a - b}')" \
  --cpu "$cpu" --stages "$STAGES" --json "$OUT/main_job.json" --command "OUT=$OUT bash scripts/main.sh" > /dev/null
echo "== timings (install included) in $OUT/main_job.json"

# Sourced by ablation.sh, loss_vs_mnrl.sh and seeds.sh: start runs of run_pipeline.py (paranmt-hf train + eval),
# at most $JOBS at a time (default 2: the machine is shared), logs in $WORK/logs/, and the pivot data they share.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export PARANMT_HF_DATA="${PARANMT_HF_DATA:-$(paranmt-hf data path)}" HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"
export TOKENIZERS_PARALLELISM=false
DATA="$PARANMT_HF_DATA"
JOBS="${JOBS:-2}"
WORK="${WORK:-/tmp/paranmt-results}"
FAILED=0
mkdir -p "$WORK/logs" "$WORK/data"

# English paraphrases pivoted through the Tatoeba bitext (as in scripts/main.sh), built once per $WORK
PIVOTS="$WORK/data/tatoeba-pivots.tsv.gz"
[ -f "$PIVOTS" ] || paranmt-hf corpus pivot "$DATA"/train/bitext/tatoeba-en-{es,fr,de}.tsv.gz -o "$PIVOTS"

_reap() { wait -n || FAILED=$((FAILED + 1)); }

# run GROUP NAME TRAIN_FLAGS...: one run in the background (skipped if its result exists; OVERWRITE=1 redoes it)
run() {
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do _reap; done
  local extra=()
  [ "${OVERWRITE:-0}" = 1 ] && extra+=(--overwrite)
  echo "$(date -u +%H:%M:%S) start $1/$2 (log $WORK/logs/$1-$2.log)"
  python results/recipes/run_pipeline.py "$1" "$2" --work "$WORK" "${extra[@]}" -- "${@:3}" \
    > "$WORK/logs/$1-$2.log" 2>&1 &
}

# finish: wait for every run, then render the tables; non-zero exit if a run failed
finish() {
  while [ -n "$(jobs -rp)" ]; do _reap; done
  python results/recipes/make_table.py > /dev/null
  if [ "$FAILED" -gt 0 ]; then echo "$FAILED run(s) failed: see $WORK/logs/" >&2; return 1; fi
  echo "done: results/recipes/pipeline/, tables in results/recipes/pipeline.md"
}

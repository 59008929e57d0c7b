#!/usr/bin/env bash
# Issue 30's acceptance run: `corpus make` on 2,000 bitext lines with a translator trained by the package, --tasks 4
# --workers 2, killed twice (SIGKILL of the whole command) and resumed, against the uninterrupted --tasks 1 run, in
# both engines, with sampling. Each kill comes once the attempt has finished a chunk of its own (the work folder's
# chunk files grow), so every resume starts from a half-done run. Both runs use the same --chunk-bytes: samples are
# seeded per chunk of input from --seed. Writes results/bt_resume/resume.json. Usage: bash results/bt_resume/run.sh [WORK]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
W="${1:-${WORK:-/tmp/paranmt-bt-resume}}"
DATA="${PARANMT_HF_DATA:-$ROOT/../shared/data}"
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
rm -rf "$W"; mkdir -p "$W"
python "$HERE/resume.py" head "$DATA/train/bitext/multi30k-en-de.tsv.gz" 2000 "$W/bitext.en-de.tsv"
start=$(date +%s)
paranmt-hf train-translator "$DATA/train/bitext/tatoeba-en-de.tsv.gz" --source-lang de -o "$W/mt" --size tiny \
    --max-steps 300 --no-progress
trained=$(( $(date +%s) - start ))
DECODE=(--do-sample --top-p 0.9 --num-return 2 --seed 3 --quiet --chunk-bytes 20000)
ONE=(--tasks 1 --workers 1)
FOUR=(--tasks 4 --workers 2)
chunks() { { find "$W/.four-$1.paranmt-work" -type f -path '*chunks*' ! -name '.*' 2>/dev/null || true; } | wc -l; }
declare -A kills
for engine in transformers ctranslate2; do
  paranmt-hf corpus make "$W/bitext.en-de.tsv" -o "$W/one-$engine" --model "$W/mt" --engine "$engine" \
      "${DECODE[@]}" "${ONE[@]}"
  n=0
  for attempt in 1 2; do  # killed while it works: the whole process group, as a scheduler's preemption would
    before=$(chunks "$engine")
    setsid paranmt-hf corpus make "$W/bitext.en-de.tsv" -o "$W/four-$engine" --model "$W/mt" --engine "$engine" \
        "${DECODE[@]}" "${FOUR[@]}" &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && [ "$(chunks "$engine")" -le "$before" ]; do sleep 1; done
    if kill -KILL -- "-$pid" 2>/dev/null; then n=$((n + 1)); echo "killed attempt $attempt after $(( $(chunks "$engine") - before )) new chunk file(s)"; fi
    wait "$pid" || true
  done
  kills[$engine]=$n
  paranmt-hf corpus make "$W/bitext.en-de.tsv" -o "$W/four-$engine" --model "$W/mt" --engine "$engine" \
      "${DECODE[@]}" "${FOUR[@]}"
done
python "$HERE/resume.py" report "$W" "$HERE/resume.json" "${kills[transformers]}" "${kills[ctranslate2]}" "$trained"

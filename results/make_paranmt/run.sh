#!/usr/bin/env bash
# Make a small ParaNMT from the shared German-English bitext, end to end, offline (results/make_paranmt/README.md).
#
#   KENLM_BIN=/path/to/kenlm/build/bin bash results/make_paranmt/run.sh [WORK]     # default: $WORK, else runs/make_paranmt
#
# Full sizes by default; smaller runs (results/make_paranmt/README.md says which this folder's results used):
#   MINING_SENTENCES=N, HELDOUT_SENTENCES=N   back-translate only the first N German sentences of a pool (default: all)
#   SOURCE_SEEDS="0 1 2"                       seeds of the data-source comparison (step 8)
#   GENERATOR_MINUTES=20                       CPU minutes of the paraphrase generator's training (step 9)
#   TUNE_ARGS="..."                            options of filters_2017/tune.py (default: --quantile-grids --full-grid
#                                              --seeds 0 1 2; e.g. --pairs 2000, --only length); SKIP_TUNE=1 skips it
#
# Every step is a package command or a script of this folder; every step skips what an earlier run completed
# (delete its output to redo it). One thread, `nice`: the machine is shared.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
W="${1:-${WORK:-$ROOT/runs/make_paranmt}}"
DATA="${PARANMT_HF_DATA:-$ROOT/../shared/data}"
HERE="$ROOT/results/make_paranmt"
export OMP_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
RUN="nice -n 10"
PHF="$RUN paranmt-hf"
mkdir -p "$W"

# 1. splits: MT train/test, the back-translation pools (mining; held-out for the LM and the classifier), Flickr, pivots
[ -f "$W/data/splits.json" ] || $RUN python "$HERE/prepare.py" "$W/data" --data-dir "$DATA"

# 2. the translation model, from scratch: a small Marian, 30 CPU minutes on one thread; its BLEU on mt-test
[ -f "$W/mt-model/generator_summary.json" ] || $RUN python "$HERE/train_mt.py" "$W" --max-cpu-minutes 30 --threads 1

# 3. back-translate the German of both pools (CTranslate2 int8; beam 5, the 5-best kept: EMNLP 2017's n-best lists)
#    (MINING_SENTENCES / HELDOUT_SENTENCES: the first N lines of a pool, a prefix, so its chunks are the full run's)
for pool in mining heldout; do
  limit="${pool^^}_SENTENCES"; limit="${!limit:-}"; src="$W/data/bt-$pool.tsv"
  if [ -n "$limit" ]; then
    src="$W/data/bt-$pool.first$limit.tsv"; [ -f "$src" ] || head -n "$limit" "$W/data/bt-$pool.tsv" > "$src"
  fi
  [ "$pool" = heldout ] && heldout_bitext="$src"
  [ -f "$W/bt-$pool.tsv" ] || $PHF corpus backtranslate "$src" --source-column 1 \
      --model "$W/mt-model" --engine ctranslate2 --num-beams 5 --num-return 5 --max-new-tokens 128 --with-source \
      --workers 1 --quiet -o "$W/bt-$pool.tsv"
done

# 4. the paraphrase score's model (ParaNMT-50M §3.1: a paraphrastic encoder's cosine): a trigram model trained on
#    the ParaNMT-5M sample
[ -f "$W/scorer/training_summary.json" ] || $PHF train --recipe best-trigram \
    --train "processed-5m:$DATA/train/paranmt5m-sample-10k.tsv.gz@5" --output "$W/scorer" --no-progress \
    --save-steps 100000 --dev STS17:en-en STSBenchmark:validation --eval-steps 250

# 5. EMNLP 2017's quality models, on the held-out pool only: a KenLM 3-gram of its references, and the
#    reference-vs-back-translation classifier
#    (the LM reads the English column of the pool's bitext, each reference once: bt-heldout.tsv repeats it per candidate)
[ -f "$W/lm/paranmt_lm.json" ] || $PHF measures train-lm "$heldout_bitext" --column 2 --order 3 --output "$W/lm"
[ -f "$W/classifier/classifier.json" ] || $PHF measures train-classifier "$W/bt-heldout.tsv" \
    --output "$W/classifier" > "$W/classifier-report.json"

# 6. annotate the mining pool with every column of the filters
[ -f "$W/annotated.tsv" ] || $PHF corpus annotate "$W/bt-mining.tsv" --model "$W/scorer" \
    --measure paraphrase_score --measure translation_length --measure unigram_overlap --measure bigram_overlap \
    --measure trigram_overlap --measure bleu --measure lm_perplexity --measure reference_probability \
    --measure mean_length --language-model "$W/lm" --classifier "$W/classifier" --workers 1 --quiet \
    -o "$W/annotated.tsv"

# 7. our ParaNMT: the 1-best of each sentence (ACL 2018), filtered by the package's default filter (PRAS: score
#    0.4-1.0, mean length 5-40, trigram overlap <= 0.7, both sides English)
[ -f "$W/one-best.tsv" ] || $RUN python "$HERE/one_best.py" "$W/annotated.tsv" "$W/one-best.tsv"
[ -f "$W/filtered.tsv" ] || $PHF corpus filter "$W/one-best.tsv" --filter pras --workers 1 --quiet \
    -o "$W/filtered.tsv"

# 8. EMNLP 2017's data-source question: the same number of pairs from each source, a TRIGRAM model each, 3 seeds
[ -f "$HERE/sources.json" ] || $RUN python "$HERE/compare_sources.py" --work "$W/sources" \
    --source "back-translated=$W/filtered.tsv" --source "tatoeba-pivots=$W/data/pivot.tsv" \
    --source "flickr=$W/data/flickr.tsv" --seeds ${SOURCE_SEEDS:-0 1 2}

# 9. a paraphrase generator (ParaNMT-50M §6) on the pairs made here and the shared pivot pairs: PRAS Figure 3's
#    generation thresholds (score 0.7-1.0, trigram overlap <= 0.5), 20 CPU minutes
[ -f "$W/generator/evaluation.json" ] || $PHF train-generator "$W/one-best.tsv" "$W/data/pivot.tsv" \
    --score-model "$W/scorer" --eval-model "$W/scorer" --max-cpu-minutes ${GENERATOR_MINUTES:-20} --held-out 500 \
    --no-progress --output "$W/generator"

# 10. EMNLP 2017's threshold tuning on dev (results/filters_2017)
[ -n "${SKIP_TUNE:-}" ] && exit 0
# shellcheck disable=SC2086
$RUN python "$ROOT/results/filters_2017/tune.py" --mining "$W/annotated.tsv" --work "$ROOT/runs/filters_2017" \
    ${TUNE_ARGS:---quantile-grids --full-grid --seeds 0 1 2}
$RUN python "$ROOT/results/filters_2017/make_table.py"

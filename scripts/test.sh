#!/usr/bin/env bash
# Install (if needed) and run the whole test suite offline. Real-data tests read $PARANMT_HF_DATA (default ../shared/data).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/install.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PARANMT_HF_DATA="${PARANMT_HF_DATA:-$(cd "$ROOT/.." && pwd)/shared/data}"
ruff check .
python -m pytest -q -p no:cacheprovider "$@"

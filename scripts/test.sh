#!/usr/bin/env bash
# Install (if needed) and run the whole test suite offline, on every core. Real-data tests read $PARANMT_HF_DATA (default ../shared/data).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/install.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export PARANMT_HF_DATA="${PARANMT_HF_DATA:-$(cd "$ROOT/.." && pwd)/shared/data}"
ruff check .
# every core (pytest-xdist; PYTEST_WORKERS=1 for one process), a test file's tests in one worker (its fixtures once)
python -m pytest -q -p no:cacheprovider -n "${PYTEST_WORKERS:-auto}" --dist loadfile "$@"

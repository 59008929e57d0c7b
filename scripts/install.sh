#!/usr/bin/env bash
# Create .venv (if missing) and install paranmt_hf with the extras $EXTRAS (default dev: every extra and the test
# tools; the main job asks for `recipes`). torch is pinned to the local CPU wheel by a constraint, so no dependency can
# pull a CUDA build. Source it (`source scripts/install.sh`) to stay in the environment. --no-compile: pip would
# byte-compile every module of every package (torch's thousands), half the install's time; Python compiles what it
# imports, once.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
if [ ! -x "$ROOT/.venv/bin/python" ]; then
  "$PYTHON" -m venv "$ROOT/.venv"
fi
# shellcheck disable=SC1091
source "$ROOT/.venv/bin/activate"
# a pip new enough for editable installs with constraints (venv's own since Python 3.11) is kept: no index round trip
python -c "import pip, sys; sys.exit(int(pip.__version__.split('.')[0]) < 23)" || python -m pip install --quiet --upgrade pip
python -m pip install --quiet --no-compile -c "$ROOT/scripts/constraints.txt" "torch==2.13.0" -e "$ROOT[${EXTRAS:-dev}]"
python -c "import torch; assert torch.__version__.startswith('2.13.0'), torch.__version__"

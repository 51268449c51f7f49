#!/usr/bin/env bash
# Creates .cache/phoenix (a venv) with a pinned Arize Phoenix from PyPI, for the peer
# benchmark in bench/ (Phoenix's OTLP/HTTP ingestion at /v1/traces). Kept apart from
# scripts/setup/python-env.sh so the two pins never clash. Idempotent: when the venv already holds
# exactly this pin it returns at once. Prints the venv's python path last.
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV=.cache/phoenix
PINS=(arize-phoenix==20.26.1)
STAMP="$VENV/.pins"
WANT="$(printf '%s\n' "${PINS[@]}")"

if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "$PWD/$VENV/bin/python"
  exit 0
fi

PYTHON="${PYTHON:-python3}"
"$PYTHON" -c 'import sys; sys.exit(0 if (3, 10) <= sys.version_info < (3, 14) else 1)' || {
  echo "phoenix-env: $PYTHON is not in 3.10..3.13, which arize-phoenix needs" >&2
  exit 1
}
# A half-made venv (interrupted install) is rebuilt rather than trusted.
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV" >&2
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${PINS[@]}" >&2
printf '%s' "$WANT" >"$STAMP"
echo "$PWD/$VENV/bin/python"

#!/usr/bin/env bash
# Creates .cache/python-otel (a venv) with the pinned official OpenTelemetry Python packages
# from PyPI, for the Python client tests (test/clients/python/). Idempotent: when the venv
# already holds exactly these pins it returns at once. Prints the venv's python path last.
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV=.cache/python-otel
PINS=(
  opentelemetry-api==1.45.2
  opentelemetry-sdk==1.45.2
  opentelemetry-exporter-otlp-proto-http==1.45.2
  opentelemetry-exporter-otlp-proto-grpc==1.45.2
)
STAMP="$VENV/.pins"
WANT="$(printf '%s\n' "${PINS[@]}")"

if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "$PWD/$VENV/bin/python"
  exit 0
fi

PYTHON="${PYTHON:-python3}"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' || {
  echo "python-env: $PYTHON is older than 3.9, which opentelemetry-sdk needs" >&2
  exit 1
}
# A half-made venv (interrupted install) is rebuilt rather than trusted.
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV" >&2
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "${PINS[@]}" >&2
printf '%s' "$WANT" >"$STAMP"
echo "$PWD/$VENV/bin/python"

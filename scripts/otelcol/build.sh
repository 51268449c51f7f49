#!/usr/bin/env bash
# Builds a real OpenTelemetry Collector with the Collector Builder (ocb), from the Go module
# proxy only. Idempotent: does nothing when the binary already exists.
#   scripts/otelcol/build.sh        -> prints the binary's path on its last line
# Output: .cache/otelcol/otelcol-trajwatch (and the generated sources next to it).
set -euo pipefail

BUILDER_VERSION=v0.165.0
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/.cache/otelcol"
bin="$out/otelcol-trajwatch"

if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "otelcol: go is not installed (needed to build the Collector)" >&2; exit 1; }
mkdir -p "$out"
export GOBIN="$out/bin"
if [[ ! -x "$GOBIN/builder" ]]; then
  echo "otelcol: installing the Collector Builder $BUILDER_VERSION" >&2
  go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION"
fi
echo "otelcol: building the Collector (several minutes on 2 cores)" >&2
start=$(date +%s)
# The manifest with this checkout's output path filled in (dist.output_path).
sed "s|^dist:$|dist:\n  output_path: $out|" "$here/manifest.yaml" > "$out/manifest.yaml"
"$GOBIN/builder" --config "$out/manifest.yaml" >&2
echo "otelcol: built in $(( $(date +%s) - start )) s" >&2
echo "$bin"

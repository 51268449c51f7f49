#!/usr/bin/env bash
# Builds the peer-benchmark Collector (bench/otelcol/manifest.yaml) with the Collector
# Builder from the Go module proxy only. Idempotent: does nothing when the binary exists.
#   bench/otelcol/build.sh   -> prints the binary's path on its last line
set -euo pipefail

BUILDER_VERSION=v0.165.0
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/.cache/otelcol-bench"
bin="$out/otelcol-bench"

if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "otelcol-bench: go is not installed (needed to build the Collector)" >&2; exit 1; }
mkdir -p "$out"
# Reuse the builder scripts/otelcol/build.sh installed, when it is there.
builder="$root/.cache/otelcol/bin/builder"
if [[ ! -x "$builder" ]]; then
  export GOBIN="$out/bin"
  builder="$GOBIN/builder"
  [[ -x "$builder" ]] || go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION"
fi
echo "otelcol-bench: building the Collector" >&2
start=$(date +%s)
sed "s|^dist:$|dist:\n  output_path: $out|" "$here/manifest.yaml" > "$out/manifest.yaml"
"$builder" --config "$out/manifest.yaml" >&2
echo "otelcol-bench: built in $(( $(date +%s) - start )) s" >&2
echo "$bin"

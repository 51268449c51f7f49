#!/usr/bin/env bash
# Builds a real OpenTelemetry Collector with the Collector Builder (ocb), from the Go module
# proxy only. Idempotent: does nothing when the binary exists and was built with this manifest's
# components (its `gomod:` lines); a changed component list, e.g. a new exporter, rebuilds it.
#   scripts/setup/otelcol/build.sh [manifest out-dir]   -> prints the binary's path on its last line
# Default: this directory's manifest.yaml into .cache/otelcol/ (binary otelcol-trajwatch, the
# generated sources next to it). The peer benchmark passes its own (bench/otelcol/build.sh).
set -euo pipefail

BUILDER_VERSION=v0.165.0
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
manifest="${1:-$here/manifest.yaml}"
out="${2:-$root/.cache/otelcol}"
name="$(sed -n 's/^  name: *//p' "$manifest" | head -1)"
bin="$out/$name"

# The manifest with the output path filled in (dist.output_path), and STUB_DIR: this
# directory (a replace directive needs an absolute path).
wanted="$(sed -e "s|^dist:$|dist:\n  output_path: $out|" -e "s|STUB_DIR|$here|" "$manifest")"
# Compared by components only: output_path differs between checkouts sharing one .cache.
components() { grep -E '^\s*- gomod:' | sed 's/^\s*//' | sort; }
if [[ -x "$bin" && -f "$out/manifest.yaml" && "$(components < "$out/manifest.yaml")" == "$(components <<< "$wanted")" ]]; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "otelcol: go is not installed (needed to build the Collector)" >&2; exit 1; }
mkdir -p "$out"
export GOBIN="$root/.cache/otelcol/bin"
if [[ ! -x "$GOBIN/builder" ]]; then
  echo "otelcol: installing the Collector Builder $BUILDER_VERSION" >&2
  go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION"
fi
echo "otelcol: building the Collector (several minutes on 2 cores)" >&2
start=$(date +%s)
# Recorded as built only once the build succeeded, so a failed build is tried again.
printf '%s\n' "$wanted" > "$out/manifest.building.yaml"
"$GOBIN/builder" --config "$out/manifest.building.yaml" >&2
mv "$out/manifest.building.yaml" "$out/manifest.yaml"
echo "otelcol: built in $(( $(date +%s) - start )) s" >&2
echo "$bin"

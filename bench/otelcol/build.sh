#!/usr/bin/env bash
# Builds the peer-benchmark Collector (bench/otelcol/manifest.yaml) into .cache/otelcol-bench/
# with scripts/setup/otelcol/build.sh (same builder, same rebuild-on-changed-components rule), kept
# apart from the deployment Collector so neither build replaces the other.
#   bench/otelcol/build.sh   -> prints the binary's path on its last line
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
exec bash "$root/scripts/setup/otelcol/build.sh" "$here/manifest.yaml" "$root/.cache/otelcol-bench"

#!/usr/bin/env bash
# Replays every in-repo capture (framework matrix, instrumentation captures, the TRAIL traces)
# and prints one sha256 per output file: run it before and after a refactoring, diff the two
# listings — a restructuring that changes no behaviour leaves every line the same.
#   bash scripts/dev/corpus-digest.sh > before.txt; …; bash scripts/dev/corpus-digest.sh | diff before.txt -
set -euo pipefail
cd "$(dirname "$0")/../.."
node=node_modules/.bin/node
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
replay() {
  local name="$1"; shift
  "$node" src/cli/main.ts replay "$@" --trajectories "$out/$name.trajectories.jsonl" --findings "$out/$name.findings.jsonl" 2>"$out/$name.stderr" || true
  for kind in trajectories findings; do
    printf '%s  %s.%s\n' "$(sha256sum < "$out/$name.$kind.jsonl" | cut -c1-16)" "$name" "$kind"
  done
  printf '%s: %s\n' "$name" "$(tail -1 "$out/$name.stderr" | sed "s#$out/##g")"
}
for f in test/fixtures/frameworks/*.traces.pb.gz; do
  base="$(basename "$f" .traces.pb.gz)"
  logs="test/fixtures/frameworks/$base.logs.pb.gz"
  if [ -f "$logs" ]; then replay "frameworks-$base" "$f" "$logs"; else replay "frameworks-$base" "$f"; fi
done
for d in test/fixtures/captures/*/; do replay "captures-$(basename "$d")" "$d"*.pb; done
replay trail-dev test/fixtures/trail-dev/*.otlp.json.gz

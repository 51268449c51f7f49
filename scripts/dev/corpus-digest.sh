#!/usr/bin/env bash
# Replays every in-repo capture (framework matrix, instrumentation captures, the TRAIL traces,
# these last also under a config with treatments and steers) and prints one sha256 per output
# file, then scripts/dev/analysis-digest.ts's (bench's synthetic spans in-process, with the
# Kafka record values and the external view): run it before and after a refactoring, diff the
# two listings — a restructuring that changes no behaviour leaves every line the same.
#   bash scripts/dev/corpus-digest.sh > before.txt; …; bash scripts/dev/corpus-digest.sh | diff before.txt -
set -euo pipefail
cd "$(dirname "$0")/../.."
node=node_modules/.bin/node
out="$(mktemp -d)"
config=
trap 'rm -rf "$out"' EXIT
replay() {
  local name="$1"; shift
  "$node" src/cli/main.ts replay "$@" ${config:+--config "$config"} --trajectories "$out/$name.trajectories.jsonl" --findings "$out/$name.findings.jsonl" 2>"$out/$name.stderr" || true
  for kind in trajectories findings; do
    printf '%s  %s.%s\n' "$(sha256sum < "$out/$name.$kind.jsonl" | cut -c1-64)" "$name" "$kind"
  done
  printf '%s: %s\n' "$name" "$(tail -1 "$out/$name.stderr" | sed "s#$out/##g")"
}
for f in test/fixtures/frameworks/*.traces.pb.gz; do
  base="$(basename "$f" .traces.pb.gz)"
  logs="test/fixtures/frameworks/$base.logs.pb.gz"
  if [ -f "$logs" ]; then replay "frameworks-$base" "$f" "$logs"; else replay "frameworks-$base" "$f"; fi
done
for d in test/fixtures/captures/*/; do replay "captures-$(basename "$d")" "$d"*.pb; done
config=
replay trail-dev test/fixtures/trail-dev/*.otlp.json.gz
config="$out/provenance.json"
cat > "$config" <<'JSON'
{"provenance": {"treatments": {"bundles": [{"id": "arm-b", "match": {"telemetry.sdk.language": "python"}, "layers": ["Tools"], "definition": {"v": 1}}]},
                "conditions": {"steers": {"captured": true}}}}
JSON
replay trail-dev-provenance test/fixtures/trail-dev/*.otlp.json.gz
"$node" scripts/dev/analysis-digest.ts

#!/usr/bin/env bash
# Starts a real Prometheus on loopback that scrapes one target, and waits (bounded) until it
# answers /-/ready. Installs Debian's package first when needed (install.sh).
#
#   scripts/setup/prometheus/start.sh --target 127.0.0.1:4318 --port 19090 --dir /tmp/prom [--interval 1s]
#     [--rules FILE] [--alertmanager HOST:PORT] [--feature NAME]
#
# --rules loads one rule file (evaluated every --interval); --alertmanager sends alerts to one
# Alertmanager; --feature passes --enable-feature=NAME (e.g. exemplar-storage), repeatable.
# Writes DIR/prometheus.yml (job "trajwatch", metrics_path /metrics), DIR/data,
# DIR/prometheus.pid and DIR/prometheus.log. Prints `url=http://127.0.0.1:PORT` when ready.
# Stop it with scripts/setup/prometheus/stop.sh --dir DIR.
# Environment: TRAJWATCH_PROM_START_TIMEOUT_S (default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="" port="" dir="" interval="1s" rules="" alertmanager=""
features=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --interval) interval="$2"; shift 2 ;;
    --rules) rules="$2"; shift 2 ;;
    --alertmanager) alertmanager="$2"; shift 2 ;;
    --feature) features+=("--enable-feature=$2"); shift 2 ;;
    *) echo "prometheus: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$target" && -n "$port" && -n "$dir" ]] || { echo "usage: start.sh --target HOST:PORT --port PORT --dir DIR [--interval 1s]" >&2; exit 2; }
timeout_s="${TRAJWATCH_PROM_START_TIMEOUT_S:-30}"

"$here/install.sh"
mkdir -p "$dir/data"
cat > "$dir/prometheus.yml" <<YAML
global:
  scrape_interval: $interval
  evaluation_interval: $interval
scrape_configs:
  - job_name: trajwatch
    metrics_path: /metrics
    static_configs:
      - targets: ['$target']
YAML
if [[ -n "$rules" ]]; then
  printf 'rule_files:\n  - %s\n' "$rules" >> "$dir/prometheus.yml"
fi
if [[ -n "$alertmanager" ]]; then
  printf 'alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [%s]\n' "'$alertmanager'" >> "$dir/prometheus.yml"
fi
promtool check config "$dir/prometheus.yml" >/dev/null

if [[ -f "$dir/prometheus.pid" ]] && kill -0 "$(cat "$dir/prometheus.pid")" 2>/dev/null; then
  echo "prometheus: already running in $dir (pid $(cat "$dir/prometheus.pid"))" >&2
  exit 1
fi
prometheus \
  --config.file="$dir/prometheus.yml" \
  --storage.tsdb.path="$dir/data" \
  --storage.tsdb.retention.time=1h \
  --web.listen-address="127.0.0.1:$port" \
  "${features[@]}" \
  >"$dir/prometheus.log" 2>&1 &
echo $! > "$dir/prometheus.pid"

url="http://127.0.0.1:$port"
deadline=$(( $(date +%s) + timeout_s ))
until curl -sf "$url/-/ready" >/dev/null 2>&1; do
  if ! kill -0 "$(cat "$dir/prometheus.pid")" 2>/dev/null; then
    echo "prometheus: exited during start; log:" >&2
    tail -n 30 "$dir/prometheus.log" >&2
    exit 1
  fi
  if (( $(date +%s) >= deadline )); then
    echo "prometheus: not ready within ${timeout_s}s; log:" >&2
    tail -n 30 "$dir/prometheus.log" >&2
    "$here/stop.sh" --dir "$dir" || true
    exit 1
  fi
  sleep 0.2
done
echo "url=$url"

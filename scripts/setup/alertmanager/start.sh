#!/usr/bin/env bash
# Starts a real Alertmanager on loopback with a given configuration, and waits (bounded) until
# it answers /-/ready. Installs Debian's package first when needed (install.sh).
#
#   scripts/setup/alertmanager/start.sh --config FILE --port 19093 --dir /tmp/am
#
# Checks FILE with amtool first. Clustering is off (no gossip port). Writes DIR/data,
# DIR/alertmanager.pid and DIR/alertmanager.log. Prints `url=http://127.0.0.1:PORT` when ready.
# Stop it with scripts/setup/alertmanager/stop.sh --dir DIR.
# Environment: TRAJWATCH_AM_START_TIMEOUT_S (default 30).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
config="" port="" dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --config) config="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    *) echo "alertmanager: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$config" && -n "$port" && -n "$dir" ]] || { echo "usage: start.sh --config FILE --port PORT --dir DIR" >&2; exit 2; }
timeout_s="${TRAJWATCH_AM_START_TIMEOUT_S:-30}"

"$here/install.sh"
amtool check-config "$config" >/dev/null
mkdir -p "$dir/data"
if [[ -f "$dir/alertmanager.pid" ]] && kill -0 "$(cat "$dir/alertmanager.pid")" 2>/dev/null; then
  echo "alertmanager: already running in $dir (pid $(cat "$dir/alertmanager.pid"))" >&2
  exit 1
fi
prometheus-alertmanager \
  --config.file="$config" \
  --storage.path="$dir/data" \
  --web.listen-address="127.0.0.1:$port" \
  --cluster.listen-address= \
  >"$dir/alertmanager.log" 2>&1 &
echo $! > "$dir/alertmanager.pid"

url="http://127.0.0.1:$port"
deadline=$(( $(date +%s) + timeout_s ))
until curl -sf "$url/-/ready" >/dev/null 2>&1; do
  if ! kill -0 "$(cat "$dir/alertmanager.pid")" 2>/dev/null; then
    echo "alertmanager: exited during start; log:" >&2
    tail -n 30 "$dir/alertmanager.log" >&2
    exit 1
  fi
  if (( $(date +%s) >= deadline )); then
    echo "alertmanager: not ready within ${timeout_s}s; log:" >&2
    tail -n 30 "$dir/alertmanager.log" >&2
    "$here/stop.sh" --dir "$dir" || true
    exit 1
  fi
  sleep 0.2
done
echo "url=$url"

#!/usr/bin/env bash
# Stops the Prometheus that start.sh started in DIR: SIGTERM, a bounded wait, then SIGKILL.
#   scripts/setup/prometheus/stop.sh --dir DIR
set -euo pipefail
dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    *) echo "prometheus: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n "$dir" ]] || { echo "usage: stop.sh --dir DIR" >&2; exit 2; }
pid_file="$dir/prometheus.pid"
[[ -f "$pid_file" ]] || exit 0
pid="$(cat "$pid_file")"
if kill -0 "$pid" 2>/dev/null; then
  kill -TERM "$pid"
  for _ in $(seq 1 75); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "prometheus: did not stop within 15s, killing pid $pid" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
fi
rm -f "$pid_file"

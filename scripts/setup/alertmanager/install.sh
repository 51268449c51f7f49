#!/usr/bin/env bash
# Installs Alertmanager (and amtool) from Debian's `prometheus-alertmanager` package.
# Idempotent: does nothing when both binaries are already on PATH.
set -euo pipefail
if command -v prometheus-alertmanager >/dev/null && command -v amtool >/dev/null; then
  exit 0
fi
command -v apt-get >/dev/null || { echo "alertmanager: not installed and apt-get is not available" >&2; exit 1; }
echo "alertmanager: installing Debian's prometheus-alertmanager package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq prometheus-alertmanager >&2
# The package's init script may start the system-wide service; ours runs on its own port and
# data directory, so that one is not needed (and not ours to leave running).
if command -v service >/dev/null; then service prometheus-alertmanager stop >/dev/null 2>&1 || true; fi
command -v prometheus-alertmanager >/dev/null && command -v amtool >/dev/null

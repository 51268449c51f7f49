#!/usr/bin/env bash
# Installs Prometheus (and promtool) from Debian's `prometheus` package. Idempotent: does
# nothing when both binaries are already on PATH.
set -euo pipefail
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
  exit 0
fi
command -v apt-get >/dev/null || { echo "prometheus: not installed and apt-get is not available" >&2; exit 1; }
echo "prometheus: installing Debian's prometheus package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq prometheus >&2
# The package's init script may start the system-wide service; ours runs on its own port and
# data directory, so that one is not needed (and not ours to leave running).
if command -v service >/dev/null; then service prometheus stop >/dev/null 2>&1 || true; fi
command -v prometheus >/dev/null && command -v promtool >/dev/null

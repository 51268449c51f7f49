#!/usr/bin/env bash
# Validates a compose file with compose-go (the library `docker compose` uses), built once
# from the Go module proxy into .cache/compose-check/. Idempotent build.
#   scripts/dev/compose-check/check.sh docker-compose.yml
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
bin="$root/.cache/compose-check/compose-check"
if [[ ! -x "$bin" ]]; then
  command -v go >/dev/null || { echo "compose-check: go is not installed" >&2; exit 1; }
  mkdir -p "$(dirname "$bin")"
  (cd "$here" && go build -o "$bin" .) >&2
fi
exec "$bin" "$@"

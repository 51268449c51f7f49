#!/usr/bin/env bash
# Debian's Chromium, headless: the labeling page's browser test (test/calibration/label/label-page.test.ts)
# drives it over the DevTools protocol, and `trajwatch reliability` draws its PNG with it.
# Idempotent: nothing is done when /usr/bin/chromium is there.
set -euo pipefail
if [[ -x /usr/bin/chromium ]]; then exit 0; fi
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium

#!/usr/bin/env bash
# Make sure a redis-server binary is available for the Redis pool-state tests (issue 8).
# The tests start their own server on a free loopback port (or use HERMES_REDIS_URL when set);
# they fail, never skip, when redis-server is missing.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  redis-server --version
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends redis-server
# the Debian package may start a system service; the tests do not need it
$SUDO service redis-server stop >/dev/null 2>&1 || true
redis-server --version

#!/usr/bin/env bash
# Run by `npm test` before anything is built or tested: makes sure the programs the test suite
# drives exist. Missing ones are installed from Debian's packages when we may (root with
# apt-get, as on CI and the development machines); otherwise one line says exactly what is
# missing and how to get it, and the run stops before any test. NATS itself is not started
# here: the test run's global setup (test/support/shared-nats-setup.ts) starts a private one on
# 127.0.0.1:4222 when none answers there.
set -euo pipefail

missing=()
# The JetStream and reliability suites start private nats-servers (a 3-node cluster among them).
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
# The homepage and Swagger UI are checked in headless Debian Chromium (playwright-core drives it).
[ -x /usr/bin/chromium ] || missing+=(chromium)
# The TLS suites (and the client's https tests) make a private CA and certificates with openssl.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# docker-compose.yml is validated with `docker-compose config` (no Docker engine needed).
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 || missing+=(docker-compose)

if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test prerequisites: installing Debian packages ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi

echo "test prerequisites missing: ${missing[*]}; install them with 'sudo apt-get install -y ${missing[*]}' (or run npm test as root on Debian, which installs them), then run npm test again" >&2
exit 1

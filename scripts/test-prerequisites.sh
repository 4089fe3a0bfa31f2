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
# deploy/kubernetes is rendered with Debian's kubectl (1.20: its built-in kustomize is the v2 line
# the manifests keep to); another kubectl (a cloud SDK's) does not prove that.
if command -v dpkg-query >/dev/null 2>&1; then
  dpkg-query -W -f='${Status}' kubernetes-client 2>/dev/null | grep -q 'install ok installed' || missing+=(kubernetes-client)
else
  command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
fi
# The alert rules are checked with promtool, and a real Prometheus scrapes a real server.
{ command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1; } || missing+=(prometheus)

if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test prerequisites: installing Debian packages ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # A kubectl from another package (a cloud SDK's) owns /usr/bin/kubectl: keep it beside
  # Debian's, renamed, instead of letting dpkg refuse the file.
  if [[ " ${missing[*]} " == *" kubernetes-client "* ]] && owner=$(dpkg-query -S /usr/bin/kubectl 2>/dev/null | grep -v "^diversion" | head -1 | cut -d: -f1) \
    && [ -n "$owner" ] && [ "$owner" != kubernetes-client ]; then
    dpkg-divert --package kubernetes-client --rename --divert "/usr/bin/kubectl.$owner" --add /usr/bin/kubectl >/dev/null
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts the packaged Prometheus as a service where systemd runs; the tests start their own.
  if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
  exit 0
fi

echo "test prerequisites missing: ${missing[*]}; install them with 'sudo apt-get install -y ${missing[*]}' (or run npm test as root on Debian, which installs them), then run npm test again" >&2
exit 1

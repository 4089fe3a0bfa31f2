#!/usr/bin/env bash
# Run by `npm test` before anything is built or tested: makes sure the programs the test suite
# drives exist. Missing ones are installed from Debian's packages when we may (root with
# apt-get, as on CI and the development machines); otherwise one line says exactly what is
# missing and how to get it, and the run stops before any test. NATS itself is not started
# here: the test run's global setup (test/support/shared-nats-setup.ts) starts a private one on
# 127.0.0.1:4222 when none answers there.
#
# `bash scripts/test-prerequisites.sh --bench`, run first by `npm run bench` (bench/README.md), does
# the same for the benchmarks instead: they need nats-server too, and nginx with the nchan module for the
# Nchan baselines. The tests never need nginx, so `npm test` (no flag) neither checks nor
# installs it, and a machine without it runs the whole suite. Both need a C compiler: the bench
# builds its C fan-out floor (bench/baselines/c-fanout-server.c) with `cc` when it runs, and a
# unit test builds it the same way.
set -euo pipefail

mode=tests
case "${1:-}" in
  '') ;;
  --bench) mode=bench ;;
  *) echo "usage: bash scripts/test-prerequisites.sh [--bench]" >&2; exit 2 ;;
esac

missing=()
# The JetStream and reliability suites start private nats-servers (a 3-node cluster among them);
# the JetStream scenarios of the bench start one each.
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
# `cc` is Debian's gcc; the C library's headers are only a recommendation of it, so asked for too.
command -v cc >/dev/null 2>&1 || missing+=(gcc)
if command -v dpkg-query >/dev/null 2>&1; then
  dpkg-query -W -f='${Status}' libc6-dev 2>/dev/null | grep -q 'ok installed' || missing+=(libc6-dev)
fi
if [ "$mode" = tests ]; then
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
else
  # The Nchan baselines start their own nginx (one worker, a generated configuration on a free
  # port); the packages' system service is not used. On a machine with an init system, installing
  # nginx-light also starts that service on port 80: `systemctl disable --now nginx` stops it.
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
  dpkg-query -W -f='${Status}' libnginx-mod-nchan 2>/dev/null | grep -q 'ok installed' || missing+=(libnginx-mod-nchan)
fi

if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "$mode prerequisites: installing Debian packages ${missing[*]}"
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

if [ "$mode" = tests ]; then again='run npm test again'; else again='run npm run bench again'; fi
echo "$mode prerequisites missing: ${missing[*]}; install them with 'sudo apt-get install -y ${missing[*]}' (or run this script as root on Debian, which installs them), then $again" >&2
exit 1

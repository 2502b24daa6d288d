#!/usr/bin/env bash
# Installs the Debian 12 packages wheelfit needs, when any is missing. Needs root (or sudo).
#
#   scripts/install-deps.sh             what building and testing everything needs
#   scripts/install-deps.sh --demo      only what building the CLI, its plugins and the farm
#                                       generator needs (scripts/demo.sh)
#   scripts/install-deps.sh --package   what building and checking the Debian packages needs
#   scripts/install-deps.sh --windows   what cross-building for Windows and testing under wine needs
set -euo pipefail
build=(g++ cmake ninja-build pkg-config libboost1.81-dev libboost-json1.81-dev
       libtomlplusplus-dev libfmt-dev libssl-dev zlib1g-dev
       libkrb5-dev)  # GSS-API for Negotiate (Kerberos) proxy authentication
tests=(catch2
       clang libclang-rt-14-dev  # the libFuzzer targets (scripts/fuzz.sh)
       lld                       # a faster linker (ld.gold otherwise)
       nginx-light python3-pip python3-venv curl  # the mirror's integration test and bench_download: a real server and clients
       krb5-kdc krb5-admin-server krb5-user squid)  # the Negotiate proxy test: a KDC and a Kerberos proxy
package=(dpkg-dev file lintian)  # cpack's dpkg-shlibdeps, and Debian's package checker
# The Windows build (scripts/build-windows.sh): MinGW-w64 with posix threads, its zlib, wine for
# the tests; the header-only libraries come from the build list's packages; OpenSSL is cross-built
# from Debian's source (scripts/build-openssl-mingw.sh: make, perl).
windows=(g++-mingw-w64-x86-64-posix gcc-mingw-w64-x86-64-posix libz-mingw-w64-dev mingw-w64-tools
         wine wine64 make perl unzip catch2 cmake ninja-build libboost1.81-dev libtomlplusplus-dev libfmt-dev)
case "${1:-}" in
  --demo) packages=("${build[@]}") ;;
  --package) packages=("${build[@]}" "${package[@]}") ;;
  --windows) packages=("${windows[@]}") ;;
  "") packages=("${build[@]}" "${tests[@]}") ;;
  *) echo "usage: $0 [--demo | --package | --windows]" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
# apt enables these as system services and, without a policy-rc.d, starts them (listening on
# every address: 3128, 88, 749). The tests start their own on loopback, so none is left running
# or enabled; tolerates systemctl, service and update-rc.d each being absent.
systemd_running=false
[[ -d /run/systemd/system ]] && systemd_running=true
for service in squid krb5-kdc krb5-admin-server; do
  [[ " ${missing[*]} " == *" ${service} "* ]] || continue
  if command -v systemctl >/dev/null; then
    if $systemd_running; then $sudo systemctl stop "$service" >/dev/null 2>&1 || true; fi
    $sudo systemctl disable "$service" >/dev/null 2>&1 || true  # works without a running systemd too
  fi
  if ! $systemd_running && command -v service >/dev/null; then $sudo service "$service" stop >/dev/null 2>&1 || true; fi
  if command -v update-rc.d >/dev/null; then $sudo update-rc.d "$service" disable >/dev/null 2>&1 || true; fi
done

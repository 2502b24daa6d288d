#!/usr/bin/env bash
# Cross-builds OpenSSL's static libraries for Windows x86_64 (MinGW-w64, posix threads) once, into
# a cache keyed by the version Debian ships, and prints the sysroot's path. Debian has no MinGW
# OpenSSL package; the source is Debian's own upstream tarball (apt verifies its digest against
# the signed Sources index), fetched with a private deb-src list so the system's apt configuration
# is not touched. About 4 minutes on 2 cores; later builds, and CI's later steps, reuse it.
#
#   scripts/build-openssl-mingw.sh        build when missing, print the sysroot
#
# The cache: $WHEELFIT_DEPS_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/wheelfit-deps; the sysroot is
# <cache>/openssl-<version>-mingw64 (include/, lib64/libssl.a, lib64/libcrypto.a) and appears only
# when complete (built in a temporary folder, then renamed), so a killed build leaves no half
# sysroot behind.
set -euo pipefail
cache="${WHEELFIT_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wheelfit-deps}"
# The version of Debian's libssl-dev candidate, upstream part only: 3.0.22-1~deb12u2 -> 3.0.22.
debian_version="$(apt-cache policy libssl-dev | sed -n 's/^ *Candidate: *//p')"
version="${debian_version%%-*}"
if [[ -z "$version" || "$version" == "(none)" ]]; then
  echo "build-openssl-mingw: apt knows no libssl-dev candidate; run apt-get update" >&2
  exit 2
fi
sysroot="$cache/openssl-$version-mingw64"
if [[ -f "$sysroot/lib64/libssl.a" && -f "$sysroot/lib64/libcrypto.a" && -f "$sysroot/include/openssl/ssl.h" ]]; then
  echo "$sysroot"
  exit 0
fi
command -v x86_64-w64-mingw32-gcc-posix >/dev/null || {
  echo "build-openssl-mingw: x86_64-w64-mingw32-gcc-posix is missing (scripts/install-deps.sh --windows)" >&2
  exit 2
}
mkdir -p "$cache"
work="$(mktemp -d "$cache/.openssl-$version.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$SECONDS
# A deb-src list of the archives apt already uses (main and security), in private apt state.
mkdir -p "$work/apt/parts" "$work/apt/lists/partial"
for suite in "http://deb.debian.org/debian bookworm" "http://deb.debian.org/debian-security bookworm-security"; do
  set -- $suite
  printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n' \
    "$1" "$2" >>"$work/apt/parts/src.sources"
done
apt_opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$work/apt/parts"
          -o Dir::State::Lists="$work/apt/lists" -o Debug::NoLocking=1 -o APT::Sandbox::User=root -qq)
apt-get "${apt_opts[@]}" update
# Only the upstream tarball is needed (the Debian patches are packaging and Linux paths), and the
# security archive serves only it (its .dsc is not kept): a 404 on the others is expected.
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only "openssl=$debian_version" >/dev/null 2>&1 || true)
tarball="$work/openssl_$version.orig.tar.gz"
if [[ ! -f "$tarball" ]]; then
  echo "build-openssl-mingw: apt did not deliver openssl_$version.orig.tar.gz" >&2
  exit 2
fi
tar -xzf "$tarball" -C "$work"
cd "$work/openssl-$version"
# no-shared: static libraries only, so wheelfit.exe needs no OpenSSL DLL. no-tests, no programs.
./Configure mingw64 --cross-compile-prefix=x86_64-w64-mingw32- --prefix="$work/sysroot" \
  --libdir=lib64 no-shared no-tests >/dev/null
# The posix thread model's compiler, as wheelfit itself uses (the default alternative is win32).
make -s -j"$(nproc)" CC=x86_64-w64-mingw32-gcc-posix build_libs >/dev/null
make -s install_dev >/dev/null
rm -rf "$sysroot"
mv "$work/sysroot" "$sysroot"
echo "build-openssl-mingw: OpenSSL $version for MinGW-w64 in $((SECONDS - start)) s" >&2
echo "$sysroot"

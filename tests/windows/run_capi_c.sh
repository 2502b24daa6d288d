#!/bin/sh
# run_capi_c.sh EMULATOR FARMGEN CAPI_EXE WORK: a local index (wheelfit-farmgen, under wine), then
# the C program against it through wheelfit.dll.
set -eu
run=$1 farmgen=$2 exe=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
winpath() { printf 'Z:%s' "$1" | tr / '\\'; }
"$run" "$farmgen" --out "$(winpath "$work/index")" --only flash_attn
"$run" "$exe" "$(winpath "$work/index")" flash_attn

#!/bin/sh
# check_exports.sh OBJDUMP PATTERN DLL...: each DLL's export table (objdump -p) holds at least one
# name and only names matching the extended regular expression PATTERN (no libstdc++, Boost or
# OpenSSL symbols leak out of a statically linked DLL).
set -eu
objdump=$1 pattern=$2
shift 2
status=0
for dll in "$@"; do
  names=$("$objdump" -p "$dll" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | sed -n 's/^[[:space:]]*\[[[:space:]]*[0-9]*\][[:space:]]*//p')
  if [ -z "$names" ]; then
    echo "$dll: exports nothing"; status=1; continue
  fi
  bad=$(printf '%s\n' "$names" | grep -Ev "$pattern" || true)
  if [ -n "$bad" ]; then
    echo "$dll: exports more than $pattern:"; printf '%s\n' "$bad" | head -20; status=1
  else
    echo "$dll: exports $(printf '%s\n' "$names" | tr '\n' ' ')"
  fi
done
exit $status

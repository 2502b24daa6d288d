#!/usr/bin/env bash
# ctest win.package: the Windows zip holds what the README says, every executable and DLL in it
# imports only Windows' own DLLs (all else is linked statically), and the unpacked wheelfit.exe
# runs under wine from its own folder and finds its plugins beside it.
#   check_zip.sh ZIP OBJDUMP WINE_RUN
set -euo pipefail
zip="$1" objdump="$2" wine_run="$3"
[[ -f "$zip" ]] || { echo "FAIL: $zip is missing (scripts/build-windows.sh packs it before the tests)"; exit 1; }
# Unpacked beside the zip, not in /tmp: a folder others may write to (as /tmp is, for wine, Everyone)
# is one wheelfit rightly refuses to load plugins from (decision 0035).
work="$(mktemp -d "$(dirname "$zip")/check.XXXXXX")"
trap 'rm -rf "$work"' EXIT
unzip -q "$zip" -d "$work"
top="$work/$(basename "$zip" .zip)"
fail=0
for entry in wheelfit.exe wheelfit-farmgen.exe wheelfit-probe.exe wheelfit.dll lib/libwheelfit.dll.a include/wheelfit/wheelfit.h \
             include/wheelfit/registry/plugin_abi.h plugins/wheelfit_backend_cuda.dll plugins/wheelfit_backend_rocm.dll \
             README.md COPYRIGHT.txt; do
  [[ -f "$top/$entry" ]] || { echo "FAIL: the zip has no $entry"; fail=1; }
done
# The DLLs every Windows 10 has (KnownDLLs and the API sets the MinGW runtime uses).
allowed='^(kernel32|user32|advapi32|shell32|ole32|oleaut32|msvcrt|ws2_32|mswsock|crypt32|bcrypt|ncrypt|secur32|winhttp|userenv|iphlpapi|ntdll|dbghelp|shlwapi|rpcrt4|version)\.dll$'
while IFS= read -r -d '' binary; do
  while read -r dll; do
    if ! [[ "${dll,,}" =~ $allowed ]]; then
      echo "FAIL: ${binary#"$top/"} imports $dll, which is not one of Windows' own DLLs"
      fail=1
    fi
  done < <("$objdump" -p "$binary" | sed -n 's/^\s*DLL Name: //p')
done < <(find "$top" \( -name '*.exe' -o -name '*.dll' \) -print0)
version="$("$wine_run" "$top/wheelfit.exe" --version | tr -d '\r')"
[[ "$version" == wheelfit* ]] || { echo "FAIL: the unpacked wheelfit.exe --version printed '$version'"; fail=1; }
plugins="$("$wine_run" "$top/wheelfit.exe" plugins 2>&1 | tr -d '\r' || true)"
for backend in cuda rocm; do
  grep -q "$backend" <<<"$plugins" || { echo "FAIL: the unpacked wheelfit.exe did not load its $backend plugin: $plugins"; fail=1; }
done
((fail == 0)) && echo "ok: $(unzip -l "$zip" | tail -1 | awk '{print $2}') files, imports only Windows' DLLs, runs from its folder"
exit $fail

#!/usr/bin/env bash
# Tests the bash completion of wheelfit (apps/wheelfit/completion/wheelfit.bash) without the
# bash-completion package: sources the script, sets COMP_WORDS / COMP_CWORD / COMP_LINE /
# COMP_POINT the way bash does for a command line, calls _wheelfit and checks COMPREPLY.
#
#   scripts/test_completion.sh [WHEELFIT_BINARY]
#
# WHEELFIT_COMPLETION=FILE tests that file instead (scripts/check_packages.sh: the packaged one).
# With a built wheelfit binary, it also checks that every option the usage text (wheelfit --help)
# names for a command is one the completion offers for that command. Prints one line per case and
# "N passed, M failed" at the end; exits 1 when a case failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
script="${WHEELFIT_COMPLETION:-$here/../apps/wheelfit/completion/wheelfit.bash}"
binary=${1-}

# Without bash-completion, whatever this shell has loaded: the script must fall back to
# COMP_WORDS / COMP_CWORD itself.
unset -f _init_completion _comp_initialize _get_comp_words_by_ref 2>/dev/null || true
# shellcheck source=apps/wheelfit/completion/wheelfit.bash
source "$script"

passed=0
failed=0
pass() { passed=$((passed + 1)); printf 'ok   %s\n' "$1"; }
fail() { failed=$((failed + 1)); printf 'FAIL %s\n' "$1"; shift; printf '     %s\n' "$@"; }

# Completes LINE as if TAB were pressed at its end; the candidates go to `got`, one per line,
# sorted. LINE is split into COMP_WORDS the way bash does it: at blanks outside quotes (a
# backslash-escaped blank stays in its word, the backslash too), and at '=' (COMP_WORDBREAKS),
# which becomes a word of its own.
complete_line() {
  local line=$1 word='' char quote='' i
  COMP_WORDS=()
  for ((i = 0; i < ${#line}; i++)); do
    char=${line:i:1}
    if [[ -n $quote ]]; then
      word+=$char
      [[ $char == "$quote" ]] && quote=''
    elif [[ $char == "\\" ]]; then
      word+=${line:i:2}
      i=$((i + 1))
    elif [[ $char == "'" || $char == '"' ]]; then
      word+=$char
      quote=$char
    elif [[ $char == ' ' || $char == '=' ]]; then
      [[ -n $word ]] && COMP_WORDS+=("$word")
      word=''
      [[ $char == '=' ]] && COMP_WORDS+=('=')
    else
      word+=$char
    fi
  done
  # The word under the cursor: the last one, or a new empty one after a blank or a '='.
  if [[ -n $word || $line == *' ' || $line == *'=' ]]; then COMP_WORDS+=("$word"); fi
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line
  COMP_POINT=${#line}
  COMPREPLY=()
  local rc=0
  _wheelfit wheelfit "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" || rc=$?
  if ((rc != 0)); then got="(_wheelfit returned $rc)"; return 0; fi
  got=''
  if ((${#COMPREPLY[@]})); then got=$(printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort); fi
}

# expect LINE WORD...: the completion of LINE is exactly these words (in any order).
expect() {
  local line=$1 want
  shift
  complete_line "$line"
  want=''
  if (($#)); then want=$(printf '%s\n' "$@" | LC_ALL=C sort); fi
  if [[ $got == "$want" ]]; then
    pass "'$line' -> ${*:-(nothing)}"
  else
    fail "'$line'" "expected: $(echo "${want:-(nothing)}" | tr '\n' ' ')" "got:      $(echo "${got:-(nothing)}" | tr '\n' ' ')"
  fi
}

# expect_has LINE WORD...: the completion of LINE has these words (and maybe others).
expect_has() {
  local line=$1 word missing=''
  shift
  complete_line "$line"
  for word in "$@"; do
    grep -qxF -- "$word" <<<"$got" || missing+=" $word"
  done
  if [[ -z $missing ]]; then pass "'$line' offers $*"; else fail "'$line'" "missing:$missing" "got: $(echo "$got" | tr '\n' ' ')"; fi
}

# --- commands -------------------------------------------------------------------------------
commands=(resolve plugins detect explain doctor cache download mirror check version help)
expect 'wheelfit ' "${commands[@]}"
expect 'wheelfit res' resolve
expect 'wheelfit che' check
expect 'wheelfit d' detect doctor download
expect 'wheelfit -' -h --help --version
expect 'wheelfit --v' --version
expect 'wheelfit nosuch --'

# --- each command's options, exactly as the option table (core/src/api/options_table.cpp) ---
resolve_values=(--index --policy --backend --python --retries --timeout --jobs --user-agent --cache-dir
  --cache-max-size --releases-repo --allow-insecure-host --combo --cert --client-cert --machine --machines
  --speed-limit --speed-time --max-time --proxy-auth)
resolve_switches=(--json --no-cache --offline --no-fallback)
expect 'wheelfit resolve -' "${resolve_values[@]}" --output -o --format --pixi-pins --torch-index "${resolve_switches[@]}" --inspect
expect 'wheelfit download -' "${resolve_values[@]}" --dir -d "${resolve_switches[@]}" --no-wait
expect 'wheelfit mirror -' "${resolve_values[@]}" --out --base-url --torch-index "${resolve_switches[@]}" --prune --no-wait --allow-unverified --with-torch
expect 'wheelfit plugins -' --json
expect 'wheelfit detect -' --python --backend --json
expect 'wheelfit explain -' --machine --python --policy --timeout --retries --user-agent \
  --allow-insecure-host --cert --client-cert --speed-limit --speed-time --max-time --proxy-auth --json
expect 'wheelfit doctor -' --python --machine --policy --site --url --proxy-auth --json
expect 'wheelfit cache -' --cache-dir --cache-max-size --json
expect 'wheelfit version -'
expect 'wheelfit resolve --mach' --machine --machines
expect 'wheelfit mirror --ba' --backend --base-url
expect 'wheelfit mirror --bas' --base-url
expect 'wheelfit resolve --json --no-f' --no-fallback

# --- option values --------------------------------------------------------------------------
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/machines" "$tmp/mirror" "$tmp/configs/sub" "$tmp/plain" "$tmp/my dir"
: >"$tmp/machines/a100.toml"
: >"$tmp/machines/a10g.json"
: >"$tmp/machines/h100.toml"
: >"$tmp/mirror.toml"
: >"$tmp/configs/comfy-env.toml"
: >"$tmp/configs/notes.txt"
: >"$tmp/plain/readme.txt"
: >"$tmp/plain/setup.cfg"
: >"$tmp/my dir/box.toml"
: >"$tmp/torch-2.8.0-cp312-cp312-linux_x86_64.whl"

expect "wheelfit resolve --machine $tmp/machines/a" "$tmp/machines/a100.toml" "$tmp/machines/a10g.json"
expect "wheelfit resolve --machine=$tmp/machines/a" "$tmp/machines/a100.toml" "$tmp/machines/a10g.json"
expect "wheelfit resolve --json --machine $tmp/machines/h" "$tmp/machines/h100.toml"
expect "wheelfit resolve --machine $tmp/mi" "$tmp/mirror" "$tmp/mirror.toml"
expect "wheelfit resolve --machine $tmp/my\\ dir/b" "$tmp/my dir/box.toml"
expect "wheelfit resolve --machine '$tmp/my d" "$tmp/my dir"
expect "wheelfit resolve --policy \"$tmp/my dir/" "$tmp/my dir/box.toml"
# in_dir DIR expect ...: runs the check with DIR as the current folder (relative names).
in_dir() {
  local dir=$1 back=$PWD
  shift
  cd "$dir"
  "$@"
  cd "$back"
}
in_dir "$tmp/machines" expect 'wheelfit resolve --machine a' a100.toml a10g.json
in_dir "$tmp/machines" expect 'wheelfit explain --policy h' h100.toml
expect "wheelfit resolve --machines $tmp/m" "$tmp/machines" "$tmp/mirror" "$tmp/my dir"
expect "wheelfit mirror --out $tmp/mi" "$tmp/mirror"
expect "wheelfit download -d $tmp/mi" "$tmp/mirror"
expect "wheelfit download --dir=$tmp/mi" "$tmp/mirror"
expect "wheelfit resolve --cache-dir $tmp/mi" "$tmp/mirror"
expect "wheelfit cache --cache-dir $tmp/mi" "$tmp/mirror"
expect "wheelfit resolve --index $tmp/mi" "$tmp/mirror"
expect "wheelfit doctor --site $tmp/mi" "$tmp/mirror"
expect "wheelfit resolve -o $tmp/mi" "$tmp/mirror" "$tmp/mirror.toml"
expect "wheelfit resolve --output $tmp/mi" "$tmp/mirror" "$tmp/mirror.toml"
expect "wheelfit resolve --policy $tmp/mi" "$tmp/mirror" "$tmp/mirror.toml"
expect "wheelfit resolve --cert $tmp/mi" "$tmp/mirror" "$tmp/mirror.toml"
expect "wheelfit explain --client-cert $tmp/mi" "$tmp/mirror" "$tmp/mirror.toml"
expect "wheelfit detect --python $tmp/mi" "$tmp/mirror" "$tmp/mirror.toml"
expect 'wheelfit resolve --backend c' cuda cpu
expect 'wheelfit resolve --backend=c' cuda cpu
expect 'wheelfit detect --backend ' cuda rocm cpu
expect 'wheelfit mirror --backend r' rocm
expect 'wheelfit resolve --proxy-auth ' auto basic negotiate none
expect 'wheelfit doctor --proxy-auth=n' negotiate none
expect 'wheelfit resolve --timeout '
expect 'wheelfit resolve --jobs 4 --combo '
expect 'wheelfit mirror --base-url '
expect 'wheelfit resolve --user-agent -'
expect 'wheelfit resolve --no-cache --inspect -o' -o
in_dir "$tmp/configs" expect 'wheelfit download -o ' comfy-env.toml sub
expect 'wheelfit resolve -- --ba'

# --- plain words ----------------------------------------------------------------------------
expect 'wheelfit cache ' info prune clean
expect 'wheelfit cache p' prune
expect 'wheelfit cache --cache-dir /tmp ' info prune clean
expect 'wheelfit cache info '
expect 'wheelfit plugins '
in_dir "$tmp/configs" expect 'wheelfit resolve ' comfy-env.toml sub
in_dir "$tmp/configs" expect 'wheelfit resolve --machine m.toml ' comfy-env.toml sub
in_dir "$tmp/configs" expect 'wheelfit download -d out c' comfy-env.toml
in_dir "$tmp/configs" expect 'wheelfit mirror --out m --prune comfy-env.toml ' comfy-env.toml sub
in_dir "$tmp/configs" expect 'wheelfit resolve -- -'
in_dir "$tmp/plain" expect 'wheelfit resolve ' readme.txt setup.cfg
in_dir "$tmp/plain" expect 'wheelfit resolve r' readme.txt
in_dir "$tmp" expect 'wheelfit explain t' torch-2.8.0-cp312-cp312-linux_x86_64.whl
in_dir "$tmp" expect 'wheelfit explain torch.whl '

# --- the usage text against the completion (needs a built binary) ---------------------------
# wheelfit has no per-command --help today: parse_args rejects "--help" as an unknown option
# (exit 2), and every command's options are in the one usage text `wheelfit --help` prints
# (api::options::usage(), from the option table). So for each command, `wheelfit COMMAND --help`
# is tried first and used when it succeeds with a text of its own; otherwise the options are
# taken from the top-level usage: its "commands:" list, its "<command> options" sections, its "network options" section (options
# of resolve, download and mirror: README "Network") and its lines "resolve --flag ...".

# The options named in TEXT ("-x" or "--word-word", not inside a longer word such as
# sha256-verified), one per line, sorted, each once.
options_in() {
  grep -oE '(^|[^A-Za-z0-9_-])--?[A-Za-z][A-Za-z0-9-]*' <<<"$1" | sed -E 's/^[^-]*//' | LC_ALL=C sort -u
}

# The option column of a help line: for a line that starts (after its indentation) with an
# option, or with "resolve --...", the text before the gap of two blanks that starts the
# description; nothing for other lines. (Descriptions mention other options: "a valid --machine
# file" in detect's --json line is not an option of detect.)
option_column() {
  local line=$1
  line=${line#"${line%%[! ]*}"}
  [[ $line == -* || $line =~ ^[a-z]+\ - ]] || return 0
  printf '%s\n' "${line%%  *}"
}

# The part of the top-level usage text USAGE about COMMAND: its entry in "commands:" (whole: the
# synopsis "download [CONFIG...] -d DIR", "(--json: one object)"), the headers of its sections
# ("download options (and the resolve options: --index, ...)") and the option columns of its
# sections' lines.
usage_part() {
  local usage=$1 command=$2 line section='' entry=''
  while IFS= read -r line; do
    if [[ $line =~ ^commands: ]]; then
      section=commands
      continue
    elif [[ $line =~ ^network\ options ]]; then
      section=network
      continue
    elif [[ $line =~ ^([a-z]+)\ options ]]; then
      section=${BASH_REMATCH[1]}
      [[ $section == "$command" ]] && printf '%s\n' "$line"
      continue
    elif [[ $line =~ ^([a-z]+)\ -- ]]; then
      section=${BASH_REMATCH[1]}
    elif [[ $line =~ ^exit\ codes: ]]; then
      section=''
    fi
    if [[ $section == commands ]]; then
      [[ $line =~ ^\ \ ([a-z]+) ]] && entry=${BASH_REMATCH[1]}
      [[ $entry == "$command" ]] && printf '%s\n' "$line"
    elif [[ $section == "$command" ]] ||
      [[ $section == network && ( $command == resolve || $command == download || $command == mirror ) ]]; then
      option_column "$line"
    fi
  done <<<"$usage"
}

usage_check() {
  local usage command help text source flag missing count listed name line
  if ! usage=$("$binary" --help); then
    fail "usage: $binary --help" "it failed"
    return 0
  fi
  for command in "${commands[@]}"; do
    [[ $command == help || $command == version ]] && continue
    if help=$("$binary" "$command" --help 2>/dev/null) && [[ -n $help && $help != "$usage" ]]; then
      text=$(while IFS= read -r line; do
        if [[ $line == usage:* ]]; then printf '%s\n' "$line"; else option_column "$line"; fi
      done <<<"$help")
      source="wheelfit $command --help"
    else
      text=$(usage_part "$usage" "$command")
      source="wheelfit --help"
    fi
    complete_line "wheelfit $command -"
    missing=''
    count=0
    while IFS= read -r flag; do
      [[ -n $flag ]] || continue
      count=$((count + 1))
      grep -qxF -- "$flag" <<<"$got" || missing+=" $flag"
    done < <(options_in "$text")
    if ((count == 0)); then
      fail "usage: $command" "$source names no option for $command (did the usage format change?)"
    elif [[ -n $missing ]]; then
      fail "usage: $command" "named by $source but not completed:$missing"
    else
      pass "usage: the $count options $source names for $command are completed"
    fi
  done
  # The commands the usage text lists are the ones completed.
  listed=$(sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\).*/\1/p' <<<"$usage")
  complete_line 'wheelfit '
  missing=''
  for name in $listed; do
    grep -qxF -- "$name" <<<"$got" || missing+=" $name"
  done
  if [[ -n $missing ]]; then
    fail "usage: commands" "listed by wheelfit --help but not completed:$missing"
  else
    pass "usage: every command wheelfit --help lists is completed ($(tr '\n' ' ' <<<"$listed"))"
  fi
}

if [[ -z $binary ]]; then
  echo "skip usage check: no wheelfit binary given (scripts/test_completion.sh [WHEELFIT_BINARY])"
elif [[ ! -x $binary ]]; then
  fail "usage check" "$binary is not an executable file"
else
  usage_check
fi

echo "$passed passed, $failed failed"
((failed == 0))

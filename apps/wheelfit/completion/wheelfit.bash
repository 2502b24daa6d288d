# shellcheck shell=bash
#
# Bash completion for wheelfit (install as /usr/share/bash-completion/completions/wheelfit, or
# source this file from ~/.bashrc).
#
# What it completes:
#   - the command (first word): resolve, plugins, detect, explain, doctor, cache, download,
#     mirror, check, version, help, and the options -h, --help, --version;
#   - the options of each command, exactly the ones that command accepts (the option table,
#     core/src/api/options_table.cpp; tests/cli/test_cli_options.cpp checks this script against
#     it), short forms included (-o for resolve, -d for download);
#   - the value after an option: file names after --machine, --policy, --cert, --client-cert,
#     -o/--output and --python; folder names after --machines, --cache-dir, -d/--dir, --out,
#     --site and --index (a URL or a folder: folders are offered); cuda, rocm and cpu after
#     --backend; auto, basic, negotiate and none after --proxy-auth; nothing after options that take a number, a size or free text. Both
#     "--flag VALUE" and "--flag=VALUE" are understood;
#   - the other words: comfy-env.toml configs for resolve, download and mirror (*.toml files and
#     folders first, every file when no *.toml matches), a wheel for explain (*.whl the same
#     way), any file for check (its locks: *.toml and *.txt), and the action (info, prune,
#     clean) for cache.
#
# It uses bash-completion's _comp_initialize or _init_completion when they are loaded, and reads
# COMP_WORDS / COMP_CWORD itself when they are not: the bash-completion package is not needed.
# It runs no external command, only bash builtins (compgen, compopt, mapfile).

# Every command wheelfit takes as its first word (apps/wheelfit/main.cpp).
_wheelfit_commands='resolve plugins detect explain doctor cache download mirror check version help'

# The value options resolve shares with download and mirror (the option table's rows for all
# three), then the switches.
_wheelfit_resolve_values='--index --machine --machines --policy --backend --python --retries --timeout
  --jobs --user-agent --cache-dir --cache-max-size --releases-repo --allow-insecure-host --combo
  --cert --client-cert --speed-limit --speed-time --max-time --proxy-auth'
_wheelfit_resolve_switches='--json --no-cache --offline --no-fallback'

# The value options of check: resolve's, less those that choose a combo.
_wheelfit_check_values='--index --machine --machines --policy --backend --python --retries --timeout
  --jobs --user-agent --cache-dir --cache-max-size --releases-repo --allow-insecure-host
  --cert --client-cert --speed-limit --speed-time --max-time --proxy-auth'

# Sets `values` (options that take a value, short forms included) and `switches` (options that
# take none) for the command $1; returns 1 for a command with no options, or an unknown one.
_wheelfit_options() {
  case $1 in
    resolve)
      values="$_wheelfit_resolve_values --output -o --format --pixi-pins --torch-index"
      switches="$_wheelfit_resolve_switches --inspect"
      ;;
    download)
      values="$_wheelfit_resolve_values --dir -d"
      switches="$_wheelfit_resolve_switches --no-wait"
      ;;
    mirror)
      values="$_wheelfit_resolve_values --out --base-url --torch-index"
      switches="$_wheelfit_resolve_switches --prune --no-wait --allow-unverified --with-torch"
      ;;
    check)
      values="$_wheelfit_check_values"
      switches='--json --no-cache --offline'
      ;;
    plugins)
      values=''
      switches='--json'
      ;;
    detect)
      values='--python --backend'
      switches='--json'
      ;;
    explain)
      values='--machine --python --policy --timeout --retries --user-agent --allow-insecure-host
        --cert --client-cert --speed-limit --speed-time --max-time --proxy-auth'
      switches='--json'
      ;;
    doctor)
      values='--python --machine --policy --site --url --proxy-auth'
      switches='--json'
      ;;
    cache)
      values='--cache-dir --cache-max-size'
      switches='--json'
      ;;
    *) return 1 ;;
  esac
  return 0
}

# True when the word $1 is one of the space- or newline-separated words of $2.
_wheelfit_in() {
  local word
  for word in $2; do
    [[ $word == "$1" ]] && return 0
  done
  return 1
}

# The text a word as typed stands for: quotes and backslash escapes removed ("my\ dir" and
# 'my dir' both give my dir), so that compgen matches real file names. Result in `REPLY`.
_wheelfit_dequote() {
  local word=$1 char quote='' i
  REPLY=''
  for ((i = 0; i < ${#word}; i++)); do
    char=${word:i:1}
    if [[ $quote == "'" ]]; then
      if [[ $char == "'" ]]; then quote=''; else REPLY+=$char; fi
    elif [[ $char == "\\" ]] && ((i + 1 < ${#word})); then
      ((i++))
      REPLY+=${word:i:1}
    elif [[ -n $quote && $char == "$quote" ]] || [[ -z $quote && ( $char == "'" || $char == '"' ) ]]; then
      if [[ -n $quote ]]; then quote=''; else quote=$char; fi
    else
      REPLY+=$char
    fi
  done
}

# Adds to COMPREPLY the paths that complete `cur`: $1 is "files", "dirs", or a file extension
# ("toml": those files and the folders, or every file when no such file matches).
_wheelfit_paths() {
  local REPLY
  _wheelfit_dequote "$cur"
  local word=$REPLY
  local -a found=()
  case $1 in
    files) mapfile -t found < <(compgen -f -- "$word") ;;
    dirs) mapfile -t found < <(compgen -d -- "$word") ;;
    *)
      mapfile -t found < <(compgen -f -X "!*.$1" -- "$word")
      if ((${#found[@]})); then
        mapfile -t -O "${#found[@]}" found < <(compgen -d -- "$word")
      else
        mapfile -t found < <(compgen -f -- "$word")
      fi
      ;;
  esac
  # Let readline quote the names and mark folders with a slash (only possible during a real
  # completion: compopt fails when the function is called directly, as the tests do).
  compopt -o filenames 2>/dev/null || true
  COMPREPLY+=("${found[@]}")
}

# Adds to COMPREPLY the words of $1 that start with `cur`.
_wheelfit_words() {
  local -a found=()
  mapfile -t found < <(compgen -W "$1" -- "$cur")
  COMPREPLY+=("${found[@]}")
}

# Completes the value of the option $1 (a long form or a short alias).
_wheelfit_value() {
  case $1 in
    --backend) _wheelfit_words 'cuda rocm cpu' ;;
    --proxy-auth) _wheelfit_words 'auto basic negotiate none' ;;
    --machine | --policy | --cert | --client-cert | --output | -o | --python) _wheelfit_paths files ;;
    --machines | --cache-dir | --dir | -d | --out | --site | --index) _wheelfit_paths dirs ;;
    *) ;;  # a number, a size, a URL, a combo, free text: nothing to offer
  esac
}

# Without bash-completion: `words`, `cword`, `cur` and `prev` from COMP_WORDS / COMP_CWORD, with
# "--flag", "=", "value" (bash splits words at '=') joined back into "--flag=value".
_wheelfit_split_words() {
  local i word last
  words=()
  cword=0
  for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
    word=${COMP_WORDS[i]}
    last=$((${#words[@]} - 1))
    if ((last >= 1)) && [[ ${words[last]} == -* ]] &&
      { [[ $word == '=' && ${words[last]} != *=* ]] || [[ ${COMP_WORDS[i - 1]} == '=' && ${words[last]} == *= ]]; }; then
      words[last]+=$word
    else
      words+=("$word")
    fi
    ((i == COMP_CWORD)) && cword=$((${#words[@]} - 1))
  done
  ((COMP_CWORD >= ${#COMP_WORDS[@]})) && { words+=(''); cword=$((${#words[@]} - 1)); }
  cur=${words[cword]-}
  prev=''
  ((cword > 0)) && prev=${words[cword - 1]}
  return 0
}

_wheelfit() {
  local cur='' prev='' cword=0 split=false was_split='' values='' switches=''
  # shellcheck disable=SC2034  # comp_args: set by _comp_initialize (bash-completion 2.12+)
  local -a words=() comp_args=()
  COMPREPLY=()
  if declare -F _comp_initialize >/dev/null; then
    _comp_initialize -s -- "$@" || return 0
    [[ -n $was_split ]] && split=true
  elif declare -F _init_completion >/dev/null; then
    _init_completion -s || return 0
  else
    _wheelfit_split_words
  fi
  # "--flag=value" (and "-o=value", which wheelfit accepts too) not split yet: split it.
  if [[ $split != true && $cur == -?*=* ]]; then
    prev=${cur%%=*}
    cur=${cur#*=}
    split=true
  fi

  # The first word: the command, or the top-level options.
  if ((cword <= 1)); then
    if [[ $cur == -* ]]; then
      _wheelfit_words '-h --help --version'
    else
      _wheelfit_words "$_wheelfit_commands"
    fi
    return 0
  fi

  local command=${words[1]}
  _wheelfit_options "$command" || return 0

  # The words before this one, read the way wheelfit reads them (cli.cpp, parse_args): how many
  # plain words there are, whether "--" ended the options, and whether this word is the value of
  # the option before it.
  local i word plain=0 options_ended=false value_of=''
  for ((i = 2; i < cword; i++)); do
    word=${words[i]}
    if [[ $options_ended == true || $word == - || $word != -* ]]; then
      ((++plain))
    elif [[ $word == -- ]]; then
      options_ended=true
    elif [[ $word != *=* ]] && _wheelfit_in "$word" "$values"; then
      if ((i + 1 == cword)); then value_of=$word; fi
      ((++i))  # skip its value
    fi
  done

  if [[ $options_ended == false && $split == true ]]; then
    _wheelfit_in "$prev" "$values" || return 0
    _wheelfit_value "$prev"
    # With '=' not a word break, readline replaces the whole "--flag=value": keep the "--flag=".
    if [[ $COMP_WORDBREAKS != *=* ]]; then
      for ((i = 0; i < ${#COMPREPLY[@]}; i++)); do COMPREPLY[i]="$prev=${COMPREPLY[i]}"; done
    fi
    return 0
  fi
  if [[ -n $value_of ]]; then
    _wheelfit_value "$value_of"
    return 0
  fi

  if [[ $options_ended == false && $cur == -* ]]; then
    _wheelfit_words "$values $switches"
    return 0
  fi

  case $command in
    resolve | download | mirror) _wheelfit_paths toml ;;
    check) _wheelfit_paths files ;;
    explain) ((plain == 0)) && _wheelfit_paths whl ;;
    cache) ((plain == 0)) && _wheelfit_words 'info prune clean' ;;
    *) ;;
  esac
  return 0
}

complete -F _wheelfit wheelfit

#!/usr/bin/env bash
# packaging_bash_completion: the bash completion must know exactly the subcommands and options that
# `opscope-cli --help` and `opscope-cli SUBCOMMAND --help` list, and the values of every option
# whose help names its choices ({a,b,c}); then a few completions are run as bash would run them.
# Usage: check-bash-completion.sh OPSCOPE_CLI COMPLETION_FILE
set -uo pipefail
cli=$1
completion=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# shellcheck source=packaging/opscope-cli.bash-completion
source "$completion" || { echo "FAIL: cannot source $completion"; exit 1; }
declare -F _opscope_cli >/dev/null || { echo "FAIL: no _opscope_cli function"; exit 1; }
complete -p opscope-cli >/dev/null 2>&1 || bad "completion is not registered for opscope-cli"

# Lines of a help section ("Options:", "Subcommands:") up to the next blank line.
section() { awk -v s="$2" '$0 == s { on = 1; next } on && /^$/ { exit } on' <<<"$1"; }
# Option names of an "Options:" section: "  -o,--output TEXT ..." -> -o --output
option_names() {
  section "$1" "Options:" | awk '/^  -/ { n = split($1, a, ","); for (i = 1; i <= n; i++) { sub(/\{.*$/, "", a[i]); print a[i] } }' | sort -u
}
words() { tr -s ' \n\t' '\n' <<<"$1" | sed '/^$/d' | sort -u; }
same_set() { # same_set WHAT EXPECTED ACTUAL
  local missing extra
  missing=$(comm -23 <(words "$2") <(words "$3") | tr '\n' ' ')
  extra=$(comm -13 <(words "$2") <(words "$3") | tr '\n' ' ')
  [ -z "$missing" ] || bad "$1: in --help but not in the completion: $missing"
  [ -z "$extra" ] || bad "$1: in the completion but not in --help: $extra"
}

top=$("$cli" --help) || { echo "FAIL: $cli --help failed"; exit 1; }
subs=$(section "$top" "Subcommands:" | awk '/^  [a-z]/ { print $1 }')
[ -n "$subs" ] || { echo "FAIL: no subcommands in $cli --help"; exit 1; }
same_set "subcommands" "$subs" "$(_opscope_cli_subcommands)"
same_set "opscope-cli options" "$(option_names "$top")" "$(_opscope_cli_options "")"

checked=0
choices=0
for sub in $subs; do
  help=$("$cli" "$sub" --help) || { bad "$cli $sub --help failed"; continue; }
  opts=$(option_names "$help")
  same_set "$sub options" "$opts" "$(_opscope_cli_options "$sub")"
  checked=$((checked + $(wc -w <<<"$opts")))
  # Options that take a value must complete as such, flags must not.
  while IFS= read -r line; do
    line=${line#"${line%%[! ]*}"}  # leading blanks
    names=${line%% *}; names=${names//,/ }
    rest=${line#"${line%% *}"}
    for opt in $names; do
      opt=${opt%%\{*}
      [[ $opt == -h || $opt == --help ]] && continue
      # (--opt{DEFAULT} is a flag whose value, if any, follows '=': completed as a flag)
      if [[ $rest =~ ^[[:space:]]+(TEXT|INT|UINT|FLOAT) ]]; then
        _opscope_cli_values "$sub" "$opt" >/dev/null || bad "$sub $opt takes a value but completes as a flag"
      else
        ! _opscope_cli_values "$sub" "$opt" >/dev/null || bad "$sub $opt is a flag but completes a value"
      fi
      # TEXT:{a,b,c}: the completion offers exactly those values
      if [[ $rest =~ :\{([a-z,-]+)\} ]]; then
        choices=$((choices + 1))
        same_set "$sub $opt values" "${BASH_REMATCH[1]//,/ }" "$(_opscope_cli_values "$sub" "$opt")"
      fi
    done
  done < <(section "$help" "Options:" | grep -E '^  -')
done

# A few completions, the way bash calls the function: COMP_WORDS split as readline splits the
# line (at blanks and at '='), without bash-completion's helpers (the completion works either way).
expect() { # expect LINE EXPECTED: the sorted completions of the last word of LINE
  local line=$1 got
  read -ra COMP_WORDS <<<"${line//=/ = }"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=$line; COMP_POINT=${#line}
  COMPREPLY=()
  _opscope_cli opscope-cli "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "$2" ] || bad "completing '$line': expected '$2', got '$got'"
}
expect "$cli in" "info"
expect "$cli optimize --le" "--level"
expect "$cli optimize --level " "all basic extended layout"
expect "$cli optimize --target o" "onnx ort"
expect "$cli optimize --target=" "none onnx ort"
expect "$cli run --optimize=e" "extended"
expect "$cli profile --schedule serial,gr" "serial,greedy"
expect "$cli optimize --passes dead-code" "dead-code-elimination"
expect "$cli devices --" "--help --json"

echo "checked ${checked} options (${choices} with choices) of $(wc -w <<<"$subs") subcommands against $completion"
[ $fail -eq 0 ] && echo "PASS" || echo "FAIL"
exit $fail

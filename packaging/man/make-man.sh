#!/bin/sh
# Writes a man page (gzipped, as Debian installs them) with help2man from a program's --help and
# --version. With --subcommands, it adds a COMMANDS section made from `PROGRAM SUB --help` of every
# subcommand listed under "Subcommands:" (CLI11's help layout), so the page shows every option.
# Usage: make-man.sh HELP2MAN PROGRAM NAME INCLUDE OUTPUT.1.gz [--subcommands]
# PROGRAM runs by its name (its folder first on PATH) so that usage lines show no build paths.
set -eu
help2man=$1 program=$2 name=$3 include=$4 output=$5
subcommands=${6:-}
dir=$(dirname "$program")
prog=$(basename "$program")
PATH=$dir:$PATH
export PATH
out=${output%.gz}
tmp=$out.commands.h2m
: >"$tmp"

if [ "$subcommands" = --subcommands ]; then
  subs=$("$prog" --help | awk '$0 == "Subcommands:" { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
  [ -n "$subs" ] || { echo "make-man: no subcommands in '$prog --help'" >&2; exit 1; }
  echo "[COMMANDS]" >>"$tmp"
  for sub in $subs; do
    "$prog" "$sub" --help >"$out.help" || { echo "make-man: '$prog $sub --help' failed" >&2; exit 1; }
    {
      printf '.SS "%s %s"\n' "$prog" "$sub" | sed 's/-/\\-/g'
      # line 1: what it does; "Usage: ..." the synopsis; then Positionals:/Options: entries of
      # "  LEFT   description" (the description on the next lines when LEFT is long).
      awk '
        function esc(s) { gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); if (s ~ /^[.'"'"']/) s = "\\&" s; return s }
        NR == 1 { print esc($0); next }
        /^Usage: / { sub(/^Usage: /, ""); print ".PP"; print "\\fB" esc($0) "\\fR"; next }
        /^(Positionals|Options):$/ { section = 1; next }
        /^Exit codes:/ { section = 0; next }
        /^$/ { next }
        section && /^  [^ ]/ {
          line = substr($0, 3)
          if (match(line, /  +/)) { left = substr(line, 1, RSTART - 1); desc = substr(line, RSTART + RLENGTH) }
          else { left = line; desc = "" }
          print ".TP"; print "\\fB" esc(left) "\\fR"
          if (desc != "") print esc(desc)
          next
        }
        section && /^   +/ { sub(/^ +/, ""); print esc($0); next }
      ' "$out.help"
    } >>"$tmp"
  done
  rm -f "$out.help"
fi

set -- --include="$include"
[ -s "$tmp" ] && set -- "$@" --include="$tmp"
"$help2man" --no-info --name="$name" "$@" --output="$out" "$prog"
rm -f "$tmp"
gzip -9nf "$out"

#!/bin/sh
# packaging_desktop_files: the desktop entry, the AppStream metainfo and the MIME type are valid
# and agree with each other and with the project.
# Usage: check-desktop-files.sh PACKAGING_DIR VERSION DESKTOP_FILE_VALIDATE APPSTREAMCLI UPDATE_MIME_DATABASE
# (a tool given as "" or ...-NOTFOUND is a failure: scripts/setup.sh installs them all)
set -u
dir=$1 version=$2 dfv=$3 asc=$4 umd=$5
desktop=$dir/io.opscope.opscope.desktop
metainfo=$dir/io.opscope.opscope.metainfo.xml
mime=$dir/opscope-mime.xml
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tool() { case $2 in "" | *-NOTFOUND) bad "$1 is missing (scripts/setup.sh installs it)"; return 1 ;; esac; }

if tool desktop-file-validate "$dfv"; then
  out=$("$dfv" "$desktop" 2>&1); rc=$?
  [ -z "$out" ] || echo "$out"
  if [ $rc -ne 0 ] || [ -n "$out" ]; then bad "desktop-file-validate $desktop (hints count too)"; fi
fi
if tool appstreamcli "$asc"; then
  "$asc" validate --no-net --pedantic "$metainfo" || bad "appstreamcli validate --no-net $metainfo"
fi

# The metainfo's launchable is the desktop file, its newest release the project's version.
launchable=$(sed -n 's|.*<launchable type="desktop-id">\(.*\)</launchable>.*|\1|p' "$metainfo")
[ "$launchable" = "$(basename "$desktop")" ] || bad "launchable '$launchable' is not $(basename "$desktop")"
id=$(sed -n 's|.*<id>\(.*\)</id>.*|\1|p' "$metainfo")
[ "$id.desktop" = "$(basename "$desktop")" ] || bad "component id '$id' does not match $(basename "$desktop")"
release=$(sed -n 's|.*<release version="\([^"]*\)".*|\1|p' "$metainfo" | head -n 1)
[ "$release" = "$version" ] || bad "newest <release> in the metainfo is '$release', the project is $version"

# The icon the desktop file names is there as SVG and as every PNG size, at that size.
icon=$(sed -n 's/^Icon=//p' "$desktop")
[ -s "$dir/icons/$icon.svg" ] || bad "no icons/$icon.svg"
for size in 16 32 48 64 128 256; do
  png=$dir/icons/$icon-$size.png
  [ -s "$png" ] || { bad "no $png (scripts/make-icons.sh)"; continue; }
  # PNG: the IHDR width and height are bytes 16..23, big-endian
  wh=$(od -An -tu1 -j16 -N8 "$png" | awk '{ print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8 }')
  [ "$wh" = "${size}x$size" ] || bad "$png is $wh, not ${size}x$size"
done

# Every MIME type the desktop file opens is defined, and the database takes the definition.
if tool update-mime-database "$umd"; then
  tmp=$(mktemp -d)
  mkdir -p "$tmp/mime/packages"
  cp "$mime" "$tmp/mime/packages/"
  if XDG_DATA_HOME=$tmp XDG_DATA_DIRS=$tmp "$umd" "$tmp/mime" >"$tmp/err" 2>&1 && [ ! -s "$tmp/err" ]; then
    for type in $(sed -n 's/^MimeType=//p' "$desktop" | tr ';' ' '); do
      grep -q "^$type\$" "$tmp/mime/types" || bad "MimeType $type of the desktop file is not defined in $(basename "$mime")"
    done
    grep -q ':application/x-onnx:\*\.onnx$' "$tmp/mime/globs2" || bad "no *.onnx glob for application/x-onnx"
  else
    cat "$tmp/err"; bad "update-mime-database rejects $(basename "$mime")"
  fi
  rm -rf "$tmp"
fi

[ $fail -eq 0 ] && echo "PASS: $(basename "$desktop"), $(basename "$metainfo"), $(basename "$mime"), icons" || echo FAIL
exit $fail

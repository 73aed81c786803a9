#!/bin/sh
# Renders packaging/icons/opscope.svg to the PNG sizes of the hicolor theme
# (packaging/icons/opscope-SIZE.png, committed; the package installs them). Needs rsvg-convert
# (apt-get install librsvg2-bin). Run after editing the SVG.
set -eu
cd "$(dirname "$0")/../packaging/icons"
command -v rsvg-convert >/dev/null || { echo "make-icons: needs rsvg-convert (librsvg2-bin)" >&2; exit 1; }
for size in 16 32 48 64 128 256; do
  rsvg-convert -w "$size" -h "$size" opscope.svg -o "opscope-$size.png"
done
echo "wrote packaging/icons/opscope-{16,32,48,64,128,256}.png"

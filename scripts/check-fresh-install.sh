#!/usr/bin/env bash
# Proves that a fresh Debian 12 machine works and that the package installs:
#
#   1. debootstraps a bookworm minbase root (from a cached debootstrap tarball: only the
#      downloaded base packages are cached, never a root with anything installed);
#   2. puts a clean `git clone` of the repository (HEAD or --ref) in it and runs, inside a chroot,
#      the two commands of README.md's first ```sh block exactly as written (read from the README,
#      so this script cannot drift from it): the app one with QT_QPA_PLATFORM=offscreen and
#      `--screenshot FILE` appended so the app exits, then the test one;
#   3. builds the Debian package there (`cd build && cpack -G DEB`);
#   4. in a second fresh root (same tarball) installs it with
#      `apt-get install -y --no-install-recommends ./opscope_*.deb` and checks the installed
#      opscope-cli and the app (offscreen) from their installed paths.
#
# Usage: sudo scripts/check-fresh-install.sh [--ref REF] [--skip-tests] [--keep]
#   --ref REF      test this commit/branch/tag instead of HEAD (uncommitted changes are never tested)
#   --skip-tests   skip the README's test command (a quick packaging-only run)
#   --keep         leave the roots in .cache/fresh/ for inspection (unmounted)
#
# Everything it writes is under .cache/fresh/ in the repository (ignored by git). apt in the roots
# uses the host's mirror configuration (/etc/apt/sources.list{,.d}). Needs root and debootstrap.
# A full run builds opscope from scratch and runs the test suite: expect 25+ minutes on 2 cores.
# shellcheck disable=SC2317  # the step functions are called through step "$@"
set -uo pipefail

usage() { sed -n '2,/^# shellcheck/{/^# shellcheck/d;s/^# \{0,1\}//p}' "$0"; }

ref=HEAD
skip_tests=0
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --ref) [ $# -ge 2 ] || { echo "check-fresh-install: --ref needs a value" >&2; exit 2; }
           ref=$2; shift 2 ;;
    --ref=*) ref=${1#--ref=}; shift ;;
    --skip-tests) skip_tests=1; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "check-fresh-install: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

die() { echo "check-fresh-install: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot and mount need it)"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
command -v git >/dev/null || die "git is missing"

repo=$(git -C "$(dirname "$(readlink -f "$0")")" rev-parse --show-toplevel) || die "not in a git checkout"
work=$repo/.cache/fresh
# Every path this script writes or removes starts with $work; refuse anything odd.
case "$work" in /?*/.cache/fresh) ;; *) die "unexpected work folder '$work'" ;; esac
git -C "$repo" check-ignore -q "$work" || die "$work is not ignored by git"
sha=$(git -C "$repo" rev-parse --verify --quiet "$ref^{commit}") || die "unknown ref '$ref'"

arch=$(dpkg --print-architecture)
suite=bookworm
tarball=$work/debootstrap-$suite-minbase-$arch.tar.gz
root1=$work/root-build
root2=$work/root-install
logs=$work/logs
deb_dir=$work/deb
src=/root/opscope  # the clone's path inside root-build

mkdir -p "$work"
exec 9>"$work/lock"
flock -n 9 || die "another check-fresh-install.sh is running on this folder"

# --- safety: mounts and removal confined to $work -------------------------------------------

mounts_under() { # mount points under $1, deepest first
  awk -v p="$1/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -u -r
}
unmount_all() {
  local m
  for _ in 1 2 3; do
    [ -n "$(mounts_under "$work")" ] || return 0
    for m in $(mounts_under "$work"); do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
  done
  [ -z "$(mounts_under "$work")" ] || { echo "check-fresh-install: still mounted: $(mounts_under "$work" | tr '\n' ' ')" >&2; return 1; }
}
remove_root() {
  local d=$1
  case "$d" in "$work"/root-*) ;; *) die "refusing to remove '$d'" ;; esac
  [ -e "$d" ] || return 0
  [ -z "$(mounts_under "$d")" ] || die "refusing to remove $d: it still has mounts"
  rm -rf --one-file-system -- "$d"
}
cleanup() {
  unmount_all
  if [ "$keep" -eq 0 ]; then
    remove_root "$root1"; remove_root "$root2"
  else
    echo "kept (unmounted): $root1 $root2"
  fi
}
trap cleanup EXIT
trap 'echo "== INTERRUPTED" >&2; exit 130' INT TERM

mount_root() { # /proc, /sys, /dev (+ /dev/pts, /dev/shm) into a root, slaves of the host's
  local r=$1
  mount -t proc proc "$r/proc" &&
    mount -t sysfs sysfs "$r/sys" &&
    mount --rbind /dev "$r/dev" &&
    { mount --make-rslave "$r/dev" 2>/dev/null || true; }
}

# The host's apt mirror configuration, and its name resolution, into a root.
configure_apt() {
  local r=$1 f
  rm -f "$r/etc/apt/sources.list"
  rm -f "$r"/etc/apt/sources.list.d/*.list "$r"/etc/apt/sources.list.d/*.sources
  [ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$r/etc/apt/sources.list"
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && cp "$f" "$r/etc/apt/sources.list.d/"
  done
  # Acquire settings (proxy, validity of snapshot mirrors) belong to the mirror configuration.
  for f in /etc/apt/apt.conf /etc/apt/apt.conf.d/*; do
    [ -f "$f" ] && grep -qE '^[[:space:]]*Acquire' "$f" && cp "$f" "$r${f}"
  done
  cp -L /etc/resolv.conf "$r/etc/resolv.conf"
  cp /etc/hosts "$r/etc/hosts"
}

# The first Debian mirror of the host's apt configuration (for debootstrap's downloads).
host_mirror() {
  local m
  m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
        awk 'BEGIN{RS=""} /Suites:[^\n]*'"$suite"'([ \n]|$)/ && /Types:[^\n]*deb([ \n]|$)/ {
               if (match($0, /URIs:[ \t]*[^ \t\n]+/)) { s = substr($0, RSTART, RLENGTH); sub(/URIs:[ \t]*/, "", s); print s; exit } }')
  [ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++;
                           if ($(i+1) == "'"$suite"'") { print $i; exit } }')
  echo "${m:-http://deb.debian.org/debian}"
}

in_root() { # in_root ROOT CMD: bash -c CMD in the chroot with a clean, fresh-login environment
  local r=$1; shift
  chroot "$r" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM=dumb \
    LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive /bin/bash -o pipefail -c "$1"
}

# --- steps ----------------------------------------------------------------------------------

names=(); results=(); times=()
failed=0
step_no=0
step() { # step NAME FUNCTION...: runs it, logs to $logs/NN-name.log, records time and result
  local name=$1; shift
  step_no=$((step_no + 1))
  local log
  log=$logs/$(printf '%02d' "$step_no")-$(echo "$name" | tr -c 'A-Za-z0-9\n' '-' | tr -s '-' | sed 's/-$//').log
  printf '[%s] %-58s ' "$(date +%T)" "$name"
  local t0=$SECONDS rc
  "$@" > "$log" 2>&1
  rc=$?
  local dt=$((SECONDS - t0))
  names+=("$name"); times+=("$dt")
  if [ $rc -eq 0 ]; then
    results+=(PASS); printf 'PASS %5ss\n' "$dt"
  else
    results+=(FAIL); failed=1; printf 'FAIL %5ss (exit %s)\n' "$dt" "$rc"
    echo "----- last lines of $log -----"; tail -n 40 "$log" | sed 's/^/  | /'; echo "-----"
  fi
  return "$rc"
}
skip() { names+=("$1"); results+=(SKIP); times+=(0); printf '[%s] %-58s SKIP\n' "$(date +%T)" "$1"; }

make_tarball() {
  local tmp=$work/root-tarball
  remove_root "$tmp"
  mkdir -p "$tmp"
  local mirror; mirror=$(host_mirror)
  echo "mirror: $mirror"
  debootstrap --variant=minbase --arch="$arch" --make-tarball="$tarball.part" "$suite" "$tmp" "$mirror" &&
    mv "$tarball.part" "$tarball"
  local rc=$?
  remove_root "$tmp"
  return "$rc"
}
new_root() {
  local r=$1
  remove_root "$r"
  mkdir -p "$r"
  debootstrap --variant=minbase --arch="$arch" --unpack-tarball="$tarball" "$suite" "$r" "$(host_mirror)" &&
    configure_apt "$r" && mount_root "$r"
}
clone_repo() {
  git clone --quiet --no-hardlinks --no-checkout "$repo" "$root1$src" &&
    git -C "$root1$src" checkout --quiet --detach "$sha" &&
    git -C "$root1$src" log -1 --format='%h %s'
}

# The README's first ```sh block: line 1 opens the app, line 2 runs the tests.
readme_commands() { awk '/^```sh[[:space:]]*$/ { on = 1; next } on && /^```/ { exit } on && NF' "$1"; }

run_app_command() {
  echo "+ export QT_QPA_PLATFORM=offscreen; $app_cmd --screenshot /tmp/fresh-app.png"
  in_root "$root1" "cd $src && export QT_QPA_PLATFORM=offscreen && $app_cmd --screenshot /tmp/fresh-app.png" &&
    check_png "$root1/tmp/fresh-app.png"
}
run_test_command() {
  echo "+ $test_cmd"
  in_root "$root1" "cd $src && $test_cmd"
}
build_package() {
  rm -rf "$deb_dir" && mkdir -p "$deb_dir" &&
    in_root "$root1" "cd $src/build && rm -f opscope_*.deb && cpack -G DEB && dpkg-deb -I opscope_*.deb && dpkg-deb -c opscope_*.deb" &&
    cp "$root1$src"/build/opscope_*.deb "$deb_dir/" && ls -l "$deb_dir"
}
install_package() {
  cp "$deb_dir"/opscope_*.deb "$root2/tmp/" &&
    in_root "$root2" "apt-get update -qq && cd /tmp && apt-get install -y --no-install-recommends ./opscope_*.deb" &&
    in_root "$root2" "dpkg-query -W -f='\${Package} \${Version}\n' opscope && ! test -e /usr/local/cuda"
}
check_libraries() {
  # shellcheck disable=SC2016  # expanded in the root
  in_root "$root2" 'for b in /usr/bin/opscope /usr/bin/opscope-cli; do echo "== $b"; ldd "$b" || exit 1; done > /tmp/ldd.txt; cat /tmp/ldd.txt; ! grep -q "not found" /tmp/ldd.txt'
}
check_cli_version() { in_root "$root2" 'cd / && opscope-cli --version'; }
check_cli_info() { in_root "$root2" 'cd / && opscope-cli info /usr/share/opscope/models/inception_block.onnx'; }
check_app() {
  rm -f "$root2/tmp/installed-app.png"
  in_root "$root2" 'cd / && QT_QPA_PLATFORM=offscreen opscope /usr/share/opscope/models/inception_block.onnx --screenshot /tmp/installed-app.png' &&
    check_png "$root2/tmp/installed-app.png"
}
check_installed_files() {
  local f ok=0
  for f in /usr/share/applications/io.opscope.opscope.desktop \
           /usr/share/metainfo/io.opscope.opscope.metainfo.xml \
           /usr/share/icons/hicolor/scalable/apps/opscope.svg \
           /usr/share/icons/hicolor/16x16/apps/opscope.png /usr/share/icons/hicolor/256x256/apps/opscope.png \
           /usr/share/mime/packages/opscope-mime.xml \
           /usr/share/man/man1/opscope.1.gz /usr/share/man/man1/opscope-cli.1.gz \
           /usr/share/bash-completion/completions/opscope-cli \
           /usr/share/opscope/models/inception_block.onnx /usr/share/opscope/models/transformer_block.onnx; do
    if [ -s "$root2$f" ]; then echo "ok       $f"; else echo "MISSING  $f"; ok=1; fi
  done
  return "$ok"
}
check_png() {
  [ -s "$1" ] || { echo "no screenshot at $1"; return 1; }
  head -c 8 "$1" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a' || { echo "$1 is not a PNG"; return 1; }
  echo "screenshot: $1 ($(stat -c %s "$1") bytes)"
}

# --- main -----------------------------------------------------------------------------------

unmount_all || die "could not unmount what a previous run left mounted under $work"
remove_root "$root1"; remove_root "$root2"
rm -rf "$logs"; mkdir -p "$logs"

mapfile -t readme < <(git -C "$repo" show "$sha:README.md" | readme_commands /dev/stdin)
[ ${#readme[@]} -eq 2 ] || die "README.md's first \`\`\`sh block should hold exactly two commands (found ${#readme[@]})"
app_cmd=${readme[0]}; test_cmd=${readme[1]}

echo "opscope fresh-install check: $(git -C "$repo" log -1 --format='%h %s' "$sha" | cut -c1-90)"
[ "$ref" != HEAD ] || git -C "$repo" diff --quiet HEAD -- || echo "note: uncommitted changes in $repo are not part of this check"
echo "work folder: $work   logs: $logs"
echo "README app command:  $app_cmd"
echo "README test command: $test_cmd"
start=$SECONDS

if [ -s "$tarball" ]; then skip "debootstrap tarball (cached: $(basename "$tarball"))"
else step "debootstrap tarball ($suite minbase, downloaded)" make_tarball; fi

ok1=0; ok2=0
if [ -s "$tarball" ] && step "build root: fresh $suite minbase" new_root "$root1" &&
   step "build root: clean clone of ${sha:0:12}" clone_repo; then
  if step "README command 1 (setup, build, app offscreen)" run_app_command; then
    if [ "$skip_tests" -eq 1 ]; then skip "README command 2 (tests) [--skip-tests]"
    else step "README command 2 (setup, build, ctest)" run_test_command; fi
    step "cpack -G DEB (in the build root)" build_package && ok1=1
  fi
fi
if [ "$ok1" -eq 1 ]; then
  unmount_all; [ "$keep" -eq 1 ] || remove_root "$root1"
  if step "install root: fresh $suite minbase" new_root "$root2" &&
     step "apt-get install --no-install-recommends ./opscope_*.deb" install_package; then
    ok2=1
    step "installed binaries: every shared library resolves" check_libraries
    step "opscope-cli --version" check_cli_version
    step "opscope-cli info .../inception_block.onnx" check_cli_info
    step "opscope (offscreen) --screenshot, installed paths" check_app
    step "installed desktop, metainfo, icons, MIME, man, completion" check_installed_files
  fi
fi
[ "$ok2" -eq 1 ] || failed=1

echo
echo "== summary ($((SECONDS - start))s in all; logs in $logs)"
for i in "${!names[@]}"; do printf '  %-4s %6ss  %s\n' "${results[$i]}" "${times[$i]}" "${names[$i]}"; done
if [ "$failed" -eq 0 ]; then echo "== PASS"; exit 0; else echo "== FAIL"; exit 1; fi

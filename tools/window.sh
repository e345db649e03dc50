#!/usr/bin/env bash
# The windowed tests: the extension in a real Blender window (Xvfb, Mesa's software OpenGL) on
# Debian's Blender 4.3 (trixie) and 5.2 (sid), each in a Debian root of its own made with
# debootstrap and entered with chroot. Needs root (debootstrap, chroot, bind mounts) and about
# 2 GB of disk per root. How it runs and what it checks: docs/development.md, "The windowed tests".
#
#   bash tools/window.sh                   both versions (sid is skipped, with its reason, when its
#                                          Blender cannot be installed)
#   bash tools/window.sh trixie            one version
#   bash tools/window.sh --timing trixie   the interface's cost per redraw instead of the tests
#   bash tools/window.sh --pictures        the tests, then the panel pictures of README.md and
#                                          docs/panel.md from trixie's screenshots (docs/images/)
#
# Environment:
#   TWO_BONE_IK_WINDOW_CACHE   where the roots are kept between runs (/var/cache/two-bone-ik-window)
#   TWO_BONE_IK_WINDOW_OUT     where each run's screenshots, logs and results go
#                              (/tmp/two-bone-ik-window); never inside the checkout
#   TWO_BONE_IK_WINDOW_REFRESH days after which a cached root is made again (7; sid moves daily)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${TWO_BONE_IK_WINDOW_CACHE:-/var/cache/two-bone-ik-window}"
out="${TWO_BONE_IK_WINDOW_OUT:-/tmp/two-bone-ik-window}"
refresh_days="${TWO_BONE_IK_WINDOW_REFRESH:-7}"
packages=(blender xvfb xdotool x11-apps imagemagick libgl1-mesa-dri xauth tesseract-ocr
  tesseract-ocr-eng python3-cattr python3-requests)

mode=tests
suites=()
for arg in "$@"; do
  case "$arg" in
    --timing) mode=timing ;;
    --pictures) mode=pictures ;;
    trixie | sid) suites+=("$arg") ;;
    *) echo "usage: bash tools/window.sh [--timing|--pictures] [trixie] [sid]" >&2; exit 2 ;;
  esac
done
[ "${#suites[@]}" -gt 0 ] || suites=(trixie sid)
[ "$mode" != pictures ] || suites=(trixie)
case "$out/" in "$repo"/*) echo "TWO_BONE_IK_WINDOW_OUT must be outside the checkout" >&2; exit 2 ;; esac
case "$cache/" in "$repo"/*) echo "TWO_BONE_IK_WINDOW_CACHE must be outside the checkout" >&2; exit 2 ;; esac
if [ "$(id -u)" -ne 0 ]; then
  echo "the windowed tests need root (debootstrap, chroot, mount)" >&2
  exit 2
fi

# The Debian mirror this machine's apt already uses, read at run time (no host in any file here).
mirror() {
  local uri
  uri="$(grep -hoE '^(URIs:[[:space:]]*|deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)[a-z]+://[^[:space:]]+/debian/?([[:space:]]|$)' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list 2>/dev/null |
    grep -oE '[a-z]+://[^[:space:]]+' | head -n 1 || true)"
  [ -n "$uri" ] || { echo "no Debian mirror in /etc/apt/sources.list.d" >&2; return 1; }
  echo "${uri%/}"
}

# Mounts this run made, unmounted in reverse order on exit; processes it started, stopped first.
mounts=()
pids=()
cleanup() {
  local i
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  done
  pids=()
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}" 2>/dev/null ||
      echo "could not unmount ${mounts[$i]}" >&2
  done
  mounts=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mount_root() {
  local root="$1" dir
  for dir in proc sys dev dev/pts dev/shm; do
    mkdir -p "$root/$dir"
    mount --bind "/$dir" "$root/$dir"
    mounts+=("$root/$dir")
  done
}

# A command inside the root, with a clean environment (prints the command line for "$@" to run).
root_command() {
  local root="$1"
  shift
  printf '%s\0' chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

in_root() {
  local -a command
  mapfile -d '' command < <(root_command "$@")
  "${command[@]}"
}

# Makes $cache/$suite (debootstrap, then Blender and the X tools) unless a fresh one is there.
# Prints why it could not, and fails, when the suite's Blender cannot be installed.
make_root() {
  local suite="$1" root="$cache/$1" new="$cache/$1.new" url
  if [ -f "$root/.two-bone-ik-ready" ] &&
    [ -z "$(find "$root/.two-bone-ik-ready" -mtime +"$refresh_days" 2>/dev/null)" ]; then
    return 0
  fi
  url="$(mirror)"
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  echo "making the $suite root in $root from $url (about 3 minutes)"
  rm -rf "$new"
  mkdir -p "$cache"
  if ! debootstrap --variant=minbase "$suite" "$new" "$url" >"$cache/$suite.debootstrap.log" 2>&1; then
    echo "debootstrap $suite failed (the end of $cache/$suite.debootstrap.log):" >&2
    tail -n 5 "$cache/$suite.debootstrap.log" >&2
    rm -rf "$new"
    return 1
  fi
  ln -sf ../proc/self/mounts "$new/etc/mtab"  # without it Blender warns at every start
  # The machine's clock may run ahead of a snapshot's Release date; signatures are still checked.
  echo 'Acquire::Check-Valid-Until "false";' >"$new/etc/apt/apt.conf.d/99two-bone-ik"
  mount_root "$new"
  local status=0
  { in_root "$new" apt-get update -q && in_root "$new" apt-get install -y -q --no-install-recommends \
    "${packages[@]}"; } >"$cache/$suite.apt.log" 2>&1 || status=$?
  cleanup
  if [ "$status" -ne 0 ]; then
    echo "could not install Blender in $suite (the end of $cache/$suite.apt.log):" >&2
    tail -n 8 "$cache/$suite.apt.log" >&2
    rm -rf "$new"
    return 1
  fi
  in_root "$new" apt-get clean
  rm -rf "$root"
  mv "$new" "$root"
  touch "$root/.two-bone-ik-ready"
}

# One Blender version: build the zip with it, install it into a fresh user folder, run the driver.
run_suite() {
  local suite="$1" root="$cache/$1" work run shots status=0 display
  shots="$out/$suite"
  [ "$mode" != timing ] || shots="$out/$suite-timing"
  rm -rf "$shots"
  mkdir -p "$shots"
  work="$root/tmp/two-bone-ik"
  rm -rf "$work"
  mkdir -p "$work/src" "$work/dist" "$work/user" "$work/out"
  # The checkout's files as they are (tracked and new, not ignored), copied: nothing is written back.
  (cd "$repo" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - 2>/dev/null) |
    tar -xf - -C "$work/src"
  mount_root "$root"
  display=99
  while [ -e "$root/tmp/.X11-unix/X$display" ] || [ -e "/tmp/.X11-unix/X$display" ]; do
    display=$((display + 1))
  done
  local -a xvfb
  mapfile -d '' xvfb < <(root_command "$root" Xvfb ":$display" -screen 0 1920x1080x24 -nolisten tcp)
  "${xvfb[@]}" >"$shots/xvfb.log" 2>&1 {lock}>&- &  # chroot and env exec: $! is Xvfb itself
  pids+=("$!")
  for _ in $(seq 50); do [ -e "$root/tmp/.X11-unix/X$display" ] && break; sleep 0.2; done
  mapfile -d '' run < <(root_command "$root" env BLENDER_USER_RESOURCES=/tmp/two-bone-ik/user DISPLAY=":$display" \
    LIBGL_ALWAYS_SOFTWARE=1 TWO_BONE_IK_WINDOW_OUT=/tmp/two-bone-ik/out)
  "${run[@]}" blender --version | head -n 1 | tee "$shots/version.txt"
  "${run[@]}" blender --factory-startup -b --command extension build --source-dir /tmp/two-bone-ik/src \
    --output-dir /tmp/two-bone-ik/dist >"$shots/build.log" 2>&1 || { echo "build failed: $shots/build.log" >&2; cleanup; return 1; }
  "${run[@]}" sh -c 'blender -b --command extension install-file -r user_default -e /tmp/two-bone-ik/dist/*.zip' \
    >"$shots/install.log" 2>&1 || { echo "install failed: $shots/install.log" >&2; cleanup; return 1; }
  local script=tests/window/run_window.py
  [ "$mode" != timing ] || script=tests/window/time_window.py
  # The driver quits Blender itself; the timeout only stops a hung window.
  timeout 900 "${run[@]}" blender -p 0 0 1920 1080 --python "/tmp/two-bone-ik/src/$script" \
    >"$shots/blender.log" 2>&1 || status=$?
  cp -r "$work/out/." "$shots/" 2>/dev/null || true
  cleanup
  rm -rf "$work"
  [ "$status" -eq 0 ] || echo "Blender exited with $status (its output: $shots/blender.log)" >&2
  if [ "$mode" = timing ]; then
    cat "$shots/timing.txt" 2>/dev/null || status=1
  else
    python3 "$repo/tests/window/report.py" "$shots" | tee "$shots/result.txt" || status=1
  fi
  echo "screenshots and logs: $shots"
  return "$status"
}

status=0
summary=()
for suite in "${suites[@]}"; do
  start=$SECONDS
  mkdir -p "$cache"
  exec {lock}>"$cache/$suite.lock"
  flock "$lock"  # one run at a time per root (another run's mounts, its Xvfb)
  if ! make_root "$suite"; then
    if [ "$suite" = sid ]; then
      summary+=("sid: SKIPPED, Blender could not be installed from sid (above); 4.3 still ran")
      exec {lock}>&-
      continue
    fi
    summary+=("$suite: FAILED, its root could not be made")
    status=1
    exec {lock}>&-
    continue
  fi
  suite_status=0
  run_suite "$suite" || suite_status=$?
  exec {lock}>&-
  [ "$suite_status" -eq 0 ] || status=1
  summary+=("$suite: $([ "$suite_status" -eq 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s")
done
if [ "$mode" = pictures ] && [ "$status" -eq 0 ]; then
  python3 "$repo/tests/window/pictures.py" "$out/trixie" "$repo/docs/images"
fi
echo "=== windowed run ($mode)"
printf '%s\n' "${summary[@]}"
exit "$status"

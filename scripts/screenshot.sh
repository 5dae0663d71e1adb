#!/usr/bin/env bash
# Starts the editor under Xvfb, optionally drives it with xdotool, and saves a screenshot.
#
#   scripts/screenshot.sh OUT.png [PROJECT] [-- XDOTOOL ARGS...]...
#
# PROJECT defaults to projects/runner; MARROW_SCREEN=WxH sets the screen (default 1440x900). Each group after a `--` is one xdotool command run a
# second apart once the window is up, e.g.
#
#   scripts/screenshot.sh shot.png projects/cesium_man -- mousemove 47 83 click 1 -- key space
#
# Needs: xvfb (Xvfb), xdotool and imagemagick (import); `.ci/run` installs them on Debian.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/screenshot.sh OUT.png [PROJECT] [-- XDOTOOL ARGS...]...}
shift
project=projects/runner
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  project=$1
  shift
fi
cargo build --quiet
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 0700 "$XDG_RUNTIME_DIR"
display=:$((90 + RANDOM % 9))
Xvfb "$display" -screen 0 "${MARROW_SCREEN:-1440x900}x24" >/dev/null 2>&1 &
xvfb=$!
trap 'kill $app $xvfb 2>/dev/null || true' EXIT
sleep 1
export DISPLAY=$display
target/debug/marrow edit "$project" >/tmp/marrow-screenshot.log 2>&1 &
app=$!
# Wait for the window, then give the first frames time to draw.
for _ in $(seq 1 60); do
  xdotool search --name "Marrow" >/dev/null 2>&1 && break
  sleep 0.5
done
sleep 3
win=$(xdotool search --name "Marrow" | head -n 1)
xdotool windowfocus --sync "$win" || true
screen=${MARROW_SCREEN:-1440x900}
xdotool windowmove "$win" 0 0 windowsize "$win" "${screen%x*}" "${screen#*x}" || true
sleep 1
cmd=()
run() { if [ ${#cmd[@]} -gt 0 ]; then xdotool "${cmd[@]}"; sleep 1; fi; cmd=(); }
for a in "$@"; do
  if [ "$a" = "--" ]; then run; else cmd+=("$a"); fi
done
run
sleep 1
import -window root "$out"
echo "wrote $out"

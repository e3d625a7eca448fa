#!/bin/sh
# tests/viewer_xvfb.sh COMMAND [ARGS...]: runs COMMAND with DISPLAY set to an Xvfb server
# of its own (Mesa renders OpenGL 3.3 core there in software, with llvmpipe), then stops
# the server and exits with COMMAND's status (77, a skip, when Xvfb is missing).
#
# Why not `xvfb-run -a`: it picks the display number by looking for a free lock file and
# only then starts the server, so when ctest runs several viewer cases at once two of them
# can pick the same number; one server fails to start and its test talks to the other's,
# which goes away mid-test. With -displayfd the server claims a free number itself,
# atomically, and writes it back once it accepts connections. -noreset: by default the
# server resets when its last client disconnects and refuses connections meanwhile, which
# a test that opens and closes several windows in a row runs into.
set -u
if ! command -v Xvfb >/dev/null 2>&1; then
  echo "SKIP: Xvfb is not installed (Debian package xvfb)" >&2
  exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/dbtr-xvfb.XXXXXX") || exit 1
mkfifo "$dir/displayfd" || exit 1
Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp -noreset 3>"$dir/displayfd" >"$dir/log" 2>&1 &
xpid=$!
# The server must go whatever ends this script: a finished test, a ctest timeout (TERM).
cleanup() {
  kill "$xpid" 2>/dev/null
  wait "$xpid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' INT TERM
# Blocks until the server writes its display number; empty if it died first.
read -r num <"$dir/displayfd"
if [ -z "${num:-}" ]; then
  echo "viewer_xvfb.sh: Xvfb did not start:" >&2
  cat "$dir/log" >&2
  exit 1
fi
DISPLAY=":$num" "$@"

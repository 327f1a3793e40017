#!/bin/sh
# run_built.sh NINJA BUILD_DIR TARGET... -- COMMAND [ARG...]: builds the TARGETs (test
# executables: the build leaves them out by default, tests/meson.build says why) with ninja in
# BUILD_DIR, one build at a time (meson test runs several tests at once: a lock in
# BUILD_DIR/meson-private), then runs COMMAND. A build that fails is the test's hard error
# (exit 99), with ninja's output on stderr.
set -eu
ninja=$1 build=$2
shift 2
targets=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	targets="$targets $1"
	shift
done
if [ $# -lt 2 ]; then
	echo "usage: run_built.sh NINJA BUILD_DIR TARGET... -- COMMAND [ARG...]" >&2
	exit 99
fi
shift
log=$(mktemp)
# shellcheck disable=SC2086 # one word per target
if ! flock "$build/meson-private/test-build.lock" "$ninja" -C "$build" $targets >"$log" 2>&1
then
	cat "$log" >&2
	rm -f "$log"
	exit 99
fi
rm -f "$log"
exec "$@"

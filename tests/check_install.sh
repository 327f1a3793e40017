#!/bin/sh
# Installs the build into a scratch DESTDIR and checks what a user gets: the header (and not the
# tests' omopt_testing.h), the shared library exporting exactly what the two declare, omopt.pc, the omopt command; then builds
# tests/install/hello.c with `pkg-config --cflags --libs omopt` alone and runs it on the bundled
# example.   check_install.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
for tool in pkg-config cc nm; do
	command -v $tool >/dev/null || { echo "skipped: $tool is not installed"; exit 77; }
done
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null
prefix=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')
root=$dest$prefix
test -f "$root/include/omopt.h"
test ! -e "$root/include/omopt_testing.h"
test -x "$root/bin/omopt"
grep -q 'omopt run' "$root/share/man/man1/omopt.1"
pcdir=$(dirname "$(find "$root" -name omopt.pc | head -1)")
so=$(find "$root" -name 'libomopt.so.0' | head -1)
test -n "$pcdir" && test -n "$so"
# the exported symbols (of any kind: an ifunc is 'i', a resolver 'W') are exactly the
# functions omopt.h declares and those of omopt_testing.h (for the command and the Python
# package's test_break_pass). A -Dtest_link=shared build exports every symbol for its tests:
# there the declared functions must be among those exported.
nm -D --defined-only "$so" | awk '{print $3}' | sort >"$dest/exported"
grep -oh 'om_[a-z_0-9]*(' "$root/include/omopt.h" "$src/include/omopt_testing.h" | tr -d '(' |
	sort -u >"$dest/declared"
link=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "test_link"][0])')
if [ "$link" = shared ]; then
	missing=$(comm -13 "$dest/exported" "$dest/declared")
	if [ -n "$missing" ]; then
		echo "declared, not exported: $missing"
		exit 1
	fi
elif ! cmp -s "$dest/exported" "$dest/declared"; then
	echo "exported (<) and declared (>) differ:"
	diff "$dest/exported" "$dest/declared" || true
	exit 1
fi
export PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR="$dest"
cc -std=c11 -Wall -Wextra -Werror -o "$dest/hello" "$src/tests/install/hello.c" \
	$(pkg-config --cflags --libs omopt)
LD_LIBRARY_PATH=$(dirname "$so") "$dest/hello" "$src/examples/tiny_shuffle.onnx"
# the Python package, from the staged tree (its recorded library folder is the real prefix's)
pkg=$(find "$root" -path '*/omopt/__init__.py' | head -1)
test -n "$pkg" && test -f "$(dirname "$pkg")/_config.py"
version=$(PYTHONPATH=$(dirname "$(dirname "$pkg")") OMOPT_LIBRARY=$so \
	/usr/bin/python3 -c 'import omopt; print(omopt.__version__)')
test "$version" = "$(LD_LIBRARY_PATH=$(dirname "$so") "$dest/hello" --version)"
echo "installed: $(wc -l <"$dest/exported") functions exported, pkg-config --libs: $(pkg-config --libs omopt), python: $pkg"


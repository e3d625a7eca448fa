#!/bin/sh
# tests/install.sh CMAKE CC BUILD WORK CASE: libdbtr as a program outside dbtr sees it
# (tests/install.cmake, docs/library.md). `setup` installs the build tree into WORK/prefix
# with `cmake --install`; the other cases build tests/consumer/consumer.c against that tree
# and run it:
#   cmake          find_package(dbtr), dbtr::dbtr (the shared library)
#   cmake_static   find_package(dbtr), dbtr::dbtr_static
#   pkgconfig      pkg-config --cflags --libs dbtr (the shared library), run from a prefix
#                  outside the loader's folders
#   pkgconfig_static  libdbtr.a with pkg-config --static --libs dbtr
#   exports        the shared library exports exactly the functions <dbtr.h> declares
set -eu
cmake=$1 cc=$2 build=$3 work=$4 what=$5
src=$(cd "$(dirname "$0")/consumer" && pwd)
prefix=$work/prefix
# The library folder is lib/ or lib/<multiarch>/, as GNUInstallDirs chose at configure time.
[ "$what" = setup ] || export PKG_CONFIG_PATH="$(dirname "$(find "$prefix" -name dbtr.pc)")"

run_consumer() { # the program, then the scan it writes
  "$1" "$work/$what.h5"
}

case $what in
setup)
  rm -rf "$work"
  mkdir -p "$work"
  "$cmake" --install "$build" --prefix "$prefix" >"$work/install.log"
  ;;
cmake | cmake_static)
  target=dbtr::dbtr
  [ "$what" = cmake_static ] && target=dbtr::dbtr_static
  "$cmake" -S "$src" -B "$work/$what" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
    -DDBTR_TARGET=$target >"$work/$what.log" 2>&1 || { cat "$work/$what.log"; exit 1; }
  "$cmake" --build "$work/$what" >>"$work/$what.log" 2>&1 || { cat "$work/$what.log"; exit 1; }
  run_consumer "$work/$what/consumer"
  ;;
pkgconfig | pkgconfig_static)
  libdir=$(pkg-config --variable=libdir dbtr)
  if [ "$what" = pkgconfig ]; then
    # As docs/library.md has it, no flag of our own: the .pc's run path finds libdbtr.so.0 in
    # this prefix, which is no folder of the loader's (tests/install.cmake clears
    # LD_LIBRARY_PATH).
    libs=$(pkg-config --libs dbtr)
  else
    libs=$(pkg-config --static --libs dbtr | sed "s|-ldbtr|$libdir/libdbtr.a|")
  fi
  # shellcheck disable=SC2086 # the flags are meant to split
  "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror $(pkg-config --cflags dbtr) "$src/consumer.c" -o "$work/$what" $libs -lm
  run_consumer "$work/$what"
  ;;
exports)
  lib=$(find "$prefix" -name 'libdbtr.so.*.*.*')
  nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort >"$work/exported"
  sed -n 's/^DBTR_EXTERN [^(]*[ *]\(dbtr_[a-z0-9_]*\)(.*/\1/p' "$prefix/include/dbtr.h" | sort >"$work/declared"
  diff "$work/declared" "$work/exported" || { echo "FAIL: < declared in dbtr.h only, > exported only"; exit 1; }
  echo "exports: $(wc -l <"$work/exported") functions, each declared in dbtr.h"
  ;;
*)
  echo "install.sh: unknown case $what" >&2
  exit 2
  ;;
esac

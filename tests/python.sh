#!/bin/sh
# tests/python.sh BUILD DBTR LIBDBTR CASE: the Python package (python/, docs/python.md)
# against this build (tests/python.cmake). DBTR_PYTHON picks the interpreter (default
# /usr/bin/python3, which has Debian's numpy, pytest and tifffile: run.sh installs them). A
# missing pytest or numpy fails the case: nothing here skips.
#   tests/FILE::test_NAME  runs that pytest test of python/tests/FILE, with DBTR_CLI=DBTR and
#              DBTR_LIBRARY=LIBDBTR, the package from the source tree
#   install    `pip install` of python/ into a virtual environment, as docs/python.md has it,
#              then the installed package, run from elsewhere, loads its own copy of libdbtr
#   docs_example  docs/python.md's worked example prints the output the doc shows
set -eu
build=$1 cli=$2 lib=$3 what=$4
py=${DBTR_PYTHON:-/usr/bin/python3}
src=$(cd "$(dirname "$0")/../python" && pwd)
# No __pycache__ or .pytest_cache in the source tree.
export PYTHONDONTWRITEBYTECODE=1

case $what in
tests/*::test_*)
  cd "$src"
  DBTR_CLI=$cli DBTR_LIBRARY=$lib PYTHONPATH=$src exec "$py" -m pytest -q -p no:cacheprovider "$what"
  ;;
install)
  # Debian's Python installs packages only into a virtual environment (PEP 668); offline, with
  # setuptools and wheel from Debian (--no-build-isolation); from a copy of python/, as pip
  # writes its build folders beside the sources.
  work=$build/tests/python_install
  rm -rf "$work"
  mkdir -p "$work"
  cp -r "$src" "$work/src"
  rm -rf "$work/src/build" "$work/src/"*.egg-info
  "$py" -m venv --system-site-packages "$work/venv"
  DBTR_BUILD_DIR=$build "$work/venv/bin/python" -m pip install -q --no-build-isolation --no-index "$work/src"
  cd "$work"
  env -u DBTR_LIBRARY -u PYTHONPATH "$work/venv/bin/python" - "$work/venv" <<'PY'
import pathlib, sys
import dbtr
here = pathlib.Path(dbtr.__file__).parent
assert pathlib.Path(sys.argv[1]) in here.parents, f"dbtr imported from {here}, not the virtual environment"
assert pathlib.Path(dbtr._lib.lib._name).parent == here, f"libdbtr loaded from {dbtr._lib.lib._name}"
assert (here / "py.typed").is_file(), "the installed package has no py.typed"
try:
    dbtr.read_scan("missing.h5")
    raise SystemExit("reading a missing file raised nothing")
except dbtr.DbtrIOError as e:
    assert "missing.h5" in str(e), e
print(f"install: dbtr {dbtr.__version__} from {here}, with its own libdbtr; modes {', '.join(dbtr.modes())}")
PY
  ;;
docs_example)
  # The worked example of docs/python.md, where the doc runs it (beside build/app/dbtr, after
  # ./run.sh demo wrote dbtr-demo/), must print the output the doc shows.
  doc=$src/../docs/python.md
  work=$build/tests/python_docs
  rm -rf "$work"
  mkdir -p "$work/build/app"
  ln -s "$cli" "$work/build/app/dbtr"
  block() { # the lines of the first block fenced by $1 in the worked example
    awk -v fence="$1" '/^## A worked example/ { s = 1 } s && $0 == fence { p = 1; next } p && /^```$/ { exit } p' "$doc"
  }
  block '```python' >"$work/example.py"
  block '```text' >"$work/expected.txt"
  [ -s "$work/example.py" ] && [ -s "$work/expected.txt" ] || { echo "FAIL: no example in $doc"; exit 1; }
  cd "$work"
  "$cli" demo -o dbtr-demo --quiet >/dev/null
  DBTR_LIBRARY=$lib PYTHONPATH=$src "$py" example.py >got.txt
  diff expected.txt got.txt || { echo "FAIL: the example prints other than docs/python.md shows (< doc, > now)"; exit 1; }
  echo "docs_example: docs/python.md's example prints what the doc shows"
  ;;
*)
  echo "python.sh: unknown case $what" >&2
  exit 2
  ;;
esac

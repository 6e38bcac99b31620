#!/usr/bin/env bash
# The array API standard's own test suite (array-api-tests, from ../shared/
# beside the repo or ARRAY_API_TESTS_SRC) against the pygpu namespace, on the
# simulator unless PYGPU_SIMULATOR says otherwise. The suite is copied into
# .array-api-tests/ (ignored by git); the tests that are known to fail are
# listed, each with its reason, in tests/api/array_api_xfails.txt, so that a
# new failure fails this script. Extra arguments go to pytest (e.g. -x, -k).
#   tools/array_api_tests.sh                 # as CI runs it
#   XFAILS=none tools/array_api_tests.sh     # every failure counted
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shared/ lies beside the repo in CI; a git worktree may be one folder deeper
SRC=${ARRAY_API_TESTS_SRC:-$ROOT/../shared/array-api-tests}
[ -d "$SRC" ] || SRC=$ROOT/../../shared/array-api-tests
COPY=$ROOT/.array-api-tests
if [ ! -d "$SRC/array_api_tests" ]; then
    echo "array-api-tests not found at $SRC (set ARRAY_API_TESTS_SRC)" >&2
    exit 2
fi
rm -rf "$COPY"
mkdir -p "$COPY"
cp -r "$SRC/." "$COPY/"
XFAILS=${XFAILS:-$ROOT/tests/api/array_api_xfails.txt}
# no deadline: a first call compiles its kernels, seconds on a loaded simulator
args=(--max-examples="${MAX_EXAMPLES:-5}" --disable-deadline -q -p no:cacheprovider)
if [ "$XFAILS" != none ]; then
    # the suite reads test ids only: our reasons follow '  # ' on each line
    sed -e 's/[[:space:]]*#.*$//' -e '/^$/d' "$XFAILS" >"$COPY/xfails.txt"
    args+=(--xfails-file="$COPY/xfails.txt")
fi
cd "$COPY"
export ARRAY_API_TESTS_MODULE=${ARRAY_API_TESTS_MODULE:-pygpu} PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYGPU_SIMULATOR=${PYGPU_SIMULATOR:-1}
exec "${PYTHON:-python}" -m pytest array_api_tests "${args[@]}" "$@"

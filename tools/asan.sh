#!/usr/bin/env bash
# The simulator under AddressSanitizer and UndefinedBehaviorSanitizer: builds a
# sanitized copy of pygpu in a temporary folder, then runs the simulator's
# tests there (each pygpu array its own allocation: PYGPU_NO_POOL=1). Extra
# arguments go to pytest. Exits non-zero on the first report. PYTHON names the
# interpreter to build and test with (default: python3 on PATH).
set -euo pipefail
python=${PYTHON:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && git ls-files -z | xargs -0 cp --parents -t "$work")
cd "$work"
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
CFLAGS="$san" CXXFLAGS="$san" LDFLAGS="$san" PYGPU_NO_CUDA=1 \
    "$python" setup.py -q build_ext --inplace > build.log 2>&1 || { tail -30 build.log; exit 1; }
export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export PYGPU_SIMULATOR=1 PYGPU_NO_POOL=1
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
    tests=(tests/arrays/test_arrays.py tests/memory/test_copies.py
           tests/kernels/test_kernels.py tests/runtime/test_errors_and_leaks.py
           tests/memory/test_streams_and_pool.py tests/interop/test_interop.py
           tests/quality/test_reliability.py tests/runtime/test_graphs.py)
fi
# --capture=sys: a sanitizer report on fd 2 reaches the terminal
"$python" -m pytest -q -p no:cacheprovider --capture=sys "${tests[@]}"

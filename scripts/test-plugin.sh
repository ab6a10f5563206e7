#!/bin/sh
# The tests' LLVM pass plugins: tests/plugin/NAME.cpp built with clang++-19
# against LLVM 19's headers (llvm-config-19 --cxxflags, then FLAGS) and
# put at OUT, where the test loads it:
#
#     sh scripts/test-plugin.sh NAME OUT [FLAGS...]
#
# The tests ask for the same few plugins about ten times a run, some 5 s of
# processor time each; a build is kept in the user's cache
# (~/.cache/passlab/test-plugins), named by a hash of what makes it:
# clang++-19's and llvm-config-19's versions and flags, the headers'
# package (the listing of LLVM's generated configuration headers, which a
# new llvm-19-dev replaces), FLAGS, this script and the source. A run
# again, or a fresh clone on the same machine, builds none of them.
# Both the cache's entry and OUT are written under another name and then
# renamed, so that a test loading OUT meanwhile (another stream of the
# test command) sees the old file or the new one, never half of one.
set -eu
[ $# -ge 2 ] || { echo "usage: sh scripts/test-plugin.sh NAME OUT [FLAGS...]" >&2; exit 2; }
name=$1 out=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/tests/plugin/$name.cpp"
[ -f "$src" ] || { echo "test-plugin.sh: no plugin source $src" >&2; exit 2; }
cxxflags=$(llvm-config-19 --cxxflags)
includes=$(llvm-config-19 --includedir)
key=$({
    clang++-19 --version
    llvm-config-19 --version
    echo "$cxxflags"
    ls -l --time-style=full-iso "$includes/llvm/Config"
    printf '%s\n' "$@"
    cat "$0" "$src"
} | sha256sum | cut -c1-16)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/passlab/test-plugins"
entry="$cache/$name-$key.so"
mkdir -p "$cache" "$(dirname "$out")"
trap 'rm -f "$entry.$$" "$out.$$"' EXIT
if [ ! -f "$entry" ]; then
    # ($cxxflags unquoted: llvm-config's flags, one word each)
    clang++-19 -shared -fPIC -o "$entry.$$" "$src" $cxxflags "$@"
    mv -f "$entry.$$" "$entry"
fi
cp "$entry" "$out.$$"
mv -f "$out.$$" "$out"

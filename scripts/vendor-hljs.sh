#!/usr/bin/env bash
# Rebuilds src/explore/hljs.js: highlight.js's core with its LLVM IR
# grammar (BSD-3-Clause, from npm's @highlightjs/cdn-assets), as one classic
# script that defines a local `hljs` inside the explorer's own scope (no
# global, so it cannot clash with a page's copy). Run by hand when
# upgrading; the result is committed.
set -euo pipefail
version=${1:-11.12.0}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@highlightjs/cdn-assets@$version" >/dev/null && tar xzf ./*.tgz)
core="$tmp/package/es/core.min.js"
grep -q 'export{te as default};' "$core" || { echo "unexpected core.min.js layout" >&2; exit 1; }
{
    echo "/* highlight.js $version (core + llvm), BSD-3-Clause: see the licence at the end. Built by scripts/vendor-hljs.sh. */"
    echo "const hljs = (() => {"
    sed 's/export{te as default};/return te;/' "$core"
    echo "})();"
    cat "$tmp/package/languages/llvm.min.js"
    echo "/*"
    cat "$tmp/package/LICENSE"
    echo "*/"
} > "$here/src/explore/hljs.js"
echo "wrote src/explore/hljs.js ($(wc -c < "$here/src/explore/hljs.js") bytes)"

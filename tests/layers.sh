#!/bin/sh
# The layers of src/ (src/README.md), lowest first: a file may include
# headers of its own folder and of the folders below it, never above.
# Extracts every #include "..." of src/, maps it to the folder it lands
# in, and fails on an upward include (naming file and header) and on any
# cycle between folders. LAYERS_SRC points elsewhere to check another tree.
set -u
src=${LAYERS_SRC:-$(cd "$(dirname "$0")/.." && pwd)/src}
layers="base boot backend route core coll service api launch"

# "file folder header-folder header" for every include that lands in src/.
edges=$(cd "$src" && find . -name '*.[ch]' -o -name '*.cc' | sed 's|^\./||' |
    while read -r f; do
        dir=$(dirname "$f")
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
            while read -r h; do
                if [ -f "$dir/$h" ] && [ "${h#*/}" = "$h" ]; then
                    to=$dir/$h          # "net.h" beside the file
                elif [ -f "$h" ]; then
                    to=$h               # "core/comm.h" from src/
                else
                    continue            # config.h, pdmpi.h: outside src/
                fi
                echo "$f ${f%%/*} ${to%%/*} $h"
            done
    done)
[ -n "$edges" ] || { echo "layers: no includes found under $src"; exit 1; }

echo "$edges" | awk -v layers="$layers" '
BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
{
    from = $2; to = $3
    if (!(from in rank) || !(to in rank)) {
        printf "layers: %s: folder %s is not in the layer list\n", $1,
               (from in rank) ? to : from
        bad++; next
    }
    if (rank[to] > rank[from]) {
        printf "layers: upward include: %s (%s) includes %s (%s)\n",
               $1, from, $4, to
        bad++
    }
    if (from != to) dep[from, to] = 1
}
END {
    # A cycle between folders: some folder reaches itself.
    for (k in rank) for (i in rank) for (j in rank)
        if (dep[i, k] && dep[k, j]) dep[i, j] = 1
    for (i in rank) if (dep[i, i]) {
        printf "layers: folder %s is on an include cycle\n", i; bad++
    }
    if (bad) { printf "layers: %d violation(s)\n", bad; exit 1 }
    printf "layers: %d includes between %d folders, none upward, no cycle\n",
           NR, n
}'

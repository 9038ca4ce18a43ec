#!/usr/bin/env bash
# The README's module graph (between <!-- module-graph --> and <!-- /module-graph -->) must be
# what Package.swift says: prints the generated graph, and fails with a diff when they differ.
#   Tests/module-graph.sh --write   rewrites the README's block from Package.swift.
set -euo pipefail
cd "$(dirname "$0")/.."
# log, die
# shellcheck source-path=SCRIPTDIR source=../deploy/lib/toolkit.sh
. deploy/lib/toolkit.sh
generated=$(swift package dump-package | swift Tests/module-graph.swift)
if [ "${1:-}" = "--write" ]; then
    GRAPH="$generated" python3 - <<'PY' 2>/dev/null || die "--write needs python3"
import os, re
s = open("README.md").read()
block = "<!-- module-graph -->\n```\n" + os.environ["GRAPH"] + "\n```\n<!-- /module-graph -->"
s = re.sub(r"<!-- module-graph -->.*?<!-- /module-graph -->", lambda m: block, s, flags=re.S)
open("README.md", "w").write(s)
PY
    exit 0
fi
documented=$(sed -n '/<!-- module-graph -->/,/<!-- \/module-graph -->/p' README.md | sed '1,2d;$d' | sed '$d')
if [ "$generated" != "$documented" ]; then
    log "the README's graph is not Package.swift's (Tests/module-graph.sh --write updates it):"
    diff <(echo "$documented") <(echo "$generated") >&2 || true
    exit 1
fi
echo "$generated"

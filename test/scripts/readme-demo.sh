#!/usr/bin/env bash
# The README promises `npm install && npm run demo` on a fresh clone. Do exactly that: clone the
# committed HEAD into a temporary directory, run the two commands literally, check the report.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --quiet "file://$repo" "$work/apm-sync"
cd "$work/apm-sync"
# The demo must not need a database from the environment.
unset DATABASE_URL
start=$(date +%s)
npm install --no-audit --no-fund >/dev/null 2>&1 || { echo "readme-demo: npm install failed"; exit 1; }
npm run demo > "$work/demo.out" 2> "$work/demo.err" || { echo "readme-demo: npm run demo failed"; tail -20 "$work/demo.err"; exit 1; }
for expected in "top services by total time per day" "error rate by hour" "visitors per day" "first run finished"; do
  grep -q "$expected" "$work/demo.out" || { echo "readme-demo: the report lacks: $expected"; cat "$work/demo.out"; exit 1; }
done
[ -d .apm-sync/pgdata ] || { echo "readme-demo: no embedded database under ./.apm-sync"; exit 1; }
grep -q "report (coverage, freshness and the data; open it in a browser): $PWD/apm-sync-report.html" "$work/demo.out" \
  && grep -q "<svg" apm-sync-report.html || { echo "readme-demo: no HTML report (or its path) from the demo"; tail -3 "$work/demo.out"; exit 1; }
# What the demo leaves in the clone is ignored by git (the report, the embedded database).
git check-ignore -q apm-sync-report.html && git check-ignore -q .apm-sync \
  || { echo "readme-demo: apm-sync-report.html or .apm-sync is not ignored by git"; exit 1; }
# The README: `npm run -s demo -- --json` prints the report as JSON and nothing else (on stdout).
npm run -s demo -- --json > "$work/demo.json" 2> "$work/demo-json.err" \
  || { echo "readme-demo: npm run -s demo -- --json failed"; tail -20 "$work/demo-json.err"; exit 1; }
node -e 'JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"))' "$work/demo.json" \
  || { echo "readme-demo: npm run -s demo -- --json printed more than JSON:"; head -5 "$work/demo.json"; exit 1; }
echo "readme-demo: npm install && npm run demo succeeded on a fresh clone in $(( $(date +%s) - start )) s"

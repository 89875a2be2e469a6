#!/usr/bin/env bash
# The policy gate run by `npm test` before mocha: formatting, strict compile, the Rego tests, every
# deny rule reached by a test, a coverage floor, and Regal's lint. Uses only the pinned tools (scripts/tools.env); run
# `npm run setup` first on a fresh machine.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=tools.env
. scripts/tools.env
tools_dir=${PORTCULLIS_TOOLS:-$HOME/.cache/portcullis/tools}
opa="$tools_dir/opa-$OPA_VERSION/opa"
regal="$tools_dir/regal-$REGAL_VERSION/regal"
for tool in "$opa" "$regal"; do
  [ -x "$tool" ] || {
    echo "policies-check: $tool is missing; run: npm run setup" >&2
    exit 1
  }
done

# Coverage floor, in percent, over every loaded module (policy and tests).
threshold=90
# policies/build holds the compiled bundle and its manifest, which are not policy sources.
ignore=(--ignore build)

"$opa" fmt --list --fail policies >/dev/null || {
  echo "policies-check: not opa-formatted (fix with: $opa fmt -w policies):" >&2
  "$opa" fmt --list policies >&2
  exit 1
}

"$opa" check --strict "${ignore[@]}" policies

if ! "$opa" test "${ignore[@]}" policies; then
  # The table test fails as a whole; show which cases differ and how.
  echo "policies-check: decision-table mismatches:" >&2
  # (A flat query: `with` inside a comprehension of an `opa eval` query did not apply here.)
  "$opa" eval "${ignore[@]}" -d policies -f json 'some case in data.admission.testdata.cases
    result := data.admission.decision with input as case.input with data.catalog as data.admission.testdata.fixture.catalog with data.rules as data.admission.testdata.fixture.rules
    problems := data.admission_test.case_mismatches(case, result) | data.admission_test.invariant_breaches(case, result)
    count(problems) > 0' | node -e '
    let text = "";
    process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => {
      for (const { bindings } of JSON.parse(text).result ?? [])
        for (const problem of bindings.problems) console.error(JSON.stringify(problem, null, 2));
    });' || true
  exit 1
fi

coverage_report=$(mktemp)
annotations=$(mktemp)
trap 'rm -f "$coverage_report" "$annotations"' EXIT
# Per rule first: every deny rule reached by at least one test (scripts/policies-rule-coverage.mjs), which
# the overall floor below cannot see.
"$opa" test "${ignore[@]}" --coverage policies >"$coverage_report"
"$opa" inspect -a --format json policies >"$annotations"
node scripts/policies-rule-coverage.mjs "$annotations" "$coverage_report"
if ! "$opa" test "${ignore[@]}" --coverage --threshold "$threshold" policies >"$coverage_report"; then
  echo "policies-check: Rego coverage is under ${threshold}%; not covered:" >&2
  node -e '
    const report = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    for (const [file, { not_covered: gaps = [] }] of Object.entries(report.files))
      for (const gap of gaps) console.error(`  ${file}:${gap.start.row}-${gap.end.row}`);
  ' "$coverage_report" || true
  exit 1
fi
node -e '
  const report = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  console.log(`policies-check: Rego coverage ${report.coverage.toFixed(1)}% (floor '"$threshold"'%)`);
' "$coverage_report"

"$regal" lint --format compact policies

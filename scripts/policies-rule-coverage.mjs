// Per-rule coverage for the policy gate (scripts/policies-check.sh): every deny rule must be reached by
// at least one test. A percentage floor over all lines lets a new rule through untested (one rule is a
// few lines of hundreds); this names each deny rule whose head no test made true.
//
//   node scripts/policies-rule-coverage.mjs <opa inspect -a --format json output> <opa test --coverage output>
//
// `opa inspect -a` gives each deny rule's METADATA and the row of its head; `opa test --coverage` marks a
// rule's head covered when the rule produced a value in some test (its body held), so an uncovered
// head is a denial no test ever saw.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [inspectPath, coveragePath] = process.argv.slice(2);
const inspect = JSON.parse(readFileSync(inspectPath, 'utf8'));
const coverage = JSON.parse(readFileSync(coveragePath, 'utf8'));

const denyRules = (inspect.annotations ?? []).filter((a) => {
  const path = a.path ?? [];
  return path.length > 0 && path[path.length - 1]?.value === 'deny' && a.location?.file;
});
// A deny rule without code, step or rank (or with an unknown step, a non-4xx status) would fail closed on
// every match; the build, start and reload refuse it, and so does the gate, naming it.
const { denyRuleProblems } = await import('./policies-build.mjs');
const metadataProblems = await denyRuleProblems(fileURLToPath(new URL('..', import.meta.url)));
if (metadataProblems.length > 0) {
  console.error("policies-check: a deny rule's METADATA is incomplete or invalid:");
  for (const line of metadataProblems) console.error(`  ${line}`);
  process.exit(1);
}
const unreached = [];
for (const rule of denyRules) {
  const { file, row } = rule.location;
  const covered = coverage.files?.[file]?.covered ?? [];
  const reached = covered.some((range) => range.start.row <= row && range.end.row >= row && range.start.col === 1);
  if (!reached) unreached.push(`  ${file}:${row}  deny rule ${rule.annotations?.custom?.code ?? '(no code)'} is reached by no test`);
}
if (denyRules.length === 0) {
  console.error('policies-check: no deny rule with METADATA found; every deny rule needs a # METADATA block with custom.code');
  process.exit(1);
}
if (unreached.length > 0) {
  console.error('policies-check: a deny rule no test reaches (add a case to policies/admission/testdata/cases.yaml):');
  for (const line of unreached) console.error(line);
  process.exit(1);
}
console.log(`policies-check: every deny rule reached by a test (${denyRules.length} rules)`);

# METADATA
# title: Admission tests
# description: |
#   Runs every case of the decision table (testdata/cases.yaml) through the Rego
#   engine. test/policy/decision.test.ts runs the same table through the compiled
#   wasm, so both engines are held to the same answers. The few tests after the
#   table cover what a fixed fixture cannot: fail-closed behaviour on incomplete
#   operator data.
package admission_test

import data.admission

# The table, loaded by `opa test policies` from testdata/ beside this file.
table := admission.testdata

# The fields a case may pin down, beyond its name and input.
checked := {"allow", "code", "codes", "team", "band", "scope", "guardrails"}

# What a decision says, in the table's vocabulary.
observed(result) := object.union(
	object.filter(result, ["allow", "team", "band", "scope", "guardrails"]),
	{
		"code": first_code(result),
		"codes": [d.code | some d in result.denials],
	},
)

# Every way a case's decision differs from the table, naming the case and showing
# both sides, so a failure reads without a debugger (scripts/policies-check.sh
# prints them when the table test fails).
case_mismatches(case, result) := (fields | message_includes) | message_excludes if {
	expected := object.filter(case, checked)
	got := object.filter(observed(result), object.keys(expected))
	fields := {{"case": case.name, "expected": expected, "got": got} | got != expected}
	message := first_message(result)
	message_includes := {{"case": case.name, "message": message, "missing": text} |
		some text in object.get(case, "messageIncludes", [])
		not contains(message, text)
	}
	message_excludes := {{"case": case.name, "message": message, "unexpected": text} |
		some text in object.get(case, "messageExcludes", [])
		contains(message, text)
	}
}

# A decision's own invariants: allow is exactly "no denials", and denials are in
# answer order (by step; the rank inside a step is checked by the table's codes).
invariant_breaches(case, result) := {{"case": case.name, "breach": breach} |
	some breach, broken in {
		"allow is not count(denials) == 0": result.allow != (count(result.denials) == 0),
		"denials are not sorted by step": [d.step | some d in result.denials] != sort([d.step | some d in result.denials]),
	}
	broken
}

test_table_has_cases if count(table.cases) >= 30

# One outcome per case. A helper that is undefined for a case drops the case from
# the list, so the count guards against a check that silently checks nothing.
test_every_case_matches_the_table if {
	outcomes := [outcome |
		some case in table.cases
		result := admission.decision with input as case.input
			with data.catalog as table.fixture.catalog
			with data.rules as table.fixture.rules
		outcome := case_mismatches(case, result) | invariant_breaches(case, result)
	]
	count(outcomes) == count(table.cases)
	mismatches := {m | some outcome in outcomes; some m in outcome}
	mismatches == set()
}

# --- fail closed on incomplete operator data ---------------------------------

red_call := {
	"principal": {
		"id": "did:web:example.test:tenant:x",
		"rung": "contracted",
		"rungExpired": false,
		"aup": true,
		"scopes": [{"id": "owned", "tasks": ["code-review"]}],
	},
	"model": "red-whitehacker-a",
	"task": "code-review",
	"scopeId": null,
	"findings": [],
}

first_code(result) := result.denials[0].code if count(result.denials) > 0

else := null

first_message(result) := result.denials[0].message if count(result.denials) > 0

else := ""

# A model of a team the rules do not know.
purple_model := {"team": "purple", "available": true, "tasks": ["code-review"]}

test_model_without_available_flag_is_refused if {
	result := admission.decision with input as red_call
		with data.catalog.models as {"red-whitehacker-a": {"team": "red", "tasks": ["code-review"]}}
		with data.rules as table.fixture.rules
	first_code(result) == "route-not-configured"
}

test_unknown_team_gets_every_requirement if {
	# A principal with nothing but an id: no rung, no consent, no scope.
	call := object.union(object.remove(red_call, ["principal"]), {"principal": {"id": "did:web:example.test:tenant:y"}})
	result := admission.decision with input as call
		with data.catalog.models as {"red-whitehacker-a": purple_model}
		with data.rules as table.fixture.rules
	[d.code | some d in result.denials] == [
		"verification-required",
		"aup-consent-required",
		"research-scope-required",
		"task-not-offered",
	]
}

# Rungs are operator data: with no rung opening the offensive band, its tasks are
# not offered at all rather than admitted.
test_band_no_rung_opens_is_not_offered if {
	call := object.union(red_call, {"task": "c2-tooling", "principal": {"rung": "business"}})
	result := admission.decision with input as call
		with data.catalog as table.fixture.catalog
		with data.rules as json.patch(table.fixture.rules, [{"op": "remove", "path": "/rungs/contracted"}])
	first_code(result) == "task-not-offered"
}

# A rung whose band the band list does not know opens nothing: the remedy named
# is the next rung up.
test_rung_with_unknown_band_opens_nothing if {
	result := admission.decision with input as object.union(red_call, {"principal": {"rung": "card"}})
		with data.catalog as table.fixture.catalog
		with data.rules as object.union(table.fixture.rules, {"rungs": {"card": {"band": "code-reveiw"}}})
	first_code(result) == "identity-rung-required"
}

# A rung without a level still refuses; the message shows "?" for the level.
test_rung_without_level_still_refuses if {
	call := object.union(red_call, {"task": "c2-tooling", "principal": {"rung": "card"}})
	result := admission.decision with input as call
		with data.catalog as table.fixture.catalog
		with data.rules as json.remove(table.fixture.rules, ["rungs/contracted/level"])
	first_code(result) == "contracted-rung-required"
	contains(result.denials[0].message, "(?)")
}

test_rung_claimed_with_expiry_is_no_rung if {
	result := admission.decision with input as object.union(red_call, {"principal": {"rungExpired": true}})
		with data.catalog as table.fixture.catalog
		with data.rules as table.fixture.rules
	first_code(result) == "verification-required"
	contains(result.denials[0].message, "expired")
}

test_decision_is_defined_for_an_empty_input if {
	result := admission.decision with input as {}
		with data.catalog as table.fixture.catalog
		with data.rules as table.fixture.rules
	result.allow == false
	first_code(result) == "unauthenticated"
	result.guardrails == {"block": [], "redact": [], "flag": []}
}

# A deny rule whose METADATA lacks a field, or names an unknown step, still
# denies, under its own code, rather than leaving the denial undefined (admit).
test_deny_rule_with_incomplete_metadata_still_denies if {
	admission.denial({}, "refused") == invalid_denial
	every custom in [
		{"step": 3, "rank": 8},
		{"code": "tenant-embargoed", "step": 3},
		{"code": "tenant-embargoed"},
		{"code": "tenant-embargoed", "step": 9, "rank": 1},
		{"code": 12345, "step": 3, "rank": 1},
		{"code": "tenant-embargoed", "step": 3, "rank": 1, "status": "teapot"},
	] {
		admission.denial({"custom": custom}, "refused") == invalid_denial
	}
}

invalid_denial := {
	"code": "policy-rule-invalid",
	"step": 3,
	"rank": 0,
	"status": 403,
	"message": "a deny rule of the admission policy has incomplete metadata; refused until the operator fixes it",
}

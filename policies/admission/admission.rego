# METADATA
# title: Admission
# description: |
#   Decides whether one call is admitted, and if not, why. The gateway evaluates
#   `decision` once per call (compiled to wasm, in-process). The catalog and the
#   rules arrive as `data` (operator YAML, no recompile on edit); the call arrives
#   as `input`: principal, model, task, scopeId and the ids of the guardrail rules
#   the detectors matched.
#
#   Admission order (docs/decisions.md): 1 principal, 2 model and route,
#   3 team requirements, 4 quota (decided atomically in the store, not here),
#   5 guardrails. Every failed check adds one denial; `denials` is sorted by step,
#   then by the check's rank inside its step, so `denials[0]` is the answer and
#   the rest are kept for logs. Checks fail closed: a missing fact, an unknown
#   rung or an unknown team refuses rather than admits.
package admission

# METADATA
# title: Decision
# description: |
#   The admission decision: allow, the sorted denials, and what the call runs
#   under (team, band, scope) plus the guardrail actions the findings trigger.
# entrypoint: true
decision := {
	"allow": count(denials) == 0,
	"denials": denials,
	"team": team,
	"band": band,
	"scope": scope,
	"guardrails": guardrails,
}

# Denials in answer order. The rank is only a sort key and stays out of the result.
denials := [{"code": code, "message": message, "step": step, "status": status} |
	some [step, _, code, message, status] in sort([[d.step, d.rank, d.code, d.message, d.status] | some d in deny])
]

# Builds a denial from the deny rule's own METADATA, so the code, step, rank and
# HTTP status a reviewer reads above a rule are exactly what the rule returns.
# The gateway answers with this status and message (403 when the rule names no
# status), so a new code needs no change outside the policy.
denial(annotation, message) := {
	"code": annotation.custom.code,
	"step": annotation.custom.step,
	"rank": annotation.custom.rank,
	"status": object.get(annotation.custom, "status", 403),
	"message": message,
} if {
	denial_metadata_valid(annotation)
}

# A deny rule whose METADATA is missing or malformed still denies (fail closed):
# a missing field would otherwise leave the denial undefined and admit the call.
# The build, the policy gate and every load refuse such a rule by name first;
# this is the last line should one be served anyway.
denial(annotation, _) := {
	"code": "policy-rule-invalid",
	"step": 3,
	"rank": 0,
	"status": 403,
	"message": "a deny rule of the admission policy has incomplete metadata; refused until the operator fixes it",
} if {
	not denial_metadata_valid(annotation)
}

denial_steps := {1, 2, 3, 5}

denial_metadata_valid(annotation) if {
	custom := object.get(annotation, "custom", {})
	is_string(custom.code)
	regex.match(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`, replace(custom.code, "<rung>", "rung"))
	custom.step in denial_steps
	is_number(custom.rank)
	custom.rank >= 1
	denial_status_valid(object.get(custom, "status", 403))
}

denial_status_valid(status) if {
	is_number(status)
	status >= 400
	status < 600
}

# ---------------------------------------------------------------------------
# Facts about the call
# ---------------------------------------------------------------------------

authenticated if is_object(input.principal)

# The call's names as messages show them. A missing field shows as "" rather than
# leaving the message, and with it the denial, undefined: that would admit.
default model_name := ""

model_name := input.model if is_string(input.model)

default task_name := ""

task_name := input.task if is_string(input.task)

default scope_name := ""

scope_name := input.scopeId if is_string(input.scopeId)

model := data.catalog.models[input.model]

default team := null

team := model.team

# Undefined when the model is unknown, so no team requirement is checked for it.
team_rules := object.get(data.rules.teams, team, {}) if model

# A team requirement holds unless the team's rules switch it off explicitly:
# an unknown team or a missing key fails closed.
requires_verification if object.get(team_rules, "requiresVerification", true) != false

requires_aup if object.get(team_rules, "requiresAup", true) != false

requires_scope if object.get(team_rules, "requiresScope", true) != false

# Position of each band in the ordered list: a higher position is a more sensitive band.
band_rank[name] := i if some i, name in data.rules.bands

default band := null

band := data.rules.taskBands[input.task]

# The principal's rung, undefined when there is none, it expired, or the name is
# not in the rung table (an unknown rung is no rung).
rung := data.rules.rungs[input.principal.rung] if not input.principal.rungExpired

verified if rung

aup_accepted if input.principal.aup == true

approved_scope_ids contains s.id if some s in input.principal.scopes

scope_named if input.scopeId != null

named_scope_unapproved if {
	scope_named
	not input.scopeId in approved_scope_ids
}

# The lowest rung whose band opens the task's band: the rung a closed band's
# denial names as the remedy. Undefined when no rung opens the band. Ties in
# rank go to the first name, so a misnumbered ladder still gives one answer.
required_rung := opening[0][1] if {
	opening := sort([[r.rank, name] | some name, r in data.rules.rungs; band_rank[r.band] >= band_rank[band]])
}

# A task is offered when the model lists it, its band is within the team's
# ceiling (blue never reaches offensive), and, for teams that climb rungs, some
# rung opens the band.
task_offered if {
	input.task in model.tasks
	band_rank[band] <= band_rank[team_rules.maxBand]
	rung_reachable
}

# The principal's rung opens the task's band. Written positively so that an
# unknown band on either side counts as closed.
band_open_at_rung if band_rank[band] <= band_rank[rung.band]

rung_reachable if not requires_verification

rung_reachable if required_rung

model_available if model.available == true

# Messages name the model, task, band, rung or scope, never prompt text or tokens.

verification_message := sprintf("verification has expired; renew it to use model %s", [model_name]) if {
	input.principal.rungExpired == true
} else := sprintf("model %s needs a verified principal; complete card verification", [model_name])

out_of_scope_message := sprintf("task %s is not listed by scope %s", [task_name, scope_name]) if {
	scope_named
} else := sprintf("task %s is not listed by any approved scope", [task_name])

# ---------------------------------------------------------------------------
# The scope the call runs under
# ---------------------------------------------------------------------------
# A named scope (jobs) is used only if it is approved and lists the task; it is
# never silently swapped for another. With no scope named (chat), the first
# approved scope, in approval order, that lists the task is used. The rule is
# the same for every team: a blue-team call needs no scope but is attributed to
# one when one lists its task.

default scope := null

scope := input.scopeId if {
	scope_named
	some s in input.principal.scopes
	s.id == input.scopeId
	input.task in s.tasks
}

scope := listing[0] if {
	not scope_named
	listing := [s.id | some s in input.principal.scopes; input.task in s.tasks]
}

# ---------------------------------------------------------------------------
# Guardrails: the actions the detectors' findings trigger, unknown ids ignored
# ---------------------------------------------------------------------------

guardrails[action] := sort({id | some id in input.findings; data.rules.guardrails[id].action == action}) if {
	some action in ["block", "redact", "flag"]
}

# ---------------------------------------------------------------------------
# Step 1: principal
# ---------------------------------------------------------------------------

# METADATA
# title: Unauthenticated
# description: Every call needs a signed-in principal (a valid PAT or session).
# custom:
#   code: unauthenticated
#   status: 401
#   step: 1
#   rank: 1
deny contains denial(rego.metadata.rule(), "sign in, or send a valid personal access token") if {
	not authenticated
}

# ---------------------------------------------------------------------------
# Step 2: model known, route configured
# ---------------------------------------------------------------------------

# METADATA
# title: Model not found
# description: The catalog is authoritative for which models exist.
# custom:
#   code: model-not-found
#   status: 404
#   step: 2
#   rank: 1
deny contains denial(rego.metadata.rule(), message) if {
	not model
	message := sprintf("model %s is not in the catalog", [model_name])
}

# METADATA
# title: Route not configured
# description: |
#   A listed model whose route has no origin is refused by name at admission,
#   before any quota is spent.
# custom:
#   code: route-not-configured
#   status: 503
#   step: 2
#   rank: 2
deny contains denial(rego.metadata.rule(), message) if {
	model
	not model_available
	message := sprintf("model %s is listed but its route is not configured; no quota was spent", [model_name])
}

# ---------------------------------------------------------------------------
# Step 3: team requirements (verification, AUP, scope, task, band)
# ---------------------------------------------------------------------------

# METADATA
# title: Verification required
# description: Red-team models run only for a principal with a current verified rung.
# custom:
#   code: verification-required
#   step: 3
#   rank: 1
deny contains denial(rego.metadata.rule(), verification_message) if {
	requires_verification
	not verified
}

# METADATA
# title: AUP consent required
# description: Red-team models need the principal's consent to the acceptable-use policy.
# custom:
#   code: aup-consent-required
#   step: 3
#   rank: 2
deny contains denial(rego.metadata.rule(), message) if {
	requires_aup
	not aup_accepted
	message := sprintf("model %s needs consent to the acceptable-use policy", [model_name])
}

# METADATA
# title: Research scope required
# description: Red-team models need at least one approved research scope.
# custom:
#   code: research-scope-required
#   step: 3
#   rank: 3
deny contains denial(rego.metadata.rule(), message) if {
	requires_scope
	count(approved_scope_ids) == 0
	message := sprintf("model %s needs an approved research scope", [model_name])
}

# METADATA
# title: Task not offered
# description: |
#   The model does not offer the task, or the task's band is above the team's
#   ceiling (the blue team never reaches the offensive band).
# custom:
#   code: task-not-offered
#   step: 3
#   rank: 4
deny contains denial(rego.metadata.rule(), message) if {
	model
	not task_offered
	message := sprintf("task %s is not offered on model %s", [task_name, model_name])
}

# METADATA
# title: Higher rung required
# description: |
#   The task's band is above the band the principal's rung opens. The code names
#   the lowest rung that opens it (`<rung>` below): the remedy is a higher rung,
#   never rewording the request.
# custom:
#   code: <rung>-rung-required
#   step: 3
#   rank: 5
deny contains object.union(denial(annotation, message), {"code": code}) if {
	requires_verification
	verified
	not band_open_at_rung
	annotation := rego.metadata.rule()
	code := replace(annotation.custom.code, "<rung>", required_rung)
	message := sprintf(
		"the %s band needs the %s rung (%s) or higher; the remedy is a higher rung, not rewording the request",
		[band, required_rung, object.get(data.rules.rungs[required_rung], "level", "?")],
	)
}

# METADATA
# title: Scope not approved
# description: |
#   A scope named by the call must be one of the principal's approved scopes,
#   on every team: naming a scope one does not hold is refused, not ignored.
# custom:
#   code: scope-not-approved
#   step: 3
#   rank: 6
deny contains denial(rego.metadata.rule(), message) if {
	named_scope_unapproved
	message := sprintf("scope %s is not an approved scope of this principal", [scope_name])
}

# METADATA
# title: Task out of scope
# description: |
#   For teams that need a scope, the task must be listed by the named scope, or,
#   when none is named, by some approved scope.
# custom:
#   code: task-out-of-scope
#   step: 3
#   rank: 7
deny contains denial(rego.metadata.rule(), out_of_scope_message) if {
	requires_scope
	count(approved_scope_ids) > 0
	not named_scope_unapproved
	scope == null
}

# ---------------------------------------------------------------------------
# Step 5: guardrails (step 4, quota, is decided in the store)
# ---------------------------------------------------------------------------

# METADATA
# title: Guardrail blocked
# description: |
#   A finding whose rule action is block refuses the call. The message never
#   names the rule: rule ids go to receipts and logs only.
# custom:
#   code: guardrail-blocked
#   step: 5
#   rank: 1
deny contains denial(rego.metadata.rule(), "the request was refused by a guardrail block rule") if {
	count(guardrails.block) > 0
}

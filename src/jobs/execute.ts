/**
 * What a job's runner does with a call: forward it to its route's origin (the upstream body serialised
 * once, the reply read as an OpenAI answer, src/openai/answer.ts), check the echoed model against the
 * catalog's echo rule, mask secrets in the model's own output, settle the usage and write the receipt —
 * with the job's end in the same write — and hand back the finished chat.completion. A failure ends the
 * call the one shared way (src/call/end.ts).
 */
import { GatewayError } from '../errors.js';
import { maskAnswer, normaliseAnswer, type AnswerMasks, type UpstreamAnswer } from '../openai/answer.js';
import type { Guardrails } from '../guard/types.js';
import { jobResult } from '../openai/completion.js';
import { upstreamPayload } from '../compat/forwarded.js';
import { forwardRoute, mayFailOver } from '../upstream/route.js';
import type { ModelRuntime } from '../config/compile.js';
import { echoMatches } from '../upstream/echo.js';
import type { Call } from '../call/call.js';
import { newReceiptId } from '../call/receipt.js';
import { answeredSettlement } from '../call/meter-requests.js';
import { endUnanswered } from '../call/end.js';
import { settleCall } from '../receipts/receipt.js';
import type { JobResult } from './job.js';
import type { JobEnding } from './engine.js';
import type { Meter, Settlement } from '../metering/meter.js';
import type { Logger } from '../log.js';
import { metrics, upstreamMetrics } from '../observe/metrics.js';

/** The job's result for the call's answer and settlement. The receipt id is built here too: the result rides in the settlement's write, before call.receiptId is set. */
function resultOf(call: Call, s: Settlement): JobResult {
  return jobResult({ callId: call.id, answer: call.answer!, settlement: s, receiptId: call.receiptId ?? newReceiptId(call.id) });
}

/** How long a text `answerMasks` may remember as clean, and how many it remembers per guard. */
const REMEMBERED_CHARS = 200;
const REMEMBERED_TEXTS = 256;
const masksOf = new WeakMap<Guardrails, AnswerMasks>();

/**
 * The masks of one runtime's guard, made once per guard (no closures per call). `text` reads the short
 * names an answer carries on their own (`model`, `system_fingerprint`, tool call ids): an upstream names
 * the same model call after call, and the guard is a pure function of its compiled rules and the text, so
 * a short text found clean is remembered (bounded, the oldest first) and not scanned again. A text that
 * needed a mask is not remembered: no credential is kept past its call.
 */
function answerMasks(guard: Guardrails): AnswerMasks {
  let masks = masksOf.get(guard);
  if (masks) return masks;
  const clean = new Set<string>();
  masks = {
    text(text: string): string {
      if (text.length > REMEMBERED_CHARS) return guard.maskOutput(text).text;
      if (clean.has(text)) return text;
      const masked = guard.maskOutput(text);
      if (masked.masked === 0) {
        if (clean.size >= REMEMBERED_TEXTS) clean.delete(clean.values().next().value!);
        clean.add(text);
      }
      return masked.text;
    },
    message: (m) => guard.maskMessage(m),
  };
  masksOf.set(guard, masks);
  return masks;
}

/** What a job's runner needs: the meter (settlement and receipt) and the logger. */
export interface ExecuteDeps {
  meter: Meter;
  log: Logger;
}

export async function executeCall(deps: ExecuteDeps, call: Call, signal: AbortSignal, retries: number, ending: JobEnding): Promise<JobResult> {
  metrics.jobsRunning.inc();
  try {
    const result = await executeCallOnce(deps, call, signal, retries, ending);
    metrics.jobsFinished.child('succeeded', { state: 'succeeded' }).inc();
    return result;
  } catch (err) {
    metrics.jobsFinished.inc({ state: err instanceof GatewayError && err.code === 'job-expired' ? 'expired' : 'failed' });
    throw err;
  } finally {
    metrics.jobsRunning.dec();
  }
}

async function executeCallOnce(deps: ExecuteDeps, call: Call, signal: AbortSignal, retries: number, ending: JobEnding): Promise<JobResult> {
  try {
    // The route's origins in turn, then the fallback model's route if the route has one (src/upstream/route.ts).
    const { answer, model } = await forwardWithFallback(call, signal, retries);
    // Masked before anything keeps it: the receipt (its echoed model, on a mismatch too), the job result
    // and so an idempotent replay all read call.answer. The echo rule reads the model as it came.
    call.answer = maskAnswer(answer, answerMasks(call.runtime.guard));
    if (!echoMatches(model.echo, model.upstreamModel, answer)) {
      throw new GatewayError('upstream-model-mismatch', `route ${model.route} answered for a model other than the one routed for ${model.id}`);
    }
    // The job's end rides in the settlement's write: one durable write for the answer, charge and receipt.
    // The result built for it is the one returned, unless the settlement stored earlier (a repeat) differs.
    let built: { s: Settlement; result: JobResult } | undefined;
    const settled = await settleCall(deps.meter, call, 'answered', answeredSettlement(call.answer), undefined, (s) => {
      built = { s, result: resultOf(call, s) };
      return ending.succeeded(built.result);
    });
    return built?.s === settled ? built.result : resultOf(call, settled);
  } catch (err) {
    // An aborted job ends as why it was aborted (out of run time, or its gateway stopping), not as the
    // upstream error the abort surfaced as.
    const why = signal.aborted ? (signal.reason instanceof GatewayError ? signal.reason : new GatewayError('job-expired')) : err;
    await endUnanswered(deps.meter, deps.log, call, why);
    throw why;
  }
}

/**
 * Whether the fallback model's own catalog entry would admit this call: its task list and its limits (turns,
 * tools, input characters, output tokens). A call it would refuse asked directly is not sent to it; it fails
 * as the primary failed.
 */
function fallbackTakes(call: Call, fallback: ModelRuntime): boolean {
  const valid = call.valid!;
  const limits = fallback.limits;
  return (
    fallback.tasks.has(valid.task) &&
    valid.request.messages.length <= limits.turns &&
    (valid.request.tools?.length ?? 0) <= limits.tools &&
    valid.inputChars <= limits.inputChars &&
    valid.maxTokens <= limits.outputTokens
  );
}

/**
 * The call's model on its route; when every origin failed without running the call and the route names a
 * fallback model for it, that model on its own route (its upstream id in the body, its echo rule on the
 * answer). Records which origin answered, and the fallback, on the call for its receipt.
 */
async function forwardWithFallback(call: Call, signal: AbortSignal, retries: number): Promise<{ answer: UpstreamAnswer; model: ModelRuntime }> {
  const model = call.model!;
  try {
    // Serialised once for every origin and attempt; the bytes of JSON.stringify(body) (src/compat/forwarded.ts).
    const { answer, target } = await forwardRoute(model.upstream!, upstreamPayload(call.forward!), normaliseAnswer, signal, retries);
    call.upstreamOrigin = `${model.route}/${target.name}`;
    return { answer, model };
  } catch (err) {
    const fallback = model.fallbackModel ? call.runtime.models.get(model.fallbackModel) : undefined;
    if (!fallback?.upstream || !mayFailOver(err) || signal.aborted || !fallbackTakes(call, fallback)) throw err;
    const { answer, target } = await forwardRoute(
      fallback.upstream,
      upstreamPayload({ ...call.forward!, model: fallback.upstreamModel }),
      normaliseAnswer,
      signal,
      retries,
    );
    upstreamMetrics.fallbacks.inc({ model: model.id, fallback: fallback.id });
    call.upstreamOrigin = `${fallback.route}/${target.name}`;
    call.fallbackModel = fallback.id;
    return { answer, model: fallback };
  }
}

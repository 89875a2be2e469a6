/**
 * What a job's runner does with a call: forward it to its route's origin, check the echoed model against the
 * catalog's echo rule, mask secrets in the model's own output, settle the usage and write the receipt — with
 * the job's end in the same write — and hand back the finished chat.completion. A failure ends the call the one shared way (end-call.ts).
 */
import { GatewayError } from '../errors.js';
import type { UpstreamAnswer } from '../upstream/forward.js';
import { forwardRoute, mayFailOver } from '../upstream/route.js';
import type { ModelRuntime } from '../config/compile.js';
import { echoMatches } from '../upstream/echo.js';
import type { Guardrails } from '../guard/index.js';
import type { Call } from '../stages/call.js';
import type { Deps } from '../app/deps.js';
import { settleCall } from '../receipts/receipt.js';
import { completionBody } from '../stages/respond.js';
import { endUnanswered } from '../stages/end-call.js';
import type { JobResult } from './job.js';
import type { JobEnding } from './engine.js';
import type { Settlement } from '../metering/meter.js';
import { metrics, upstreamMetrics } from '../observe/metrics.js';

/** Every string of the answer the client reads is masked: content, refusal, and each tool call's id, name and arguments. */
function maskAnswer(guard: Guardrails, answer: UpstreamAnswer): UpstreamAnswer {
  const mask = (text: string) => guard.maskOutput(text).text;
  return {
    ...answer,
    choices: answer.choices.map((c) => ({
      ...c,
      message: {
        ...c.message,
        content: c.message.content === null ? null : mask(c.message.content),
        ...(typeof c.message.refusal === 'string' ? { refusal: mask(c.message.refusal) } : {}),
        ...(c.message.tool_calls
          ? {
              tool_calls: c.message.tool_calls.map((tc) => ({
                ...tc,
                id: mask(tc.id),
                function: { ...tc.function, name: mask(tc.function.name), arguments: mask(tc.function.arguments) },
              })),
            }
          : {}),
      },
    })),
  };
}

/** The job's result: the chat.completion as the client gets it, and its parts for the jobs API. */
function jobResult(call: Call, s: Settlement): JobResult {
  const first = call.answer!.choices[0]!;
  return {
    completion: completionBody(call, s),
    content: first.message.content,
    toolCalls: first.message.tool_calls ?? null,
    finishReason: first.finish_reason,
  };
}

export async function executeCall(deps: Deps, call: Call, signal: AbortSignal, retries: number, ending: JobEnding): Promise<JobResult> {
  metrics.jobsRunning.inc();
  try {
    const result = await executeCallOnce(deps, call, signal, retries, ending);
    metrics.jobsFinished.inc({ state: 'succeeded' });
    return result;
  } catch (err) {
    metrics.jobsFinished.inc({ state: err instanceof GatewayError && err.code === 'job-expired' ? 'expired' : 'failed' });
    throw err;
  } finally {
    metrics.jobsRunning.dec();
  }
}

async function executeCallOnce(deps: Deps, call: Call, signal: AbortSignal, retries: number, ending: JobEnding): Promise<JobResult> {
  try {
    // The route's origins in turn, then the fallback model's route if the route has one (src/upstream/route.ts).
    const { answer, model } = await forwardWithFallback(call, signal, retries);
    call.answer = answer;
    if (!echoMatches(model.echo, model.upstreamModel, answer)) {
      throw new GatewayError('upstream-model-mismatch', `route ${model.route} answered for a model other than the one routed for ${model.id}`);
    }
    call.answer = maskAnswer(call.runtime.guard, answer);
    // The job's end rides in the settlement's write: one durable write for the answer, charge and receipt.
    // The result built for it is the one returned, unless the settlement stored earlier (a repeat) differs.
    let built: { s: Settlement; result: JobResult } | undefined;
    const settled = await settleCall(deps.meter, call, 'answered', { usage: call.answer.usage, chargeable: true }, undefined, (s) => {
      built = { s, result: jobResult(call, s) };
      return ending.succeeded(built.result);
    });
    return built?.s === settled ? built.result : jobResult(call, settled);
  } catch (err) {
    // An aborted job ends as why it was aborted (out of run time, or its gateway stopping), not as the
    // upstream error the abort surfaced as.
    const why = signal.aborted ? (signal.reason instanceof GatewayError ? signal.reason : new GatewayError('job-expired')) : err;
    await endUnanswered(deps.store, deps.meter, deps.log, call, why);
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
    const { answer, target } = await forwardRoute(model.upstream!, call.forward!, signal, retries);
    call.upstreamOrigin = `${model.route}/${target.name}`;
    return { answer, model };
  } catch (err) {
    const fallback = model.fallbackModel ? call.runtime.models.get(model.fallbackModel) : undefined;
    if (!fallback?.upstream || !mayFailOver(err) || signal.aborted || !fallbackTakes(call, fallback)) throw err;
    const { answer, target } = await forwardRoute(fallback.upstream, { ...call.forward!, model: fallback.upstreamModel }, signal, retries);
    upstreamMetrics.fallbacks.inc({ model: model.id, fallback: fallback.id });
    call.upstreamOrigin = `${fallback.route}/${target.name}`;
    call.fallbackModel = fallback.id;
    return { answer, model: fallback };
  }
}

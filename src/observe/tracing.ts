/**
 * OpenTelemetry traces, off by default and on with the standard environment variables: set
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) and spans go out over OTLP/HTTP
 * (`OTEL_EXPORTER_OTLP_PROTOCOL`, headers, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
 * `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*` are read by the SDK as documented); `OTEL_SDK_DISABLED=true` keeps
 * them off. Started once per process by main.ts, before the gateway.
 *
 * What is traced (spans made by hand, no auto-instrumentation): a server span per request (named by method
 * and route pattern, continuing the W3C `traceparent` the client sent), a span per pipeline stage (its own
 * time, as the stage histogram measures it), and the upstream call as a client span whose context goes
 * upstream as `traceparent`. Spans carry route patterns, statuses, error codes, model and route names —
 * never a principal, token or prompt. With tracing off these calls go to the API's no-op tracer.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace, type Context as OtelContext, type Span } from '@opentelemetry/api';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

export const tracer = trace.getTracer('portcullis');

let provider: NodeTracerProvider | null = null;

/** Whether the environment turns tracing on. */
export function tracingWanted(env: Record<string, string | undefined>): boolean {
  if ((env['OTEL_SDK_DISABLED'] ?? '').toLowerCase() === 'true') return false;
  if ((env['OTEL_TRACES_EXPORTER'] ?? '').toLowerCase() === 'none') return false;
  return Boolean(env['OTEL_EXPORTER_OTLP_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
}

/**
 * Registers the SDK when the environment asks for it; returns whether tracing is on. The SDK, its exporter
 * and resources are imported here, not at the top: with tracing off (the default) a process never loads them
 * (a few MiB of code and heap per worker); the API above is all the rest of the gateway calls.
 */
export async function startTracing(env: Record<string, string | undefined> = process.env): Promise<boolean> {
  if (provider || !tracingWanted(env)) return provider !== null;
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { detectResources, envDetector, resourceFromAttributes },
    { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
  ]);
  const resource = resourceFromAttributes({ 'service.name': env['OTEL_SERVICE_NAME'] ?? 'portcullis' }).merge(detectResources({ detectors: [envDetector] }));
  provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  provider.register({ propagator: new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }) });
  return true;
}

/** Sends the spans still buffered; called on shutdown. */
export async function stopTracing(): Promise<void> {
  const p = provider;
  provider = null;
  await p?.shutdown();
}

/** The server span of a request, continuing the client's `traceparent`; `run` runs inside it. */
export function serverSpan<T>(headers: Record<string, string | string[] | undefined>, name: string, run: (span: Span) => Promise<T>): Promise<T> {
  const parent = propagation.extract(context.active(), headers);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER }, parent);
  return context.with(trace.setSpan(parent, span), () => run(span));
}

/** Whether spans go anywhere: with tracing off, per-stage spans are not even started (no-op span objects cost a call). */
export function tracingOn(): boolean {
  return provider !== null;
}

/** A stage's span (own time): started now, ended by the returned function. */
export function stageSpan(stage: string): () => void {
  const span = tracer.startSpan(`stage ${stage}`, { attributes: { 'portcullis.stage': stage } });
  return () => span.end();
}

/** The upstream call as a client span; `headers` gets its `traceparent`. */
export async function clientSpan<T>(route: string, headers: Record<string, string>, run: () => Promise<T>): Promise<T> {
  const span = tracer.startSpan('POST upstream chat/completions', {
    kind: SpanKind.CLIENT,
    attributes: { 'portcullis.route': route, 'http.request.method': 'POST' },
  });
  const ctx: OtelContext = trace.setSpan(context.active(), span);
  propagation.inject(ctx, headers);
  try {
    return await context.with(ctx, run);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as { code?: string }).code ?? (err as Error).name });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * The tracer of the OpenTelemetry SDK the operator registered, or undefined when none is.
 *
 * `trace.getTracer()` is a no-op until an SDK registers, but not a free one: the API's global
 * provider is a proxy whose `getTracer` builds a proxy tracer, and that tracer's `startSpan`
 * builds a non-recording span, on every call. Asking the proxy for its delegate's tracer costs
 * neither, so a process without an SDK makes no span object at all, and the hot paths (a pull is
 * an MCP request and a tool call) allocate nothing for tracing.
 */
import { type Tracer, type TracerProvider, trace } from "@opentelemetry/api";

/** The API's proxy provider (deprecated as a class, kept through API 1.x), as far as it is used here. */
interface DelegatingProvider {
  getDelegateTracer(name: string, version?: string): Tracer | undefined;
}

function delegates(provider: TracerProvider): provider is TracerProvider & DelegatingProvider {
  return typeof (provider as Partial<DelegatingProvider>).getDelegateTracer === "function";
}

export function liveTracer(name: string): Tracer | undefined {
  // Asked each time, not kept: an SDK may register after this module loads, or be disabled.
  const provider = trace.getTracerProvider();
  // A provider that is no proxy was put there by something other than the API: trust it.
  return delegates(provider) ? provider.getDelegateTracer(name) : provider.getTracer(name);
}

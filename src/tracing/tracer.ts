// Tracing as the engine and the API client see it: a tiny facade with no OpenTelemetry type in it.
// Without an OTLP endpoint (src/config/tracing.ts) every span is NO_SPAN and nothing of the SDK is
// loaded; with one, src/tracing/otel.ts backs the facade with the official SDK (src/tracing/open.ts).

/** An attribute value; `undefined` leaves the attribute out. */
export type TraceValue = string | number | boolean | undefined;
export type TraceAttributes = Readonly<Record<string, TraceValue>>;

/** One span under way. Ended once; every string is masked with the configured tokens on the way out. */
export interface TraceSpan {
  setAttributes(attributes: TraceAttributes): void;
  addEvent(name: string, attributes?: TraceAttributes): void;
  /** The span's status becomes an error with this message (the SDK masks it again). */
  fail(message: string): void;
  end(): void;
}

/** `client` for a span per HTTP request sent; `internal` for our own units of work. */
export type SpanKindName = "client" | "internal";

export interface Tracer {
  /** A span, child of `parent` when one is given (spans are passed explicitly, no ambient context). */
  startSpan(name: string, attributes: TraceAttributes, parent?: TraceSpan | null, kind?: SpanKindName): TraceSpan;
}

/** What a command holds: its tracer, and the end that sends what is left (bounded, never throws). */
export interface Tracing {
  readonly tracer: Tracer;
  shutdown(): Promise<void>;
}

/** A span that records nothing. */
export const NO_SPAN: TraceSpan = {
  setAttributes: () => {},
  addEvent: () => {},
  fail: () => {},
  end: () => {},
};

/** The tracer when tracing is off: every span is NO_SPAN. */
export const NO_TRACER: Tracer = { startSpan: () => NO_SPAN };

export const NO_TRACING: Tracing = { tracer: NO_TRACER, shutdown: async () => {} };

/**
 * Runs `fn` in a span that ends when it settles; a throw marks the span failed with the error's
 * message (API errors carry masked messages, and the SDK masks every string again) and goes on.
 */
export async function traced<T>(
  tracer: Tracer,
  name: string,
  attributes: TraceAttributes,
  parent: TraceSpan | null,
  fn: (span: TraceSpan) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(name, attributes, parent);
  try {
    return await fn(span);
  } catch (e) {
    span.fail(e instanceof Error ? e.message : String(e));
    throw e;
  } finally {
    span.end();
  }
}

/** An instant as a span attribute: ISO 8601, UTC. */
export function isoAttribute(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms);
}

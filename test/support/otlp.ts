// Reads the spans of an OTLP/HTTP JSON export request (ExportTraceServiceRequest), flattening
// attribute lists into plain objects.

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
type KeyValue = { key: string; value: AnyValue };

export interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  /** 1 internal, 3 client. */
  readonly kind: number;
  readonly attributes: Record<string, string | number | boolean>;
  readonly events: { readonly name: string; readonly attributes: Record<string, string | number | boolean> }[];
  /** 2: error. */
  readonly status?: { readonly code?: number; readonly message?: string };
  readonly resource: Record<string, string | number | boolean>;
}

interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
  events?: { name: string; attributes?: KeyValue[] }[];
  status?: { code?: number; message?: string };
}

interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: RawSpan[] }[] }[];
}

function plain(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  throw new Error(`unexpected attribute value ${JSON.stringify(v)}`);
}

export function attributesOf(list: readonly KeyValue[] = []): Record<string, string | number | boolean> {
  return Object.fromEntries(list.map((kv) => [kv.key, plain(kv.value)]));
}

/** Every span of one export request, with its resource's attributes. */
export function spansOf(body: unknown): OtlpSpan[] {
  return ((body as ExportRequest).resourceSpans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
        name: s.name,
        kind: s.kind,
        attributes: attributesOf(s.attributes),
        events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
        ...(s.status ? { status: s.status } : {}),
        resource,
      })),
    );
  });
}

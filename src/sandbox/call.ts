// A tiny request helper for tests and benchmarks: builds the request of a catalogue operation
// (path placeholders, query, JSON body, auth headers) against a running sandbox.
import { OPERATIONS, operation } from "../catalogue/index.ts";
import { servedOperations } from "./profile.ts";
import type { Sandbox } from "./types.ts";

export interface CallOptions {
  /** Project whose pcode header (and, unless `token` is given, token) is sent. */
  pcode?: number;
  /** Token to send (null: none); default: the kind the catalogue names (account token, or the project's token). */
  token?: string | null;
  /** Path placeholders and query parameters (query names from the catalogue entry). */
  params?: Record<string, string | number>;
  /** JSON body of POST operations. */
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed body (JSON.parse of the text), or undefined when it does not parse. */
  json: unknown;
}

/** Path + query of an operation; `sb` given: where that sandbox's profile serves it (groups v1/v2). */
export function requestPath(opId: string, params: Record<string, string | number> = {}, sb?: Sandbox): string {
  const op = (sb && servedOperations(OPERATIONS, sb.profile).find((o) => o.id === opId)) || operation(opId);
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined) throw new Error(`${opId}: missing path parameter ${name}`);
    return encodeURIComponent(String(v));
  });
  const query = new URLSearchParams();
  for (const name of op.query ?? []) if (params[name] !== undefined) query.set(name, String(params[name]));
  const qs = query.toString();
  return qs ? `${path}?${qs}` : path;
}

export async function callSandbox(sb: Sandbox, opId: string, opts: CallOptions = {}): Promise<CallResult> {
  const op = operation(opId);
  const project = sb.projects.find((p) => p.pcode === opts.pcode);
  const token = opts.token !== undefined ? opts.token : op.token === "account" ? sb.accountToken : (project?.token ?? null);
  const headers: Record<string, string> = { ...opts.headers };
  if (token !== null) headers[sb.tokenHeader] = token;
  if (opts.pcode !== undefined) headers[sb.pcodeHeader] = String(opts.pcode);
  const init: RequestInit = { method: op.method, headers };
  if (op.method === "POST") {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(opts.body ?? {});
  }
  if (opts.signal) init.signal = opts.signal;
  const res = await fetch(sb.url + requestPath(opId, opts.params, sb), init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

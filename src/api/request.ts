// Pure: turns an operation + parameters into method, path, query and body. No I/O, no credentials.
import type { OperationDef, RequestParams } from "../catalogue/types.ts";
import type { Config } from "../config.ts";

export interface BuiltRequest {
  /** `http(s)://host:port` of the base URL: the key of the connection pool. */
  readonly origin: string;
  readonly method: "GET" | "POST";
  /** Base URL path prefix + operation path + query string. Never holds a credential. */
  readonly path: string;
  /** JSON text for POST operations that declare body fields. */
  readonly body?: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** A request that cannot be built from the given parameters: a bug in the caller, never sent. */
export class RequestBuildError extends Error {
  override readonly name = "RequestBuildError";
}

type ParamValue = NonNullable<RequestParams[string]>;

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Builds the request of one operation; honours `api.overrides[op.id]` only for overridable operations. */
export function buildRequest(op: OperationDef, params: RequestParams, api: Pick<Config["api"], "baseUrl" | "overrides">): BuiltRequest {
  const base = new URL(api.baseUrl);
  const override = op.overridable ? api.overrides[op.id] : undefined;
  const method = override?.method ?? op.method;
  const template = override?.path ?? op.path;

  const path = template.replace(PLACEHOLDER, (_, name: string) => {
    const value = params[name];
    if (value === undefined || (Array.isArray(value) && value.length === 0))
      throw new RequestBuildError(`${op.id}: path parameter {${name}} is missing (template ${template})`);
    return encodeValue(op, name, value, params);
  });

  const query = (op.query ?? [])
    .filter((name) => params[name] !== undefined)
    .map((name) => `${encodeURIComponent(name)}=${encodeValue(op, name, params[name]!, params)}`);

  const headers: Record<string, string> = { accept: op.format === "text" ? "text/plain, application/json" : "application/json" };
  let body: string | undefined;
  if (method === "POST" && op.body) {
    const payload: Record<string, unknown> = {};
    for (const name of op.body) if (params[name] !== undefined) payload[name] = params[name];
    body = JSON.stringify(payload);
    headers["content-type"] = "application/json";
  }

  const prefix = base.pathname.replace(/\/+$/, "");
  const fullPath = `${prefix}${template.startsWith("/") ? "" : "/"}${path}${query.length ? `?${query.join("&")}` : ""}`;
  return body === undefined
    ? { origin: base.origin, method, path: fullPath, headers }
    : { origin: base.origin, method, path: fullPath, body, headers };
}

/**
 * `op.encode[name]` first (base64 of caller_url/url filter values, spec "Cross-project call
 * statistics"), then percent-encoding. Arrays (oids) become comma lists with literal commas, the
 * form of the spec's sample requests.
 */
function encodeValue(op: OperationDef, name: string, value: ParamValue, params: RequestParams): string {
  const encoder = op.encode?.[name];
  if (Array.isArray(value)) {
    const joined = value.map(String);
    return encoder ? encodeURIComponent(encoder(joined.join(","), params)) : joined.map(encodeURIComponent).join(",");
  }
  const text = String(value);
  return encodeURIComponent(encoder ? encoder(text, params) : text);
}

// What `check` advises once for the whole run, where every probe fails for the same reason that
// lies in the configuration: a base URL with the operations' path in it, or a host nobody answers on.
import { operation } from "../catalogue/index.ts";
import type { OperationDef } from "../catalogue/types.ts";
import { ADVICE } from "../engine/describe-error.ts";
import type { ProbeResult } from "./probe.ts";

/** The message not-found probes get when the base URL is the cause (one line per project, not 46). */
export const BASE_URL_NOT_FOUND = "answered 404: see the note on APM_BASE_URL below";

/**
 * A base URL of `http://host/open/api` sends `/open/api/open/api/json/...`: every operation answers
 * 404, and the per-operation advice (set `overrides`) would send the user the wrong way. Found from
 * the base URL's path alone (it repeats the start of the operations' paths), or when every probe
 * sent answered 404, operations with a documented path among them.
 */
export function baseUrlAdvice(baseUrl: string, ops: readonly OperationDef[], results: readonly ProbeResult[]): string | null {
  const url = new URL(baseUrl);
  // The origin never carries a user:password part.
  const root = url.origin;
  const prefix = url.pathname.replace(/\/+$/, "");
  if (prefix !== "" && ops.some((op) => op.path.startsWith(`${prefix}/`)))
    return `APM_BASE_URL has the path ${prefix}, which the operations' paths already begin with (requests went to ${prefix}${prefix}/...): set APM_BASE_URL to ${root}`;
  const answered = results.filter((r) => r.httpStatus !== null);
  if (answered.length < 2 || !answered.every((r) => r.status === "not-found")) return null;
  // Operations whose path the spec leaves open may all be elsewhere on a server: their own
  // advice (overrides) holds. A documented path answering 404 too points at the base URL.
  if (answered.every((r) => operation(r.id).overridable)) return null;
  if (prefix !== "") return `every operation answered 404: APM_BASE_URL is the server's root, without a path; try APM_BASE_URL=${root}`;
  return `every operation answered 404: is ${root} the Open API server? APM_BASE_URL is its root (the operations add /open/api/...)`;
}

/** Not-found probes caused by the base URL say so in one uniform message (the table groups them). */
export function blameBaseUrl(results: readonly ProbeResult[]): ProbeResult[] {
  return results.map((r) => (r.status === "not-found" ? { ...r, message: BASE_URL_NOT_FOUND } : r));
}

/** A server that could not be connected to: what to check, once (the probes say what failed). */
export function unreachableAdvice(baseUrl: string): string {
  return `${ADVICE.unreachable} (APM_BASE_URL is ${new URL(baseUrl).origin})`;
}

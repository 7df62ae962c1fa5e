// Request checks shared by every operation: token and pcode headers, the time window, its limit
// and the clamp to the server clock.
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { OperationDef } from "../catalogue/types.ts";
import { HttpError, type RequestWindow } from "./context.ts";
import { cubesIn, parseTime } from "./grid.ts";
import { acceptedTokens, type ServerProfile } from "./profile.ts";
import type { ProjectWorld } from "./world.ts";

export interface AuthSettings {
  readonly tokenHeader: string;
  readonly pcodeHeader: string;
  readonly accountToken: string;
  readonly worlds: readonly ProjectWorld[];
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

export function pcodeOf(headers: IncomingHttpHeaders, auth: AuthSettings): number | null {
  const text = header(headers, auth.pcodeHeader)?.trim();
  return text && /^\d+$/.test(text) ? Number(text) : null;
}

/**
 * Account operations take the account token, project operations the project token of the pcode
 * header; operations whose token the spec leaves open take what the profile says. Anything else: 401.
 */
export function authorize(op: OperationDef, headers: IncomingHttpHeaders, auth: AuthSettings, profile: ServerProfile): ProjectWorld | null {
  const token = header(headers, auth.tokenHeader);
  const pcode = header(headers, auth.pcodeHeader)?.trim();
  const world = pcode ? (auth.worlds.find((w) => String(w.pcode) === pcode) ?? null) : null;
  if (!token) throw new HttpError(401, "[F] Invalid token");
  if (op.sendsPcode && !world) throw new HttpError(401, pcode ? "[F] Invalid pcode" : "[F] pcode header is required");
  const kinds = acceptedTokens(op, profile);
  const ok =
    (kinds.includes("account") && token === auth.accountToken) || (kinds.includes("project") && world !== null && token === world.token);
  if (!ok) throw new HttpError(401, "[F] Invalid token");
  return op.sendsPcode ? world : null;
}

/** Raw stime/etime as sent: JSON body (POST), query string (event history) or path. */
export function rawWindow(
  op: OperationDef,
  params: Readonly<Record<string, string>>,
  query: URLSearchParams,
  body: Readonly<Record<string, unknown>>,
): { stime: unknown; etime: unknown } | null {
  if (op.windowLimitMs === null) return null;
  if (op.method === "POST") return { stime: body.stime, etime: body.etime };
  if (op.query?.includes("stime")) return { stime: query.get("stime") ?? undefined, etime: query.get("etime") ?? undefined };
  return { stime: params.stime, etime: params.etime };
}

/** Validates the window (400 with a JSON body when over the operation's limit), then clamps etime to `now`. */
export function checkWindow(op: OperationDef, raw: { stime: unknown; etime: unknown }, now: number): RequestWindow {
  const textForms = op.id === "project.agents_window";
  const stime = parseTime(raw.stime, now, textForms);
  const etime = parseTime(raw.etime, now, textForms);
  if (stime === null || etime === null) throw new HttpError(400, "[F] stime and etime must be epoch milliseconds");
  if (etime < stime) throw new HttpError(400, "[F] etime is before stime");
  const limit = op.windowLimitMs!;
  if (etime - stime > limit) throw new HttpError(400, `[F] time range too long: at most ${limit} ms (etime - stime = ${etime - stime})`);
  // Spec statistics rule 2: an etime later than the server clock is replaced by the clock.
  const clamped = Math.max(stime, Math.min(etime, now));
  return { stime, etime: clamped, cubes: cubesIn(stime, clamped, now) };
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export function parseBody(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  const value: unknown = JSON.parse(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new HttpError(400, "[F] body must be a JSON object");
  return value as Record<string, unknown>;
}

export const asNumber = (v: unknown): number | null =>
  v === undefined || v === null || v === "" || Number.isNaN(Number(v)) ? null : Number(v);

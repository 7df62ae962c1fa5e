// A sandbox request as the server logs and routes it: its log entry (operation, project and window
// where it names them), its route and its body (or why the body is refused).
import type { IncomingMessage } from "node:http";
import { HttpError } from "./context.ts";
import { type AuthSettings, asNumber, parseBody, pcodeOf, rawWindow, readBody } from "./request.ts";
import { type buildRoutes, matchRoute } from "./router.ts";
import type { RequestLogEntry } from "./types.ts";

type Routes = ReturnType<typeof buildRoutes>;

/** The request's log entry (operation and window where it names one), its route and its body. */
export async function readRequest(req: IncomingMessage, url: URL, routes: Routes, auth: AuthSettings, connection: number) {
  const entry: RequestLogEntry = {
    method: req.method ?? "GET",
    path: url.pathname,
    opId: null,
    pcode: pcodeOf(req.headers, auth),
    stime: null,
    etime: null,
    status: 0,
    at: Date.now(),
    connection,
  };
  const bodyText = await readBody(req).catch(() => "");
  const route = matchRoute(routes, entry.method, url.pathname);
  let body: Record<string, unknown> = {};
  let bodyError: HttpError | null = null;
  try {
    body = parseBody(bodyText);
  } catch (e) {
    bodyError = e instanceof HttpError ? e : new HttpError(400, "[F] body is not valid JSON");
  }
  if (route.kind === "match") {
    entry.opId = route.op.id;
    const raw = rawWindow(route.op, route.params, url.searchParams, body);
    entry.stime = asNumber(raw?.stime);
    entry.etime = asNumber(raw?.etime);
  }
  return { entry, route, body, bodyError, bodyText };
}

/** The TCP connections requests came on, numbered in the order of their first request (the log's `connection`). */
export class ConnectionIds {
  readonly #ids = new WeakMap<object, number>();
  #count = 0;

  of(socket: object): number {
    let id = this.#ids.get(socket);
    if (id === undefined) {
      id = ++this.#count;
      this.#ids.set(socket, id);
    }
    return id;
  }
}

// The API client's face: what a caller passes and gets back (api/client.ts builds the client).
import type { OperationDef, RequestParams, TokenKind } from "../catalogue/types.ts";
import type { Tracer, TraceSpan } from "../tracing/tracer.ts";
import type { Logger } from "../util/logger.ts";
import type { MetricsObserver } from "../util/metrics-observer.ts";
import type { Page } from "./page.ts";
import type { PendingCall } from "./pending.ts";
import type { WaitBudget } from "./retry.ts";

export interface CallRequest {
  /** Project code: selects the project token and fills the pcode header. */
  pcode?: number;
  params?: RequestParams;
  signal?: AbortSignal;
  /** Called as each attempt is sent (retries and refused token probes too), also when the call fails. */
  onAttempt?: () => void;
  /** Ends a backoff or Retry-After wait at once (SIGTERM/SIGINT), without cutting a request in flight. */
  stopWaits?: AbortSignal;
  /** The waits of the window this call belongs to, shared by its calls (api/retry.ts WINDOW_WAIT_MAX_MS). */
  waits?: WaitBudget;
  /** The span (a window's, a capture's) whose children the call's HTTP requests are. */
  span?: TraceSpan;
}

export interface ApiResponse {
  /**
   * The answer: its envelope parsed (bigint-safe; the trimmed text for `text` operations), its
   * records as text. The caller reads the records (api/parse-response.ts) and disposes of it.
   */
  body: Page;
  status: number;
  /** Attempts made, 1 + retries (refused token probes included). */
  attempts: number;
  bytes: number;
  /** Wall time of the whole call, retries and waits included. */
  ms: number;
  /** Send to answer of the attempt that answered: no wait for the rate governor, no retry, no backoff. */
  sendMs: number;
  /** Path + query, never a credential. */
  url: string;
  /** Which token the server accepted. */
  token: TokenKind;
}

export interface ApiStats {
  requests: number;
  retries: number;
  rateLimited: number;
  /** Requests the server refused the token of (401/403 or a token-error body). */
  refused: number;
}

export interface ApiClient {
  call(op: OperationDef, req: CallRequest): Promise<ApiResponse>;
  /** Server clock minus ours (ms), from the answers so far; null before any answer carried a clock. */
  serverClockOffsetMs(): number | null;
  /**
   * Asks the server for its clock (a GET of the base URL, no credential) when no answer told it
   * yet; gives up at api.timeoutMs, or at once when `signal` is aborted.
   */
  probeClock(signal?: AbortSignal): Promise<number | null>;
  /** Calls (and the clock probe) under way, for progress to name the slow ones. */
  pending(): readonly PendingCall[];
  /** Aborted, with a CircuitOpenError, once the server is found unreachable (api/breaker.ts). */
  readonly unreachable: AbortSignal;
  /** Tries an unreachable server again (a worker's next job): the breakers start closed. */
  reconnect(): void;
  close(): Promise<void>;
  readonly stats: Readonly<ApiStats>;
}

export interface ApiClientDeps {
  /** Our clock, against which the server's is measured (the entry point's; tests pass a fake one). */
  now: () => number;
  logger?: Logger;
  /** Backoff waits (tests record them); rejects with the signal's reason when it is aborted. The governor keeps real time. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter source in [0, 1). */
  random?: () => number;
  /** Counts every attempt and retry for Prometheus (src/metrics); none by default. */
  metrics?: Pick<MetricsObserver, "attempt" | "retry">;
  /** Failed connections in a row that stop the client (api/breaker.ts); Infinity: never. */
  breakerThreshold?: number;
  /** A span per HTTP request sent (src/tracing); none by default. */
  tracer?: Tracer;
}

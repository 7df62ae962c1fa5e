// A circuit breaker per origin (issue 19 item 1): a server that cannot be reached at all (refused,
// unknown host, TLS refused, no answer in time) should end the run in seconds with one line, not
// retry every window of every stream for minutes. Failures to connect are counted across all the
// client's requests to an origin; any answer (whatever its status) counts them from zero again, so
// a blip among answers is still retried as before. Once `threshold` failures come in a row, every
// attempt to that origin fails at once with the same CircuitOpenError, and `opened` is aborted with
// it: the engine takes that as a stop (no new window, nothing recorded failed).
import { setMaxListeners } from "node:events";
import { ApiError, TlsError, TransportError } from "./errors.ts";

/**
 * Failed connections in a row, across requests, after which an origin counts as unreachable: at
 * most one request's attempts (api.retries + 1, see breakerThreshold), so that a server down from
 * the start stops the run before any window gives up on it (and is recorded failed). A blip is
 * shorter: the backoff between these attempts adds up to a few seconds.
 */
export const BREAKER_THRESHOLD = 5;

/** The threshold for a client that makes `retries + 1` attempts per request. */
export function breakerThreshold(retries: number): number {
  return Math.max(1, Math.min(BREAKER_THRESHOLD, retries + 1));
}

/** The origin did not answer `threshold` requests in a row: the run stops. Not retryable. */
export class CircuitOpenError extends ApiError {
  constructor(origin: string, failures: number, last: ApiError) {
    // The last error's own location is this error's (ApiError appends it once).
    const lastWhat = last.message.slice(0, last.message.lastIndexOf(" ["));
    super(
      `cannot reach ${origin}: ${failures} request(s) in a row got no answer (last: ${lastWhat}). ` +
        "Check APM_BASE_URL, that the server is up, and that this machine can reach it (proxy: HTTPS_PROXY / NO_PROXY; firewall). " +
        "The windows not fetched are left for the next run",
      { opId: last.opId, pcode: last.pcode, path: last.path, attempt: last.attempt },
    );
  }
}

/**
 * A failure to reach the server at all (no HTTP answer began), as opposed to an answer that is an
 * error or that broke off (a body that trickles past the timeout comes from a reachable server).
 */
export function gotNoAnswer(e: unknown): e is ApiError {
  return (e instanceof TransportError && !e.answered) || e instanceof TlsError;
}

export class CircuitBreakers {
  private readonly failures = new Map<string, number>();
  private readonly controller = new AbortController();

  /** `threshold`: Infinity never opens (`check`, which stops probing an unreachable host itself). */
  constructor(private readonly threshold = BREAKER_THRESHOLD) {
    // Every sleep in a retry wait listens to it.
    setMaxListeners(0, this.controller.signal);
  }

  /** Aborted, with the CircuitOpenError, when an origin is found unreachable. */
  get opened(): AbortSignal {
    return this.controller.signal;
  }

  /** Throws the CircuitOpenError once the breaker is open: no attempt is sent. */
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason;
  }

  /** An answer came from `origin`. */
  answered(origin: string): void {
    this.failures.set(origin, 0);
  }

  /**
   * An attempt to `origin` failed with `e`: a failure to reach the server is counted, an error that
   * is an answer counts as one. A TLS failure opens the breaker at once: it is not retried, and the
   * next request would meet the same one. The failure that opens it is thrown as it is; the engine
   * takes it as the stop once `opened` is aborted.
   */
  failed(origin: string, e: unknown): void {
    if (!gotNoAnswer(e)) {
      if (e instanceof ApiError) this.answered(origin);
      return;
    }
    if (this.controller.signal.aborted) return;
    const n = (this.failures.get(origin) ?? 0) + 1;
    this.failures.set(origin, n);
    if (n >= this.threshold || (e instanceof TlsError && this.threshold !== Number.POSITIVE_INFINITY))
      this.controller.abort(new CircuitOpenError(origin, n, e));
  }
}

// The event metrics of one process (counters and histograms, apm_sync_ prefix), fed by the
// MetricsObserver hook. Their names, types and labels are documented in docs/operating.md "Metrics"; labels
// hold operation and stream ids, project codes, status codes and commands, never a credential.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { ApiError, ErrorBodyError, HttpStatusError, NonJsonBodyError, RateLimitedError, TlsError, TransportError } from "../api/errors.ts";
import type { MetricsObserver } from "../util/metrics-observer.ts";

/** Creates the event metrics in `registry` and returns the observer that feeds them. */
export function createInstruments(registry: Registry): MetricsObserver {
  return observerOf(defineInstruments(registry));
}

function defineInstruments(registry: Registry) {
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter({ name, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
    new Histogram({ name, help, labelNames, buckets, registers });
  const requests = counter(
    "apm_sync_requests_total",
    "HTTP attempts by operation, status code (or the failure when no status came) and status class",
    ["operation", "code", "class"],
  );
  const duration = histogram(
    "apm_sync_request_duration_seconds",
    "Duration of one HTTP attempt (rate governor wait excluded)",
    ["operation"],
    [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  );
  const retries = counter("apm_sync_retries_total", "Requests tried again by the retry layer, by operation and reason", [
    "operation",
    "reason",
  ]);
  const rateLimited = counter("apm_sync_rate_limited_total", "HTTP 429 answers by operation", ["operation"]);
  const rate = new Gauge({
    name: "apm_sync_rate_limit_rps",
    help: "Requests per second the rate governor allows now (halves on 429, recovers slowly)",
    registers,
  });
  const windows = counter(
    "apm_sync_windows_total",
    "Windows (and snapshot captures) by stream and how they ended: done, truncated, failed, deferred",
    ["stream", "status"],
  );
  const rows = counter("apm_sync_rows_written_total", "Rows written to the warehouse by stream and project", ["stream", "pcode"]);
  const quarantined = counter(
    "apm_sync_records_quarantined_total",
    "Records quarantined (failed validation or repeated a key) by stream and project",
    ["stream", "pcode"],
  );
  const runs = histogram(
    "apm_sync_run_duration_seconds",
    "Duration of recorded runs (sync, backfill, a worker process) by command and final status",
    ["command", "status"],
    [1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
  );
  return { requests, duration, retries, rateLimited, rate, windows, rows, quarantined, runs };
}

function observerOf(m: ReturnType<typeof defineInstruments>): MetricsObserver {
  const { requests, duration, retries, rateLimited, rate, windows, rows, quarantined, runs } = m;
  return {
    attempt: (operation, outcome, ms, rateRps) => {
      const code = codeOf(outcome);
      requests.inc({ operation, code, class: /^\d{3}$/.test(code) ? `${code[0]}xx` : "error" });
      duration.observe({ operation }, ms / 1000);
      if (outcome instanceof RateLimitedError || code === "429") rateLimited.inc({ operation });
      rate.set(rateRps);
    },
    retry: (operation, error) => retries.inc({ operation, reason: reasonOf(error) }),
    window: (target, outcome, written) => {
      const stream = target.op.id;
      const status = outcome === "done" && written && written.truncated > 0 ? "truncated" : outcome;
      windows.inc({ stream, status });
      if (!written) return;
      const pcode = String(target.pcode);
      rows.inc({ stream, pcode }, written.rows);
      if (written.quarantined > 0) quarantined.inc({ stream, pcode }, written.quarantined);
    },
    run: (command, status, ms) => runs.observe({ command, status }, ms / 1000),
  };
}

/** The HTTP status of an attempt, or what kind of failure left it without one. */
function codeOf(outcome: unknown): string {
  if (typeof outcome === "number") return String(outcome);
  const status = (outcome as { status?: unknown } | null)?.status;
  if (typeof status === "number") return String(status);
  if (outcome instanceof TransportError || outcome instanceof TlsError) return "transport";
  if (outcome instanceof ApiError) return "bad_body";
  return "aborted";
}

/** Why the retry layer tries again (the error classes of src/api/errors.ts). */
function reasonOf(error: unknown): string {
  if (error instanceof RateLimitedError) return "rate_limited";
  if (error instanceof HttpStatusError) return error.status >= 500 ? "server_error" : `http_${error.status}`;
  if (error instanceof TransportError) return "transport";
  if (error instanceof NonJsonBodyError) return "bad_body";
  if (error instanceof ErrorBodyError) return "error_body";
  return "other";
}

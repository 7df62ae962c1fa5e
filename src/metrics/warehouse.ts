// Gauges read from the warehouse when Prometheus scrapes (or when a one-shot run pushes): per
// stream and project the lag and the last successful window, from the ledger; the job queue by
// state. Every process reports the same truth, whoever wrote it, so a stream that silently stops
// advancing shows in the lag whichever process is still alive.
import { Gauge, type Registry } from "prom-client";
import type { SqlHandle } from "../db/driver/exec.ts";
import { countQueueJobs, type QueueJobCounts } from "./reads/countQueueJobs.ts";
import { readStreamHealth, type StreamHealth } from "./reads/readStreamHealth.ts";

/** Where the gauges read from (set once the database is open). */
export interface WarehouseSource {
  readonly sql: SqlHandle;
  /** Schema of the job queue; null without one (the embedded database). */
  readonly queueSchema: string | null;
  /** The engine's clock (lag = now - watermark). */
  readonly now: () => number;
  /** The first failed read of a series (the gauges are left empty and apm_sync_warehouse_up is 0). */
  readonly onError: (error: unknown) => void;
}

interface Reading {
  readonly streams: readonly StreamHealth[];
  readonly queue: QueueJobCounts | null;
  readonly at: number;
}

// The gauges of one scrape are collected at once: they share one reading of the database.
const SHARED_MS = 1_000;

/** One reading of the ledger and the queue for all the gauges of a scrape; null when there is none. */
function sharedReader(source: () => WarehouseSource | null): () => Promise<Reading | null> {
  let pending: { promise: Promise<Reading | null>; started: number } | null = null;
  // A database outage fails every scrape: it is reported once, until a read succeeds again.
  let failing = false;
  const load = async (src: WarehouseSource): Promise<Reading | null> => {
    try {
      const [streams, queue] = await Promise.all([
        readStreamHealth(src.sql),
        src.queueSchema ? countQueueJobs(src.sql, src.queueSchema) : null,
      ]);
      failing = false;
      return { streams, queue, at: src.now() };
    } catch (e) {
      if (!failing) src.onError(e);
      failing = true;
      return null;
    }
  };
  return () => {
    const src = source();
    if (!src) return Promise.resolve(null);
    // A monotonic timer, not the clock: how long ago the shared read started.
    const started = performance.now();
    if (!pending || started - pending.started >= SHARED_MS) pending = { promise: load(src), started };
    return pending.promise;
  };
}

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/** The gauges per stream and project: name, help, and the value read from a stream's health. */
const STREAM_GAUGES: readonly [string, string, (s: StreamHealth, at: number) => number | null][] = [
  [
    "apm_sync_stream_lag_seconds",
    "Now minus the watermark of the stream's least advanced partition",
    (s, at) => (s.watermark === null ? null : Math.max(0, (at - s.watermark) / 1000)),
  ],
  ["apm_sync_stream_watermark_timestamp_seconds", "The stream's watermark (least advanced partition)", (s) => seconds(s.watermark)],
  [
    "apm_sync_stream_last_success_timestamp_seconds",
    "When the stream's latest done or truncated window was written",
    (s) => seconds(s.lastSuccess),
  ],
  ["apm_sync_stream_failed_windows", "Windows of the stream whose latest attempt failed (in the ledger now)", (s) => s.failed],
  ["apm_sync_stream_truncated_windows", "Windows of the stream still cut by the record cap at 5 minutes", (s) => s.truncated],
];

/** Registers the warehouse gauges; they read nothing until `source()` returns a source. */
export function registerWarehouseGauges(registry: Registry, source: () => WarehouseSource | null): void {
  const read = sharedReader(source);
  for (const [name, help, value] of STREAM_GAUGES)
    new Gauge({
      name,
      help,
      labelNames: ["stream", "pcode"] as const,
      registers: [registry],
      async collect() {
        const reading = await read();
        this.reset();
        for (const s of reading?.streams ?? []) {
          const v = value(s, reading!.at);
          if (v !== null) this.set({ stream: s.stream, pcode: String(s.pcode) }, v);
        }
      },
    });

  new Gauge({
    name: "apm_sync_queue_jobs",
    help: "apm-sync jobs on the job queue by state: queued, running, retrying, failed (for good)",
    labelNames: ["state"] as const,
    registers: [registry],
    async collect() {
      const queue = (await read())?.queue;
      this.reset();
      if (queue) for (const [state, n] of Object.entries(queue)) this.set({ state }, n);
    },
  });
  new Gauge({
    name: "apm_sync_warehouse_up",
    help: "1 when the ledger could be read for this scrape, 0 when not (the stream gauges are then absent)",
    registers: [registry],
    async collect() {
      if (source()) this.set((await read()) ? 1 : 0);
    },
  });
}

// The metrics of one process: a registry of its own (never prom-client's global one, so that two
// apps in one process never share counters), the event instruments and the warehouse gauges.
import { hostname } from "node:os";
import { collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { Config } from "../config.ts";
import type { Database } from "../db/driver/connect.ts";
import { describeError } from "../engine/describe-error.ts";
import { queueSchema } from "../queue/queue.ts";
import type { Logger } from "../util/logger.ts";
import type { MetricsObserver } from "../util/metrics-observer.ts";
import { packageVersion } from "../util/package-root.ts";
import { createInstruments } from "./instruments.ts";
import { registerWarehouseGauges, type WarehouseSource } from "./warehouse.ts";

export interface AppMetrics {
  readonly registry: Registry;
  /** The hook handed to the engine and the API client. */
  readonly observer: MetricsObserver;
  /** The command (sync, backfill, worker, ...) the process runs: a label and the push's grouping. */
  readonly command: string;
  /** From now on the warehouse gauges read through `source` (the database is open). */
  readFrom(source: WarehouseSource | null): void;
}

export interface MetricsOptions {
  readonly command: string;
  /** Node's process metrics (memory, CPU, event loop), prefixed apm_sync_: for long-running workers. */
  readonly processMetrics?: boolean;
}

export function createAppMetrics(opts: MetricsOptions): AppMetrics {
  const registry = new Registry();
  const observer = createInstruments(registry);
  let source: WarehouseSource | null = null;
  registerWarehouseGauges(registry, () => source);
  new Gauge({
    name: "apm_sync_info",
    help: "Always 1: the command this process runs, its version and host",
    labelNames: ["command", "version", "host"] as const,
    registers: [registry],
  }).set({ command: opts.command, version: packageVersion(), host: hostname() }, 1);
  if (opts.processMetrics) collectDefaultMetrics({ register: registry, prefix: "apm_sync_" });
  return {
    registry,
    observer,
    command: opts.command,
    readFrom: (s) => {
      source = s;
    },
  };
}

/** The warehouse gauges' source for an open database: its ledger, and its queue on a Postgres server. */
export function warehouseSource(database: Database, config: Config, logger: Logger, now: () => number): WarehouseSource {
  return {
    sql: database.sql,
    queueSchema: config.databaseUrl ? queueSchema(config) : null,
    now,
    onError: (e) => logger.warn(`metrics: could not read the ledger (${describeError(e)}); the stream gauges are left out`),
  };
}

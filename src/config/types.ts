// The frozen configuration every command receives (built by src/config.ts from env, file and flags).
import type { Secret } from "../util/secret.ts";
import type { TracingConfig } from "./tracing.ts";

export interface ProjectCredential {
  readonly pcode: number;
  readonly token: Secret;
}

export interface OperationOverride {
  readonly method?: "GET" | "POST";
  readonly path?: string;
}

export type LogFormat = "pretty" | "json" | "plain";

/** Request inputs of one partition of a stream that needs them (host/port, filter key/value, oids). */
export type InputEntry = Readonly<Record<string, string | number | readonly number[]>>;

export interface Config {
  readonly databaseUrl: string | null;
  /** Directory of the embedded database when databaseUrl is null. */
  readonly dataDir: string;
  /** How long a command waits for another process to close the embedded database (APM_DATA_DIR_WAIT). */
  readonly dataDirWaitMs: number;
  /** Bytes the embedded database keeps free on its disk (APM_DISK_FLOOR). */
  readonly diskFloorBytes: number;
  readonly dbSchema: string;
  /** Connections a command opens into a Postgres server at most (APM_DB_CONNECTIONS). */
  readonly dbConnections: number;
  readonly api: {
    readonly baseUrl: string;
    readonly accountToken: Secret | null;
    readonly projects: readonly ProjectCredential[];
    readonly tokenHeader: string;
    readonly pcodeHeader: string;
    readonly timeoutMs: number;
    readonly maxResponseBytes: number;
    /** The largest record (or envelope) of an answer held as one text (api/page.ts). */
    readonly maxRecordBytes: number;
    /** Bytes of answers held in memory by all requests together; beyond it they go to temporary files (api/spool.ts). */
    readonly memoryBudget: number;
    readonly retries: number;
    readonly concurrency: number;
    readonly requestsPerSecond: number;
    /** Method/path overrides by operation id (only operations marked overridable are accepted). */
    readonly overrides: Readonly<Record<string, OperationOverride>>;
    /** HTTPS_PROXY / HTTP_PROXY / NO_PROXY (either case); null when no proxy is set. Never logged. */
    readonly proxy: { readonly httpProxy: string; readonly httpsProxy: string; readonly noProxy: string } | null;
  };
  readonly sync: {
    /** Stream ids or prefixes to sync; null = every stream enabled by default. */
    readonly streams: readonly string[] | null;
    /** First-run start, epoch ms. */
    readonly startMs: number;
    readonly grainMs: number;
    readonly grainOverridesMs: Readonly<Record<string, number>>;
    /**
     * Request inputs of the streams that need them (host/port filters, filter key/value, agent
     * lists), by stream id: one partition per entry.
     */
    readonly inputs: Readonly<Record<string, readonly InputEntry[]>>;
    readonly lookbackMs: number;
    readonly eventLookbackMs: number;
    readonly openEventLookbackMs: number;
    readonly settleMs: number;
    /** Windows fetched at once per stream. */
    readonly windowConcurrency: number;
    /** How long a window's transaction is retried while the database is away (APM_DB_RETRY). */
    readonly dbRetryMs: number;
    /** On SIGTERM/SIGINT: how long windows in flight may take to finish (APM_SHUTDOWN_GRACE). */
    readonly shutdownGraceMs: number;
    /**
     * Into a Postgres server: while a run fetches, the rollups of a day are refreshed once its
     * streams have all gone past it, at most one pass each this long (APM_REFRESH_ALONG); 0: only
     * at the run's end.
     */
    readonly refreshAlongMs: number;
  };
  /**
   * How long the partitioned tables keep their rows, ms per stream id, prefix, kind or rollup key
   * (APM_RETENTION, file key retention; src/warehouse/retention.ts). Empty: everything is kept.
   */
  readonly retention: Readonly<Record<string, number>>;
  /**
   * A directory `prune` writes each monthly partition to, as Parquet, before dropping it (APM_ARCHIVE,
   * file key archive; src/warehouse/archive/); null: prune only drops.
   */
  readonly archive: string | null;
  /** Scale-out (`worker`, `enqueue`): the job queue in the warehouse Postgres. */
  readonly queue: {
    /** A job whose worker stopped answering runs again after this long (APM_WORKER_RECOVERY). */
    readonly recoveryMs: number;
    /** Cron expression of the scheduled sync run by the workers (APM_SCHEDULE); null: none. */
    readonly schedule: string | null;
  };
  readonly log: { readonly level: string; readonly format: LogFormat };
  /**
   * `worker` serves /metrics and /healthz on `host`:`port` (APM_METRICS_HOST, default 127.0.0.1:
   * this machine only; a container sets 0.0.0.0); one-shot runs push to `pushgatewayUrl`.
   */
  readonly metrics: { readonly port: number | null; readonly host: string; readonly pushgatewayUrl: string | null };
  /** OTLP trace export (OTEL_EXPORTER_OTLP_ENDPOINT and the other OTEL_* variables); null: no tracing, nothing loaded. */
  readonly tracing: TracingConfig | null;
}

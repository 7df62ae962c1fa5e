// `apm-sync demo`: the sandbox on a free loopback port, the embedded database under ./.apm-sync/,
// a real sync of 2 projects x 2 days of every stream, then a short report on the terminal and the
// HTML report (apm-sync-report.html in the cwd). A second run is incremental: it only fetches what
// is new since the first (and the lookback).
import { withApp } from "../app.ts";
import { runJob } from "../engine/run.ts";
import { DEFAULT_REPORT_FILE, makeReport, writeHtmlReport } from "../report/make-report.ts";
import { readStatus } from "../report/reads/readStatus.ts";
import { type Sandbox, startSandbox } from "../sandbox/index.ts";
import type { SandboxOptions } from "../sandbox/types.ts";
import { createOutput } from "../util/logger.ts";
import { demoReport, formatDemoReport } from "./report.ts";

/** The demo's sandbox (tests rebuild the same ground truth from it). */
export const DEMO_SANDBOX: SandboxOptions = { seed: 1, projects: 2, burstKeys: 0 };

export interface DemoOptions {
  readonly dataDir: string;
  readonly json: boolean;
  readonly global: Record<string, unknown>;
}

export async function runDemo(opts: DemoOptions): Promise<number> {
  const sandbox = await startSandbox({ ...DEMO_SANDBOX, port: 0, host: "127.0.0.1" });
  // --json: the narration is JSON lines too, so that nothing but JSON comes out.
  const global = { ...opts.global, config: undefined, ...(opts.json ? { logFormat: "json" } : {}) };
  const narration = createOutput(opts.json || global.logFormat === "json" ? "json" : "plain", 2);
  const say = (line: string) => narration.print(line);
  try {
    say(`demo: sandbox Open API at ${sandbox.url} (${sandbox.projects.length} projects, deterministic data)`);
    const env = demoEnv(sandbox, opts.dataDir);
    // graceful: Ctrl-C finishes the windows in flight, then the demo says what it did (exit 130).
    return await withApp({ global, env, progress: !opts.json, graceful: true }, async ({ deps, database, out }) => {
      say(`demo: embedded database (PGlite) in ${opts.dataDir}/pgdata`);
      const before = await readStatus(database.sql, deps.now());
      const incremental = before.streams.length > 0;
      const latest = Math.max(0, ...before.streams.map((st) => st.watermark?.getTime() ?? 0));
      say(
        incremental
          ? `demo: incremental run: data up to ${new Date(latest).toISOString()} is already stored; fetching only what is new (plus the lookback)`
          : "demo: first run: syncing 2 projects x 2 days of every stream",
      );
      const t0 = Date.now();
      const result = await runJob(deps, { command: "sync", mode: { kind: "sync" }, args: { demo: true } });
      deps.progress?.stop();
      const seconds = (Date.now() - t0) / 1000;
      const report = await demoReport(database.sql, result.streams);
      const model = await makeReport(database.sql, {
        from: null,
        to: null,
        projects: null,
        now: deps.now(),
        settleMs: deps.config.sync.settleMs,
      });
      const reportPath = await writeHtmlReport(model, deps.config, DEFAULT_REPORT_FILE);
      const summary = { incremental, cancelled: result.cancelled, exitCode: result.exitCode, seconds, reportPath };
      if (opts.json) process.stdout.write(`${JSON.stringify({ ...summary, ...report }, null, 2)}\n`);
      else out.print(formatDemoReport(report) + closingLines(summary, opts.dataDir));
      if (result.cancelled)
        say(
          `demo: stopped by a signal after ${seconds.toFixed(1)} s; what was written is kept (above), run the demo again to fetch the rest`,
        );
      return result.exitCode;
    });
  } finally {
    await sandbox.stop();
  }
}

/** The demo's own environment: no DATABASE_URL (embedded), sandbox tokens, fast governor. */
function demoEnv(sandbox: Sandbox, dataDir: string): NodeJS.ProcessEnv {
  return {
    APM_BASE_URL: sandbox.url,
    APM_ACCOUNT_TOKEN: sandbox.accountToken,
    APM_PROJECTS: sandbox.projects.map((p) => `${p.pcode}:${p.token}`).join(","),
    APM_DATA_DIR: dataDir,
    APM_START: "2d",
    APM_RPS: "5000",
    APM_CONCURRENCY: "16",
    APM_LOG_LEVEL: "warn",
  };
}

function closingLines(s: { incremental: boolean; cancelled: boolean; seconds: number; reportPath: string }, dataDir: string): string {
  const run = s.incremental ? "incremental" : "first";
  const ended = s.cancelled ? "stopped early (Ctrl-C)" : "finished";
  return [
    "",
    `${run} run ${ended} in ${s.seconds.toFixed(1)} s. Try: npm run cli -- status (with APM_DATA_DIR=${dataDir}), or psql over the views; run the demo again for an incremental sync.`,
    "",
    `report (coverage, freshness and the data; open it in a browser): ${s.reportPath}`,
  ].join("\n");
}

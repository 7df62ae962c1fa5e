// `npm run bench:sandbox`: the peak RSS of the sandbox (`apm-sync simulate`, its own process)
// while it serves the windows of a month's backfill of 3 projects: every windowed stream a
// backfill covers, its grain windows fetched through the engine's client and fetchWindow (splits
// on the record cap included), targets and windows as many at once as the engine runs them.
// Nothing is written: the sandbox's memory is what is measured. The simulator runs with the
// Docker image's heap limit (--heap-mib; 0 for none), so a sandbox whose memory grows with the
// windows served dies here as it does in `docker compose --profile sandbox`.
// Prints numbers; asserts nothing.
//   npm run bench:sandbox [-- --days 30 --projects 3 --heap-mib 160 --burst-keys 12000]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import pLimit from "p-limit";
import { createApiClient } from "../src/api/client.ts";
import { loadConfig } from "../src/config.ts";
import { describeError } from "../src/engine/describe-error.ts";
import { emptyWindowFetch, fetchWindow } from "../src/engine/fetch-window.ts";
import { backfillTargets } from "../src/engine/targets.ts";
import type { Target } from "../src/engine/types.ts";
import { createLogger } from "../src/util/logger.ts";
import { floorToGrid } from "../src/windows/grid.ts";
import { planBackfill, streamGrain } from "../src/windows/plan.ts";
import type { Window } from "../src/windows/types.ts";
import { startSimulator } from "./simulator-process.ts";

const { values } = parseArgs({
  options: {
    days: { type: "string", default: "30" },
    projects: { type: "string", default: "3" },
    "heap-mib": { type: "string", default: "160" },
    "burst-keys": { type: "string", default: "12000" },
  },
});
const DAY = 86_400_000;
const heap = Number(values["heap-mib"]);
const sandbox = await startSimulator(
  ["--seed", "1", "--projects", values.projects!, "--burst-keys", values["burst-keys"]!],
  heap > 0 ? [`--max-old-space-size=${heap}`] : [],
);
let died: number | null | undefined;
void sandbox.exited.then((code) => {
  died = code;
});

/** VmRSS and VmHWM (the kernel's peak resident set) of the simulator, MiB. */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${sandbox.pid}/status`, "utf8");
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rss: Math.round(kb("VmRSS") / 1024), peak: Math.round(kb("VmHWM") / 1024) };
}

const now = Date.now();
const to = floorToGrid(now - 10 * 60_000);
const from = to - Number(values.days) * DAY;
const config = loadConfig({
  env: { ...sandbox.env, APM_ACCOUNT_TOKEN: sandbox.accountToken, APM_RPS: "1000", APM_LOG_LEVEL: "warn" },
  now,
  requireApi: true,
});
const logger = createLogger({ level: "warn", format: "plain" });
// No breaker: a few connection resets in a row on a loaded machine must not end the bench (the
// engine's breaker gives up on the whole run); a window that still fails is counted and said.
const client = createApiClient(config.api, { logger, now: Date.now, breakerThreshold: Number.POSITIVE_INFINITY });
const targets = backfillTargets(config, null, null, { from, to });
const plans = targets.map((t) => ({ target: t, windows: windowsOf(t) }));
const total = plans.reduce((n, p) => n + p.windows.length, 0);

function windowsOf(t: Target): Window[] {
  const spec = { grainMs: streamGrain(config.sync, t.op), limitMs: t.op.windowLimitMs, lookbackMs: 0, settleMs: 0, startMs: from };
  return [...planBackfill(spec, from, to, [], { now })];
}

process.stdout.write(
  `bench:sandbox: ${values.projects} project(s) x ${values.days} day(s), ${targets.length} targets, ${total} windows; simulator heap limit ${heap > 0 ? `${heap} MiB` : "none"}\n`,
);
const started = performance.now();
let done = 0;
let requests = 0;
let failed = 0;
const errors = new Set<string>();
let nextReport = 0.1;
const targetLimit = pLimit(config.api.concurrency);
await Promise.all(
  plans.map((p) =>
    targetLimit(async () => {
      const windowLimit = pLimit(config.sync.windowConcurrency);
      await Promise.all(p.windows.map((w) => windowLimit(() => fetchOne(p.target, w))));
    }),
  ),
);

async function fetchOne(target: Target, w: Window): Promise<void> {
  if (died !== undefined) return;
  const out = emptyWindowFetch();
  try {
    await fetchWindow(client, target, w, out);
  } catch (e) {
    failed += 1;
    const text = describeError(e).slice(0, 300);
    if (errors.size < 3 && !errors.has(text)) {
      errors.add(text);
      process.stdout.write(`  window failed at ${done} of ${total}, rss ${memory().rss} MiB: ${text}\n`);
    }
  }
  requests += out.requests;
  done += 1;
  if (done / total >= nextReport && died === undefined) {
    nextReport += 0.1;
    const m = memory();
    const s = ((performance.now() - started) / 1000).toFixed(0);
    process.stdout.write(
      `  ${String(Math.round((100 * done) / total)).padStart(3)}% of windows  ${s} s  rss ${m.rss} MiB  peak ${m.peak} MiB\n`,
    );
  }
}

const seconds = (performance.now() - started) / 1000;
if (died !== undefined) {
  process.stdout.write(`bench:sandbox: the simulator DIED (exit ${died}) after ${done} of ${total} windows, ${seconds.toFixed(0)} s\n`);
} else {
  const m = memory();
  process.stdout.write(
    `bench:sandbox: peak RSS ${m.peak} MiB (now ${m.rss} MiB); ${done} windows, ${requests} requests, ${failed} failed, ${seconds.toFixed(0)} s\n`,
  );
}
sandbox.stop();
await sandbox.exited;
await client.close();

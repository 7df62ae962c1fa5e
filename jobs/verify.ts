// `apm-sync verify --from T --to T [--streams a,b] [--projects 1,2] [--sample N]`: fetches the
// windows the ledger holds done again and compares them with the stored rows, changing nothing
// but one verifications row. Exit 0 when every window agrees, 1 when one differs or could not be
// fetched (each is named), 2 for a usage problem.
import { withApp } from "../src/app.ts";
import type { Config } from "../src/config.ts";
import { plural } from "../src/engine/summary.ts";
import { targetLabel } from "../src/engine/types.ts";
import { type VerifyRequest, verifyCopy, verifyTargets } from "../src/engine/verify.ts";
import type { WindowCheck } from "../src/engine/verify-window.ts";
import { UsageError } from "../src/usage-error.ts";
import type { Output } from "../src/util/logger.ts";
import { allProblems, parseRange, selectionFlags } from "./args.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const flags = selectionFlags(opts);
  let req: VerifyRequest = { from: 0, to: 0, streams: null, projects: null, sample: null };
  let range = { from: 0, to: 0 };
  let sample: number | null = null;
  const validate = (config: Config) => {
    allProblems(
      () => flags.validate(config),
      () => {
        range = parseRange(opts, Date.now());
      },
      () => {
        sample = parseSample(opts.sample);
      },
    );
    const { streams, projects } = flags.selection;
    req = { ...range, streams, projects, sample };
    if (verifyTargets(config, streams, projects).targets.length === 0)
      throw new UsageError(
        `--streams: no statistics or range stream selected; verify compares those (their windows are replaced whole), not points streams`,
      );
  };
  return withApp({ global, progress: true, graceful: true, validate }, async ({ deps, out }) => {
    const result = await verifyCopy(deps, req);
    deps.progress?.stop();
    for (const c of result.differing) out.print(`differs: ${describeCheck(c)}`, checkRecord(c));
    for (const c of result.failed) out.print(`not verified: ${targetLabel(c.target)} ${span(c)}: ${c.error}`, checkRecord(c));
    if (result.notVerified.length > 0) {
      const note = `not verified (points streams, upserted by key: no window to compare): ${result.notVerified.join(", ")}`;
      out.print(note, { msg: "not verified", streams: result.notVerified });
    }
    printSummary(out, req, result);
    return result.differing.length > 0 || result.failed.length > 0 ? 1 : 0;
  });
}

function parseSample(value: unknown): number | null {
  if (value === undefined) return null;
  const text = String(value).trim();
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw new UsageError(`--sample: expected a whole number of windows (1 or more), got ${JSON.stringify(text)}`);
  return Number(text);
}

/** `stat.transaction pcode=1 2026-04-14T02:00:00.000Z..2026-04-14T03:00:00.000Z: rows 12 stored, 12 served; count 340 stored, 341 served`. */
function describeCheck(c: WindowCheck): string {
  const measure = c.target.stream.measure;
  const rows = `rows ${c.stored!.rows} stored, ${c.served!.rows} served`;
  const sums = measure ? `; ${measure} ${c.stored!.measure} stored, ${c.served!.measure} served` : "";
  const by = c.by === "measure" ? " (the server splits it otherwise now: compared by its measure)" : "";
  return `${targetLabel(c.target)} ${span(c)}: ${rows}${sums}${by}`;
}

function checkRecord(c: WindowCheck): { msg: string } & Record<string, unknown> {
  return {
    msg: c.outcome === "differ" ? "window differs" : "window not verified",
    stream: c.target.op.id,
    pcode: c.target.pcode,
    ...(c.target.partition ? { partition: c.target.partition } : {}),
    windowStart: iso(c.window.start),
    windowEnd: iso(c.window.end),
    ...(c.stored && c.served
      ? { rowsStored: c.stored.rows, rowsServed: c.served.rows, measureStored: c.stored.measure, measureServed: c.served.measure }
      : {}),
    ...(c.error ? { error: c.error } : {}),
  };
}

function printSummary(out: Output, req: VerifyRequest, r: Awaited<ReturnType<typeof verifyCopy>>): void {
  const range = `${iso(req.from)} .. ${iso(req.to)}`;
  const of = req.sample !== null && r.held > req.sample ? ` (a sample of ${r.held} done)` : "";
  const parts = [`${r.agreeing} agree`, `${r.differing.length} ${r.differing.length === 1 ? "differs" : "differ"}`];
  if (r.failed.length > 0) parts.push(`${r.failed.length} could not be fetched`);
  const text =
    r.held === 0
      ? `verify: the ledger holds no done window of the selection in ${range}: nothing to verify`
      : `verify: ${plural(r.checked, "window")} checked${of} in ${range}: ${parts.join(", ")}${r.stopped ? "; stopped before the rest" : ""}; nothing was changed`;
  out.print(text, {
    msg: "verified",
    from: iso(req.from),
    to: iso(req.to),
    held: r.held,
    checked: r.checked,
    agreeing: r.agreeing,
    differing: r.differing.length,
    failed: r.failed.length,
    verification: r.verificationId,
  });
}

function span(c: WindowCheck): string {
  return `${iso(c.window.start)}..${iso(c.window.end)}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

// `apm-sync restore --months YYYY-MM[,YYYY-MM] [--streams a,b]`: loads months `prune` archived to
// Parquet (APM_ARCHIVE) back into the warehouse: partitions made, rows copied, their ledger
// windows `done` again, the rollups' hours refreshed. Exit 2, nothing written, when a month is not
// archived, already holds rows, or its file is missing or changed; 1 when the database failed.
import { withApp } from "../src/app.ts";
import { OPERATIONS } from "../src/catalogue/index.ts";
import { streamNameProblem } from "../src/config/stream-names.ts";
import type { Config } from "../src/config.ts";
import { UsageError } from "../src/usage-error.ts";
import { planRestore, restoreFiles } from "../src/warehouse/archive/restore.ts";
import { allProblems, parseList } from "./args.ts";

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** `2026-03,2026-04` -> the months' first instants (UTC); a usage error names each bad one. */
export function parseMonths(value: unknown): number[] {
  const items = parseList(value) ?? [];
  if (items.length === 0) throw new UsageError("--months: give one or more months as YYYY-MM, comma-separated (e.g. 2026-03,2026-04)");
  const bad = items.filter((m) => !MONTH.test(m));
  if (bad.length > 0)
    throw new UsageError(`--months: ${bad.map((b) => JSON.stringify(b)).join(", ")} is not a month as YYYY-MM (e.g. 2026-03)`);
  return [...new Set(items.map((m) => Date.parse(`${m}-01T00:00:00Z`)))].sort((a, b) => a - b);
}

/** `--streams` as stream ids (a prefix names every stream under it); null: every stream. */
function parseStreams(value: unknown): string[] | null {
  const names = parseList(value);
  if (names === null) return null;
  const problems = names.map(streamNameProblem).filter((p): p is string => p !== null);
  if (problems.length > 0) throw new UsageError(`--streams: ${problems.join("; ")}`);
  return OPERATIONS.filter((op) => op.stream && names.some((n) => op.id === n || op.id.startsWith(`${n}.`))).map((op) => op.id);
}

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  let months: number[] = [];
  let streams: string[] | null = null;
  const validate = (config: Config) =>
    allProblems(
      () => {
        if (!config.archive)
          throw new UsageError("APM_ARCHIVE (file key archive) is not set: restore reads the months from that directory");
      },
      () => {
        months = parseMonths(opts.months);
      },
      () => {
        streams = parseStreams(opts.streams);
      },
    );
  return withApp({ global, needsApi: false, warehouse: "existing", validate }, async ({ database, config, out }) => {
    const dir = config.archive!;
    const plan = await planRestore(database.sql, dir, months, streams);
    // A refusal is a usage problem found late: exit 2, printed like one.
    if (plan.problems.length > 0) throw new UsageError(`restore refused, nothing written: ${plan.problems.join("; ")}`);
    for (const r of await restoreFiles(database.sql, dir, plan.files)) {
      const month = new Date(r.file.month).toISOString().slice(0, 7);
      out.print(
        `restore: ${r.file.table} ${month}: ${r.rows.toLocaleString("en")} rows from ${r.file.path}; ${r.windows} ledger window(s) done again`,
        {
          msg: "restored",
          table: r.file.table,
          month,
          path: r.file.path,
          rows: r.rows,
          windows: r.windows,
        },
      );
    }
    return 0;
  });
}

// `apm-sync prune [--dry-run]`: drops the monthly partitions older than the retention (APM_RETENTION,
// file key retention), records in the ledger which windows they held, and prints per table what
// went (rows and bytes). Without a retention nothing is dropped. Exit 1 when a table could not be
// locked in time (nothing of it changed: prune again) or the database failed.
import { withApp } from "../src/app.ts";
import { pruneWarehouse } from "../src/warehouse/prune.ts";
import { printPrune } from "../src/warehouse/prune-report.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const dryRun = opts.dryRun === true;
  return withApp({ global, needsApi: false, warehouse: "existing" }, async ({ database, config, out }) => {
    if (Object.keys(config.retention).length === 0) {
      out.print("prune: no retention is set (APM_RETENTION, file key retention): every table keeps everything", {
        msg: "prune: no retention",
      });
      return 0;
    }
    const tables = await pruneWarehouse(database.sql, config.retention, {
      now: Date.now(),
      dryRun,
      archive: config.archive ? { dir: config.archive } : null,
    });
    printPrune(out, tables, dryRun);
    return tables.some((t) => t.skipped) ? 1 : 0;
  });
}

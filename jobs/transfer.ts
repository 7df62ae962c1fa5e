// `apm-sync transfer --to URL`: copies the embedded warehouse (APM_DATA_DIR) into an empty Postgres
// warehouse at URL, migrated first; prints both sides' row counts per table and the DATABASE_URL
// to use next. Exit 2 (nothing written) for a target that holds data, DATABASE_URL set, or a bad
// URL; 1 when the copy failed (the target's transaction rolled back).
import { withApp } from "../src/app.ts";
import { transferWarehouse } from "../src/warehouse/transfer.ts";
import { printTransfer } from "../src/warehouse/transfer-report.ts";
import { checkTransfer, openTarget, shownUrl, withoutPassword } from "../src/warehouse/transfer-target.ts";

export async function run(opts: Record<string, unknown>, global: Record<string, unknown>): Promise<number> {
  const to = typeof opts.to === "string" ? opts.to : "";
  const target = shownUrl(to);
  const validate = (config: Parameters<typeof checkTransfer>[0]) => checkTransfer(config, to);
  return withApp({ global, needsApi: false, warehouse: "existing", validate }, async ({ database, config, out, logger }) => {
    try {
      const postgres = await openTarget(config, to);
      try {
        const counts = await transferWarehouse(database, postgres, { target, log: (m) => logger.info(m) });
        printTransfer(out, counts, target, database.schema);
        return 0;
      } finally {
        await postgres.close();
      }
    } catch (e) {
      // Whatever a driver or server says about the target leaves without its password.
      if (e instanceof Error) e.message = withoutPassword(e.message, to);
      throw e;
    }
  });
}

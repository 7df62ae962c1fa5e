// What `transfer` prints: each table's rows on both sides, the totals, and the DATABASE_URL that
// names the copy from now on (its password masked: the user types their own).
import type { Output } from "../util/logger.ts";
import type { TableCount } from "./transfer.ts";

export function printTransfer(out: Output, counts: readonly TableCount[], target: string, schema: string): void {
  const width = Math.max(5, ...counts.map((c) => c.table.length));
  const num = (n: number) => String(n).padStart(10);
  const lines = [`${"table".padEnd(width)}  ${"embedded".padStart(10)}  ${"postgres".padStart(10)}`];
  for (const c of counts) lines.push(`${c.table.padEnd(width)}  ${num(c.source)}  ${num(c.target)}`);
  out.print(lines.join("\n"), { msg: "transfer counts", tables: counts });
  const rows = counts.reduce((n, c) => n + c.target, 0);
  out.print(`transfer: ${counts.length} tables, ${rows} rows copied to ${target} (schema ${schema}); every count equal`, {
    msg: "transfer complete",
    tables: counts.length,
    rows,
    schema,
  });
  const password = target.includes(":***@") ? " (your password where *** stands)" : "";
  out.print(
    `next: use DATABASE_URL=${target}${password} with APM_DB_SCHEMA=${schema} for every command from now on; ` +
      "the embedded warehouse (APM_DATA_DIR) is left as it was",
    { msg: "transfer next", databaseUrl: target, schema },
  );
}

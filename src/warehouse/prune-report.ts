// What `prune` prints (also at the end of `sync` and of a scheduled tick): per table what was (or
// would be) dropped, with rows and bytes, what it keeps and which setting says so.
import type { Output } from "../util/logger.ts";
import { monthName as month } from "../windows/months.ts";
import { pruneWarehouse, type TablePrune } from "./prune.ts";

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** 1.5 GB, 12.3 MB, 8 kB. */
export function formatBytes(bytes: number): string {
  const units = ["bytes", "kB", "MB", "GB", "TB"];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** `, archived first as 2 Parquet file(s), 1.2 MB`; in a dry run `, each archived first: 2 Parquet file(s)`. */
function archivedText(t: TablePrune): string {
  if (t.toArchive) return `, each archived first: ${t.toArchive} Parquet file(s)`;
  const files = t.archived ?? [];
  if (files.length === 0) return "";
  return `, archived first as ${files.length} Parquet file(s) (${formatBytes(files.reduce((n, a) => n + a.bytes, 0))})`;
}

/** One line (and one JSON record) per table, then the totals. */
export function printPrune(out: Output, tables: readonly TablePrune[], dryRun: boolean): void {
  const verb = dryRun ? "would drop" : "dropped";
  for (const t of tables) {
    const rows = t.partitions.reduce((n, p) => n + (p.rows ?? 0), 0);
    const bytes = t.partitions.reduce((n, p) => n + p.bytes, 0);
    const span = t.partitions.length > 0 ? ` (${month(t.partitions[0]!.from)}..${month(t.partitions.at(-1)!.from)})` : "";
    const kept = t.keptFrom === null ? "" : `keeps from ${day(t.keptFrom)} (${t.retention.why})`;
    const what =
      t.keptFrom === null
        ? `keeps everything (${t.retention.why})`
        : t.skipped
          ? `skipped: ${t.skipped}`
          : t.deletedRows !== undefined
            ? `${dryRun ? "would delete" : "deleted"} ${t.deletedRows.toLocaleString("en")} rows; ${kept}`
            : `${verb} ${t.partitions.length} partition(s)${span}, ${rows.toLocaleString("en")} rows, ${formatBytes(bytes)}${archivedText(t)}; ${t.windows} ledger window(s) ${dryRun ? "to mark" : "marked"} ${t.archived?.length || t.toArchive ? "archived or pruned" : "pruned"}; ${kept}`;
    out.print(`prune: ${t.table}: ${what}`, {
      msg: "prune",
      table: t.table,
      dryRun,
      retention: t.retention.why,
      keptFrom: t.keptFrom === null ? null : new Date(t.keptFrom).toISOString(),
      partitions: t.partitions.map((p) => ({ name: p.name, from: new Date(p.from).toISOString(), rows: p.rows, bytes: p.bytes })),
      rows,
      bytes,
      windows: t.windows,
      skipped: t.skipped,
      archived: (t.archived ?? []).map((a) => ({ month: month(a.month), path: a.path, rows: a.rows, bytes: a.bytes, sha256: a.sha256 })),
      ...(t.toArchive === undefined ? {} : { toArchive: t.toArchive }),
      ...(t.deletedRows === undefined ? {} : { deletedRows: t.deletedRows }),
    });
  }
  const all = tables.flatMap((t) => t.partitions);
  const rows = all.reduce((n, p) => n + (p.rows ?? 0), 0);
  const bytes = all.reduce((n, p) => n + p.bytes, 0);
  const text = `prune${dryRun ? " (dry run: nothing changed)" : ""}: ${verb} ${all.length} partition(s), ${rows.toLocaleString("en")} rows, ${formatBytes(bytes)}`;
  out.print(text, { msg: "prune total", dryRun, partitions: all.length, rows, bytes });
}

/**
 * The prune at the end of `sync` and of each scheduled tick: nothing without a retention; a table
 * a query held too long is left for the next time (its line says so; the run's own outcome stands).
 */
export async function pruneAtEnd(
  deps: {
    readonly database: { readonly sql: Parameters<typeof pruneWarehouse>[0] };
    readonly config: { readonly retention: Readonly<Record<string, number>>; readonly archive: string | null };
  },
  out: Output,
  now: number,
): Promise<void> {
  if (Object.keys(deps.config.retention).length === 0) return;
  const tables = await pruneWarehouse(deps.database.sql, deps.config.retention, {
    now,
    dryRun: false,
    archive: deps.config.archive ? { dir: deps.config.archive } : null,
  });
  printPrune(out, tables, false);
}

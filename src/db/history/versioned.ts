// Which tables keep the versions of their rows, and how a version table is named: read from the
// catalogue, so a new dimension stream is versioned without a list to update here.
import { OPERATIONS } from "../../catalogue/index.ts";

/** The tables whose rows are versioned: those of the catalogue's dimension streams (complete lists). */
export const VERSIONED_TABLES: readonly string[] = [
  ...new Set(OPERATIONS.flatMap((op) => (op.stream?.kind === "dimension" ? [op.stream.table] : []))),
];

/** Columns of a dimension a version does not carry: its valid_from and valid_to say what they said. */
export const UNVERSIONED_COLUMNS: readonly string[] = ["first_seen_at", "last_seen_at", "deleted_at"];

/** The bounds of a version. */
export const VERSION_COLUMNS = ["valid_from", "valid_to"] as const;

export function historyTableName(table: string): string {
  return `${table}_history`;
}

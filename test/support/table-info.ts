// A TableInfo (src/db/tables.ts) for an encoder test's own columns: no table behind it, every
// column writable, none of the warehouse's bookkeeping.
import type { TableInfo } from "../../src/db/tables.ts";

export function plainTableInfo(name: string, columns: readonly (readonly [string, string])[]): TableInfo {
  return {
    name,
    types: new Map(columns),
    writable: columns.map(([c]) => c),
    bookkeeping: new Set(),
    window: [],
    hasDeletedAt: false,
    hasLastSeenAt: false,
    hasSyncedAt: false,
    partitionColumn: null,
    movable: false,
    slack: null,
  };
}

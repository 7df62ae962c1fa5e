// v2 aggregated statistics (and tx_caller/tx_domain call statistics): windowed aggregates. The
// columns are declared once, with the records' fields and their meanings, in
// catalogue/dictionary/stats.ts (tx_calls: catalogue/dictionary/series.ts).
import { txCallColumns } from "../../catalogue/dictionary/series.ts";
import {
  statErrorColumns,
  statHttpcColumns,
  statRemoteColumns,
  statSqlColumns,
  statTransactionColumns,
} from "../../catalogue/dictionary/stats.ts";
import { windowedTable } from "../../kernel/tables.ts";

export const statTransaction = windowedTable("stat_transaction", statTransactionColumns, { readByTime: true });
export const statSql = windowedTable("stat_sql", statSqlColumns, { readByTime: true });
export const statHttpc = windowedTable("stat_httpc", statHttpcColumns, { readByTime: true });
export const statError = windowedTable("stat_error", statErrorColumns, { readByTime: true });
export const statRemote = windowedTable("stat_remote", statRemoteColumns, { readByTime: true });

/** tx_caller / tx_domain filtered call statistics: response shape undocumented, kept whole. */
export const txCalls = windowedTable("tx_calls", txCallColumns);

// tx_caller/tx_domain call statistics: a windowed aggregate whose columns are declared in
// catalogue/dictionary/series.ts.
import { txCallColumns } from "../../catalogue/dictionary/series.ts";
import { windowedTable } from "../../kernel/tables.ts";

/** tx_caller / tx_domain filtered call statistics: response shape undocumented, kept whole. */
export const txCalls = windowedTable("tx_calls", txCallColumns);

// The cross-project call statistics, in one place (spec "Cross-project call statistics (filtered)"):
// tx_caller and tx_domain filtered by filterkey/filterval. The response shape is not documented, so
// each window's body is kept whole in tx_calls. Its columns (declared once: src/kernel/declare.ts),
// its table, its dictionary entry, its envelope and its operations.
import { getTableName } from "drizzle-orm";
import { jsonb, text as textColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { columns, local } from "../kernel/declare.ts";
import { docEntry, windowedTable } from "../kernel/tables.ts";
import { isNoData } from "../schemas/envelope.ts";
import { DAY, defineOperation, type OperationDef } from "./types.ts";

// ---- Columns ----

const CONSTANT = "the catalogue entry's constant";

/** tx_caller / tx_domain filtered: the response shape is not documented, so each window's body is kept whole. */
export const txCallColumns = columns({
  metric_type: local(() => textColumn().notNull(), { text: "tx_caller or tx_domain (path segment metric_type).", conversion: CONSTANT })
    .key,
  filter_key: local(() => textColumn().notNull(), {
    text: "The filter the window was asked with (path filterkey): caller_pcode, caller_spec (version), caller_url, spec (version) or url.",
    conversion: "the request's input",
  }).key,
  filter_value: local(() => textColumn().notNull(), {
    text: "The value the filter matched (path filterval), as configured.",
    conversion: "the request's input before the base64 encoding caller_url and url get",
  }).key,
  payload: local(() => jsonb().notNull(), {
    field: "(body)",
    text: "The whole response body of the window.",
    conversion: "kept as JSON (shape not documented)",
  }),
});

// ---- Table: a windowed aggregate ----

/** tx_caller / tx_domain filtered call statistics: response shape undocumented, kept whole. */
export const txCalls = windowedTable("tx_calls", txCallColumns);

// ---- The dictionary's entry (the group is series.ts's) ----

export const txCallsDoc = docEntry(
  txCalls,
  "Cross-project call statistics filtered by filterkey/filterval (tx_caller: transaction calls between projects; " +
    "tx_domain: transaction domain calls). The response shape is not documented: each window's answer is kept whole.",
  txCallColumns,
);

// ---- Envelope ----

/**
 * tx_caller / tx_domain filtered: the response shape is undocumented, so the payload is kept as JSON.
 * One record per response: metric_type, payload, extra; null (no record) for an empty body.
 */
function callsEnvelope(metricType: string) {
  return z
    .unknown()
    .transform((body) => (isNoData(body) ? null : { metric_type: metricType, payload: body, extra: {} as Record<string, unknown> }));
}

// ---- Operations ----

/** filterkey values whose filterval is base64-encoded (spec "Cross-project call statistics"). */
export const BASE64_FILTER_KEYS = new Set(["caller_url", "url"]);

export const callOperations: OperationDef[] = (["tx_caller", "tx_domain"] as const).map((metric) =>
  defineOperation({
    id: `calls.${metric}`,
    summary: `${metric} call statistics filtered by filterkey/filterval (response shape undocumented: kept as JSON)`,
    area: "calls",
    method: "GET",
    path: `/open/api/json/${metric}/{stime}/{etime}/filter/{filterkey}/{filterval}`,
    encode: {
      filterval: (value, params) =>
        BASE64_FILTER_KEYS.has(String(params.filterkey)) ? Buffer.from(value, "utf8").toString("base64") : value,
    },
    token: "project",
    altToken: "account",
    sendsPcode: true,
    format: "json",
    windowLimitMs: DAY,
    inSpec: true,
    // Response shape undocumented: no `records`, the body is kept as one JSON payload record.
    envelope: callsEnvelope(metric),
    // One partition per configured filter (`inputs`: filterkey + filterval).
    stream: {
      kind: "aggregate",
      table: getTableName(txCalls),
      enabledByDefault: false,
      paramColumns: { filterkey: "filter_key", filterval: "filter_value" },
    },
  }),
);

// Natural keys of the aggregate records (the warehouse relies on them): within one response the
// records are unique by these fields. Also the count field that ground-truth sums use.

export const NATURAL_KEYS: Readonly<Record<string, readonly string[]>> = {
  "stat.transaction": ["serviceHash"],
  "stat.sql": ["sqlHash", "dbcHash", "serviceHash"],
  "stat.httpc": ["urlHash", "hostHash", "port", "serviceHash"],
  "stat.error": ["classHash", "msgHash", "serviceHash"],
  "stat.remote": ["ip"],
  "range.exception": ["time", "classHash", "serviceHash"],
  "range.httpc": ["UrlHash", "HostHash", "Port"],
  "range.httpc.filtered": ["UrlHash", "HostHash", "Port", "Service_hash"],
  "range.sql": ["hash", "dbcHash"],
  "range.remote": ["ip"],
  "range.transaction": ["hash"],
  "range.heap_use.avg": ["oid"],
  "range.heap_use.max": ["oid"],
};

/** The call-count field of each aggregate record type. */
export const COUNT_FIELD: Readonly<Record<string, string>> = {
  "stat.transaction": "count",
  "stat.sql": "count",
  "stat.httpc": "count",
  "stat.error": "count",
  "stat.remote": "count",
  "range.exception": "count",
  "range.httpc": "Total",
  "range.httpc.filtered": "Total",
  "range.sql": "count_total",
  "range.remote": "count",
  "range.transaction": "count",
};

/** `field=value|field=value` of a record's natural key. */
export function naturalKey(opId: string, record: Readonly<Record<string, unknown>>): string {
  const fields = NATURAL_KEYS[opId];
  if (!fields) throw new Error(`no natural key for ${opId}`);
  return fields.map((f) => `${f}=${String(record[f])}`).join("|");
}

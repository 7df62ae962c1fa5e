// The report's range and bucket size, from the flags, else from what the ledger spans.

import { UsageError } from "../usage-error.ts";
import { alignDown, alignUp, DAY_MS, HOUR_MS } from "../windows/grid.ts";
import type { LedgerSpan } from "./reads/readLedgerSpan.ts";

export interface ReportRange {
  readonly from: number;
  readonly to: number;
  readonly bucket: "hour" | "day";
  readonly bucketMs: number;
}

/** Up to this long, the heat map has a column per hour (72 at most); longer ranges one per day. */
const HOURLY_UP_TO = 3 * DAY_MS;
const DEFAULT_SPAN = 7 * DAY_MS;

/**
 * Bounds are widened to whole buckets (like backfill widens to whole windows). Without `--to`,
 * the end is the bucket after the ledger's last instant (a capture taken at that instant is
 * inside), or after now: a backfill widened to a whole 7-day window can end in the future.
 */
export function reportRange(flags: { from: number | null; to: number | null }, span: LedgerSpan, now: number): ReportRange {
  const rawTo = flags.to ?? Math.min(span.to ?? now, now);
  // A ledger of captures at one instant (snapshot streams only, or a run stopped early) spans no
  // time: its bucket is the range. Only flags can ask for an empty range.
  const rawFrom = flags.from ?? Math.min(span.from ?? rawTo - DEFAULT_SPAN, rawTo);
  if (rawTo < rawFrom || (rawTo === rawFrom && (flags.from !== null || flags.to !== null)))
    throw new UsageError(`--to must be after --from (${new Date(rawFrom).toISOString()})`);
  const bucketMs = rawTo - rawFrom <= HOURLY_UP_TO ? HOUR_MS : DAY_MS;
  const from = alignDown(Math.floor(rawFrom), bucketMs);
  const to = flags.to === null ? alignDown(Math.floor(rawTo), bucketMs) + bucketMs : alignUp(Math.ceil(rawTo), bucketMs);
  return { from, to, bucket: bucketMs === HOUR_MS ? "hour" : "day", bucketMs };
}

// The aggregate operations the sandbox serves (stat.*, range.* records), each declared beside its
// printer in its payload file (payloads/aggregate-op.ts says what an entry holds). A new aggregate
// stream of the sandbox is one entry there.
import type { AggregateOp } from "./payloads/aggregate-op.ts";
import { RANGE_OPS } from "./payloads/range-records.ts";
import { STAT_OPS } from "./payloads/stat-records.ts";

export const AGGREGATE_OPS: Readonly<Record<string, AggregateOp>> = { ...STAT_OPS, ...RANGE_OPS };

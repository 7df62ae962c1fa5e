// The SQL types the warehouse's columns are made of, for the table declarations (db/schema) and the
// column declarations (kernel/declare.ts).
import { bigint, doublePrecision, timestamp } from "drizzle-orm/pg-core";

/** timestamptz read as Date: epoch-ms fields of the API land here. */
export const ts = () => timestamp({ withTimezone: true, mode: "date" });
/** bigint for pcode, hashes and oids (signed 32-bit hashes, pcode beyond 2^31). */
export const i64 = () => bigint({ mode: "number" });
/** double precision for measures (the API sends several of them as strings). */
export const f64 = () => doublePrecision();

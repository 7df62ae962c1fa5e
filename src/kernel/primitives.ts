// Reusable zod pieces for the payload quirks of the Open API (docs/api-notes.md "Payload quirks";
// the samples in test/fixtures/api-samples). Each one accepts every documented spelling of a value and rejects
// anything else with a message that names the offending value, so a quarantined record says why.
import { DateTime } from "luxon";
import { z } from "zod";

import { INVALID, type Invalid, registerFast } from "./fast.ts";

function show(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (value === undefined) return "nothing (field missing)";
  // Nested bigints (exact 64-bit values in a list) are shown as digits, not thrown on.
  const text = JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v));
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * A schema that converts with `convert`, reporting `expected <what>, got <value>` when it returns
 * INVALID (`expected` may depend on the value refused).
 */
export function coerce<T>(expected: string | ((value: unknown) => string), convert: (value: unknown) => T | Invalid) {
  const schema = z.unknown().transform((value, ctx): T => {
    const out = convert(value);
    if (out === INVALID) {
      const what = typeof expected === "string" ? expected : expected(value);
      ctx.addIssue({ code: "custom", message: `expected ${what}, got ${show(value)}`, input: value });
      return z.NEVER;
    }
    return out;
  });
  // The fast lane of record parsing (fast.ts) calls `convert` directly.
  return registerFast(schema, convert);
}

// Plain decimal or exponent notation (4.5187527E-4). Anything else, notably the docs' YAML slips
// "0," and "44,", is an error rather than a silently stripped or NaN value.
const NUMERIC = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER_TEXT = /^[+-]?\d+$/;

function toNumber(value: unknown): number | Invalid {
  if (typeof value === "number") return Number.isFinite(value) ? value : INVALID;
  if (typeof value === "bigint") return Number(value); // a float column that happened to be huge
  if (typeof value === "string" && NUMERIC.test(value.trim())) return Number(value.trim());
  return INVALID;
}

/** A number, also when it arrives as a string ("600.0", "93.07", "7"). */
export const num = coerce("a number", toNumber);

/** A safe integer, also as a string ("7", "600.0" is accepted because it is integral). */
export const int = coerce("an integer", (v) => {
  const n = toNumber(v);
  return n !== INVALID && Number.isSafeInteger(n) ? n : INVALID;
});

/** A number of records (`total`, `retrievedTotal`): a non-negative integer; a negative one is a lie. */
export const count = coerce("a count (a non-negative integer)", (v) => {
  const n = toNumber(v);
  return n !== INVALID && Number.isSafeInteger(n) && n >= 0 ? n : INVALID;
});

/**
 * A count inside a record (`count`, `error`): an integer, never negative. A negative one is stored
 * nowhere: it would take calls away from every sum it enters, so its record is quarantined.
 */
export const recordCount = coerce(
  (v) => {
    const n = toNumber(v);
    return n !== INVALID && Number.isSafeInteger(n) ? "a count, never negative" : "an integer";
  },
  (v) => {
    const n = toNumber(v);
    return n !== INVALID && Number.isSafeInteger(n) && n >= 0 ? n : INVALID;
  },
);

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** Signed 32-bit hash or agent id (negative values are normal: classHash, HostHash, oid). */
export const int32 = coerce("a signed 32-bit integer", (v) => {
  const n = toNumber(v);
  return n !== INVALID && Number.isInteger(n) && n >= INT32_MIN && n <= INT32_MAX ? n : INVALID;
});

/** Project code: an integer that may exceed 2^31 (3000000079) and arrives as "7" or 7. */
export const pcode = int;

/**
 * Integer that may exceed 2^53 (snapSeq "6068699991557528332", totalSpace 9223372000000000000),
 * kept exact as bigint. parseJson already turns long integer literals into bigint; a number input is
 * converted as is (if it was beyond 2^53 it was rounded before it reached us).
 */
export const long = coerce("an integer (64-bit)", (v): bigint | Invalid => {
  if (typeof v === "bigint") return v;
  if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : INVALID;
  if (typeof v === "string" && INTEGER_TEXT.test(v.trim())) return BigInt(v.trim());
  return INVALID;
});

/** Boolean, also as the strings "true"/"false" (any case). */
export const bool = coerce("a boolean", (v) => {
  if (typeof v === "boolean") return v;
  if (typeof v === "string") {
    const lower = v.trim().toLowerCase();
    if (lower === "true" || lower === "false") return lower === "true";
  }
  return INVALID;
});

/**
 * Enumerated text normalised to lower case: project status "Subscribe", event level "Critical",
 * event status "ON". Not restricted to the documented values: a new status must not quarantine a
 * project from a dimension table.
 */
export const lower = z.string().transform((s) => s.trim().toLowerCase());

/** Identifier documented as integer but sent as text (event uuid is 32 hex digits): kept as text. */
export const ident = z.union([z.string(), z.number(), z.bigint()]).transform((v) => String(v));

// ---- times -------------------------------------------------------------------------------------

const EPOCH_TEXT = /^\d{1,16}$/;

function epochToDate(v: unknown): Date | Invalid {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return new Date(v);
  if (typeof v === "string" && EPOCH_TEXT.test(v.trim())) return new Date(Number(v.trim()));
  return INVALID;
}

/** Epoch milliseconds (number or digit string) -> Date. */
export const epochMs = coerce("epoch milliseconds", epochToDate);

/** Epoch ms where 0 means "not yet" (event offTime before resolution) -> Date or null. */
export const epochMsOrZero = coerce("epoch milliseconds", (v) => {
  const d = epochToDate(v);
  return d !== INVALID && d.getTime() === 0 ? null : d;
});

// "2018-10-19T07:17:03.774" (projects) or "2018-10-19 07:17:03.774" (old docs): no zone, so UTC.
// An explicit zone ("2018-11-18T07:17:31.216Z", server product) is honoured.
const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/;

function isoToDate(v: unknown): Date | Invalid {
  if (typeof v !== "string" || !ISO.test(v.trim())) return INVALID;
  const dt = DateTime.fromISO(v.trim().replace(" ", "T"), { zone: "utc" });
  return dt.isValid ? dt.toJSDate() : INVALID;
}

/** ISO 8601 date-time, zone-less text read as UTC -> Date. */
export const isoUtc = coerce("an ISO date-time", isoToDate);

// Java Date.toString(): "Tue Sep 18 08:34:27 GMT 2018". The zone word is the server's default zone.
const JAVA_DATE = /^[A-Za-z]{3} ([A-Za-z]{3} \d{1,2} \d{2}:\d{2}:\d{2}) (\S+) (\d{4})$/;
// Short names Java prints for common zones (IST read as India); ambiguous ones (CST, BST) are errors.
const ZONE_ABBREVIATIONS: Record<string, string> = {
  KST: "UTC+9",
  JST: "UTC+9",
  HKT: "UTC+8",
  SGT: "UTC+8",
  IST: "UTC+5:30",
  CET: "UTC+1",
  CEST: "UTC+2",
  EET: "UTC+2",
  EEST: "UTC+3",
  WET: "UTC",
  WEST: "UTC+1",
  EST: "UTC-5",
  EDT: "UTC-4",
  MST: "UTC-7",
  MDT: "UTC-6",
  PST: "UTC-8",
  PDT: "UTC-7",
  AEST: "UTC+10",
  AEDT: "UTC+11",
};

function javaZone(word: string): string {
  if (word === "GMT" || word === "UTC" || word === "Z") return "utc";
  // "GMT+09:00" is Java's form for a fixed offset; luxon spells it "UTC+09:00".
  if (/^(GMT|UTC)[+-]\d{1,2}(:?\d{2})?$/.test(word)) return word.replace(/^GMT/, "UTC");
  // Otherwise only an IANA name (Region/City), if luxon knows it: bare words such as "CST" are
  // ambiguous (China or US Central) and Intl would silently accept some of them.
  return ZONE_ABBREVIATIONS[word] ?? (word.includes("/") ? word : "invalid/zone");
}

function javaToDate(v: unknown): Date | Invalid {
  if (typeof v !== "string") return INVALID;
  const m = JAVA_DATE.exec(v.trim());
  if (!m) return INVALID;
  const dt = DateTime.fromFormat(`${m[1]} ${m[3]}`, "LLL d HH:mm:ss yyyy", { zone: javaZone(m[2]!), locale: "en-US" });
  return dt.isValid ? dt.toJSDate() : INVALID;
}

/** Java Date text ("Tue Sep 18 08:34:27 GMT 2018") -> Date. */
export const javaDate = coerce("a date like 'Tue Sep 18 08:34:27 GMT 2018'", javaToDate);

/** Any documented time form: epoch ms, ISO (zone-less = UTC) or Java Date text -> Date. */
export const anyTime = coerce("a time (epoch ms, ISO or Java date text)", (v) => {
  for (const parse of [epochToDate, isoToDate, javaToDate]) {
    const d = parse(v);
    if (d !== INVALID) return d;
  }
  return INVALID;
});

// ---- lists and text ----------------------------------------------------------------------------

/** Agent ids as a JSON array, or a string holding one ("[-1459620666]", exception records). */
export const oidList = coerce("a list of agent ids", (v): number[] | Invalid => {
  let list: unknown = v;
  if (typeof v === "string") {
    const text = v.trim();
    if (!/^\[[-+\d,\s]*\]$/.test(text)) return INVALID;
    list = text === "[]" || /^\[\s*\]$/.test(text) ? [] : text.slice(1, -1).split(",");
  }
  if (!Array.isArray(list)) return INVALID;
  const out: number[] = [];
  for (const item of list) {
    const n = toNumber(typeof item === "string" ? item.trim() : item);
    if (n === INVALID || !Number.isInteger(n)) return INVALID;
    out.push(n);
  }
  return out;
});

/**
 * An identifier sent as text or as a number, kept as its text (a long one arrives exact, as a
 * bigint: schemas/json.ts). Its fast lane gives zod's output: String of a finite number or a bigint.
 */
export const idText = registerFast(z.union([z.string(), z.number(), z.bigint()]).transform(String), (v) =>
  typeof v === "string" ? v : typeof v === "bigint" || (typeof v === "number" && Number.isFinite(v)) ? String(v) : INVALID,
);

/** `desc` of composite-metric settings: a JSON document encoded as a string, kept as that string. */
export const jsonText = z.string();

/** A `[timestamp, value]` pair of a series or visitor list. */
export const point = z.tuple([epochMs, num.nullable()]);

export type { Invalid };
export { INVALID };

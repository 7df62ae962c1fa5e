// A held answer's body (whole-page.ts) parsed in pieces, exactly as JSON.parse reads it whole, so
// that a large body is never decoded into one string (PIECE_BYTES says why).

/**
 * Records are parsed a piece of about this many bytes at a time in a body of more than twice it. A
 * string of more than 128 KiB is one of V8's large objects, its pages mapped afresh and faulted in
 * on each answer: a 181 KB body took 8.7 ns a byte to decode and parse whole, 3.6 in pieces; under
 * 128 KiB both 2.5-3 (docs/benchmarks.md).
 */
export const PIECE_BYTES = 64 * 1024;

/** Where records part: the comma of `},{` (a cut inside a string or a nested array fails to parse). */
const BETWEEN = Buffer.from("},{");

/**
 * The body parsed in pieces, exactly as JSON.parse reads it whole: the envelope with its records
 * array written empty, and the records array's text a piece at a time, cut after a record's `}`.
 * undefined where that cannot be shown (whole parses it then). The caller has found the records key
 * written once (whole-page.ts keyOnce), so an envelope that parses with an empty array at it found
 * the array's true start. Each piece starts where a record does, or the one before it ended inside
 * a string or a nested value and did not parse; so the records are the array's. The array ends at
 * the body's last `]`: one in the envelope after it leaves pieces that do not parse.
 */
export function inPieces(bytes: Buffer, at: string | null): { root: unknown; list: unknown[] } | undefined {
  const open = arrayStart(bytes, at);
  const close = bytes.lastIndexOf(0x5d);
  if (open < 0 || close <= open) return undefined;
  try {
    const root: unknown = JSON.parse(`${bytes.toString("utf8", 0, open)}[]${bytes.toString("utf8", close + 1)}`);
    const empty = valueAt(root, at);
    if (!Array.isArray(empty) || empty.length > 0) return undefined;
    const list: unknown[] = [];
    for (let from = open + 1; from < close; ) {
      const piece = nextPiece(bytes, from, close);
      if (piece === undefined) return undefined;
      for (const record of piece.records) list.push(record);
      from = piece.cut + 1;
    }
    return { root: at === null ? list : root, list };
  } catch {
    return undefined;
  }
}

/** Cuts tried for a piece: past a `},{` inside a string or a nested value, the next ones. */
const CUTS_TRIED = 8;

/** The records from `from` (a record's start) to a cut (a comma between records, or `close`); undefined if none of the cuts tried parses. */
function nextPiece(bytes: Buffer, from: number, close: number): { records: unknown[]; cut: number } | undefined {
  let next = bytes.indexOf(BETWEEN, from + PIECE_BYTES);
  for (let tried = 0; tried < CUTS_TRIED; tried++) {
    const cut = next < 0 || next >= close ? close : next + 1;
    try {
      const records: unknown = JSON.parse(`[${bytes.toString("utf8", from, cut)}]`);
      return Array.isArray(records) ? { records, cut } : undefined;
    } catch {
      if (cut === close) return undefined;
      next = bytes.indexOf(BETWEEN, next + 1);
    }
  }
  return undefined;
}

/** The index of the records array's `[`: the body's first byte past white space, or the value of `"at"`; -1 if not there. */
function arrayStart(bytes: Buffer, at: string | null): number {
  let i = at === null ? 0 : bytes.indexOf(`"${at}"`);
  if (i < 0) return -1;
  if (at !== null) {
    i = pastSpace(bytes, i + at.length + 2);
    if (bytes[i] !== 0x3a) return -1;
    i = pastSpace(bytes, i + 1);
  } else i = pastSpace(bytes, i);
  return bytes[i] === 0x5b ? i : -1;
}

/** The first index from `i` that is not JSON white space. */
function pastSpace(bytes: Buffer, i: number): number {
  while (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09) i++;
  return i;
}

/** The value at the records key `at` of a parsed body (the body itself for null); undefined where it has none. */
export function valueAt(root: unknown, at: string | null): unknown {
  if (at === null) return root;
  return typeof root === "object" && root !== null && !Array.isArray(root) ? (root as Record<string, unknown>)[at] : undefined;
}

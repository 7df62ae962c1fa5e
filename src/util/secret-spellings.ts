// Where a secret can hide in a text a server sent back: the token as it is, in another case,
// URL-encoded, JSON-escaped (`\u0070`), HTML-escaped, any mix of those character by character;
// base64 (at each of the three byte alignments inside a longer base64 text, both alphabets) and
// hex of its bytes; and any of these cut short, anywhere in the text: a run of its first or of its
// last characters long enough to matter (a server quoting all but the token's last two characters,
// followed by more text, gave away 21 of 23 characters).
//
// The text is decoded once into one lower-case character per spelled character (`%70`, `\u0070`,
// `&#112;`, `P` all become `p`), remembering where each began; every spelling is then a plain
// string in that decoded text, found in one pass whatever the number of tokens.

/**
 * A plain spelling in the decoded text. A head is found from its start: whole, or cut short after
 * at least `min` characters. A tail (`before` set) is the spelling's last `min` characters, found
 * whole, then followed back through `before` (the characters that precede it in the spelling).
 */
interface Literal {
  readonly text: string;
  readonly min: number;
  readonly before?: string;
}

export interface SecretMatcher {
  /** [start, end) of every spelling found, in order, not overlapping. */
  find(text: string): [number, number][];
}

/**
 * The base64 characters that depend on the token's bytes only, for the token starting at byte
 * `align` (0, 1, 2) of a group of three: the same in any longer base64 text holding the token there.
 */
function base64Core(bytes: Buffer, align: number): string {
  const text = Buffer.concat([Buffer.alloc(align), bytes]).toString("base64");
  return text.slice(Math.ceil((8 * align) / 6), Math.floor((8 * (align + bytes.length)) / 6));
}

// A spelling cut short keeps at least six characters of the token, or of its bytes when encoded
// (12 hex digits, 8 base64 characters): a run that long of a random token does not turn up by
// chance, and one shorter gives little away. A secret of six characters or fewer is masked whole
// only: a short password's halves ("post" of "postgres") are ordinary words.
const minOf = (length: number) => Math.min(length, 6);
const MIN_HEX = 12;
const MIN_BASE64 = 8;

function literalsOf(token: string): Literal[] {
  const bytes = Buffer.from(token, "utf8");
  const encoded = new Map<string, number>([[bytes.toString("hex"), MIN_HEX]]);
  for (const align of [0, 1, 2]) {
    const core = base64Core(bytes, align);
    encoded.set(core, MIN_BASE64).set(core.replace(/\+/g, "-").replace(/\//g, "_"), MIN_BASE64);
  }
  const out = spelledBy(token, minOf(token.length));
  for (const [text, min] of encoded) if (text.length >= 8) out.push(...spelledBy(text, min));
  return out;
}

/** The head of a spelling (it whole, or its first characters) and its tail (its last characters). */
function spelledBy(spelling: string, min: number): Literal[] {
  const text = lower(spelling);
  return text.length > min
    ? [
        { text, min },
        { text: text.slice(-min), min, before: text.slice(0, -min) },
      ]
    : [{ text, min }];
}

function lower(text: string): string {
  return String.fromCharCode(...Array.from({ length: text.length }, (_, i) => lowerCode(text.charCodeAt(i))));
}

function lowerCode(code: number): number {
  if (code >= 0x41 && code <= 0x5a) return code + 32;
  if (code < 0x80) return code;
  const low = String.fromCharCode(code).toLowerCase();
  return low.length === 1 ? low.charCodeAt(0) : code;
}

// Texts are decoded a part at a time (a report may be megabytes); parts overlap by the longest
// spelling, a character being at most 16 characters long (`&#x0000000070;`).
const PART = 256 * 1024;

/** A matcher of every spelling of `tokens` (empty tokens are ignored); null when there is none. */
export function secretMatcher(tokens: readonly string[]): SecretMatcher | null {
  const literals = tokens.filter((t) => t.length > 0).flatMap(literalsOf);
  if (literals.length === 0) return null;
  // Literals by their first two decoded characters, and a filter of those pairs.
  const byPair: Pairs = { map: new Map(), filter: new Uint8Array(1 << 16) };
  for (const l of literals) {
    const key = (l.text.charCodeAt(0) << 16) | l.text.charCodeAt(1);
    byPair.map.set(key, [...(byPair.map.get(key) ?? []), l]);
    byPair.filter[pairHash(l.text.charCodeAt(0), l.text.charCodeAt(1))] = 1;
  }
  const overlap = 16 * Math.max(...literals.map((l) => l.text.length)) + 16;
  return {
    find(text) {
      const all: [number, number][] = [];
      for (let from = 0; from < text.length; from += PART) {
        const to = Math.min(text.length, from + PART + overlap);
        all.push(...findIn(text, from, to, byPair));
        if (to === text.length) break;
      }
      // Parts overlap: a spelling found twice, or two that overlap, is one range.
      const found: [number, number][] = [];
      for (const [start, end] of all.sort((a, b) => a[0] - b[0])) {
        const last = found[found.length - 1];
        if (last && start < last[1]) last[1] = Math.max(last[1], end);
        else found.push([start, end]);
      }
      return found;
    },
  };
}

interface Pairs {
  readonly map: Map<number, Literal[]>;
  /** 1 where some literal may begin with a pair of this hash: most positions of a text are passed over on it. */
  readonly filter: Uint8Array;
}

const pairHash = (a: number, b: number) => ((a * 251) ^ b) & 0xffff;

/** Spellings found in text[from, to); a spelling running past `to` is found in the next part. */
function findIn(text: string, from: number, to: number, byPair: Pairs): [number, number][] {
  const { codes, starts, length } = decode(text, from, to);
  const found: [number, number][] = [];
  for (let i = 0; i + 1 < length; ) {
    if (byPair.filter[pairHash(codes[i]!, codes[i + 1]!)] === 0) {
      i++;
      continue;
    }
    let first = i;
    let end = i;
    for (const l of byPair.map.get((codes[i]! << 16) | codes[i + 1]!) ?? []) {
      const n = matchAt(codes, length, i, l);
      if (n === 0) continue;
      end = Math.max(end, i + n);
      if (l.before !== undefined) first = Math.min(first, i - matchBefore(codes, i, l.before));
    }
    if (end > i) {
      found.push([starts[first]!, starts[end]!]);
      i = end;
    } else i++;
  }
  return found;
}

/** Decoded characters matched at `i`: the whole literal, or (a head) at least `min` of its first; 0 if none. */
function matchAt(codes: Uint16Array, length: number, i: number, l: Literal): number {
  let n = 0;
  while (n < l.text.length && i + n < length && codes[i + n] === l.text.charCodeAt(n)) n++;
  return n === l.text.length || (l.before === undefined && n >= l.min) ? n : 0;
}

/** How many decoded characters before `i` are the last characters of `before`. */
function matchBefore(codes: Uint16Array, i: number, before: string): number {
  let n = 0;
  while (n < before.length && n < i && codes[i - n - 1] === before.charCodeAt(before.length - n - 1)) n++;
  return n;
}

const NAMED: Readonly<Record<string, number>> = { amp: 0x26, lt: 0x3c, gt: 0x3e, quot: 0x22, apos: 0x27 };
const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));/y;
const HEX2 = /^[0-9a-fA-F]{2}$/;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * text[from, to) as lower-case UTF-16 codes, one per spelled character, and where each began
 * (`starts[length]` is where the last one ended).
 */
function decode(text: string, from: number, to: number): { codes: Uint16Array; starts: Int32Array; length: number } {
  const codes = new Uint16Array(to - from);
  const starts = new Int32Array(to - from + 1);
  let n = 0;
  for (let p = from; p < to; ) {
    const c = text.charCodeAt(p);
    // Most characters spell themselves: no escape to read.
    if (c !== 0x25 && c !== 0x5c && c !== 0x26) {
      starts[n] = p++;
      codes[n++] = c >= 0x41 && c <= 0x5a ? c + 32 : c < 0x80 ? c : lowerCode(c);
      continue;
    }
    const [code, size, second] = spelled(text, p, to);
    starts[n] = p;
    codes[n++] = lowerCode(code);
    if (second !== undefined) {
      starts[n] = p;
      codes[n++] = second;
    }
    p += size;
  }
  starts[n] = to;
  return { codes, starts, length: n };
}

/** The character spelled at `p`: its code, how many characters spell it, a second UTF-16 code if any. */
function spelled(text: string, p: number, to: number): [number, number, number?] {
  const c = text.charCodeAt(p);
  if (c === 0x25 /* % */) return percent(text, p, to) ?? [c, 1];
  if (c === 0x5c /* \ */) {
    const next = text[p + 1];
    if (next === "u" && HEX4.test(text.slice(p + 2, p + 6)) && p + 6 <= to) return [Number.parseInt(text.slice(p + 2, p + 6), 16), 6];
    if (next === "x" && HEX2.test(text.slice(p + 2, p + 4)) && p + 4 <= to) return [Number.parseInt(text.slice(p + 2, p + 4), 16), 4];
    if ((next === "/" || next === '"' || next === "\\") && p + 2 <= to) return [next.charCodeAt(0), 2];
    return [c, 1];
  }
  if (c === 0x26 /* & */) {
    ENTITY.lastIndex = p;
    const m = ENTITY.exec(text);
    if (!m || ENTITY.lastIndex > to) return [c, 1];
    const cp = m[3] ? NAMED[m[3]]! : Number.parseInt(m[1] ?? m[2]!, m[1] ? 10 : 16);
    return fromCodePoint(cp, m[0].length);
  }
  return [c, 1];
}

/** `%XX`, or the %XX sequence of one UTF-8 character; null when it is no such thing. */
function percent(text: string, p: number, to: number): [number, number, number?] | null {
  const byte = (at: number) =>
    at + 3 <= to && text[at] === "%" && HEX2.test(text.slice(at + 1, at + 3)) ? Number.parseInt(text.slice(at + 1, at + 3), 16) : -1;
  const lead = byte(p);
  if (lead < 0) return null;
  if (lead < 0x80) return [lead, 3];
  const extra = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  let cp = lead & (0x3f >> extra);
  for (let k = 1; k <= extra; k++) {
    const b = byte(p + 3 * k);
    if (b < 0x80 || b > 0xbf) return [lead, 3];
    cp = (cp << 6) | (b & 0x3f);
  }
  return extra === 0 ? [lead, 3] : fromCodePoint(cp, 3 * (extra + 1));
}

function fromCodePoint(cp: number, size: number): [number, number, number?] {
  if (cp > 0x10ffff) return [0xfffd, size];
  if (cp < 0x10000) return [cp, size];
  const s = String.fromCodePoint(cp);
  return [s.charCodeAt(0), size, s.charCodeAt(1)];
}

// Text the database cannot hold (db/write/cleanText.ts): what is replaced, what is kept, and where the
// original goes. The database side (both databases) is in test/integration/db-text.test.ts.
import { describe, expect, it } from "vitest";
import { cleanRow, cleanValue, escapeControl, isClean, isCleanJson, ORIGINAL_KEY } from "../../src/db/write/cleanText.ts";

const LONE_HIGH = "\ud83d";
const LONE_LOW = "\ude00";
const PAIR = "\ud83d\ude00";

describe("text the database cannot hold", () => {
  it("is NUL and unpaired surrogates, never a paired one or other text", () => {
    for (const bad of ["a\u0000b", `x${LONE_HIGH}`, `${LONE_LOW}y`, `${LONE_LOW}${LONE_HIGH}`]) expect(isClean(bad), bad).toBe(false);
    for (const good of ["", "plain", `smile ${PAIR}`, "tab\tnew\nline \\u0000 é 日本", "\u0001\u001f"])
      expect(isClean(good), good).toBe(true);
  });

  it("is found in JSON text by its escapes, not by an escaped backslash before `u0000`", () => {
    expect(isCleanJson(JSON.stringify({ a: "x\u0000" }))).toBe(false);
    expect(isCleanJson(JSON.stringify([`${LONE_HIGH}`]))).toBe(false);
    expect(isCleanJson(JSON.stringify({ [`k${LONE_LOW}`]: 1 }))).toBe(false);
    expect(isCleanJson(JSON.stringify({ a: "\\u0000 is six characters", b: PAIR, c: "\u0001" }))).toBe(true);
    expect(isCleanJson(JSON.stringify({ a: "\\\u0000" }))).toBe(false);
  });

  it("becomes U+FFFD, in nested values and keys, and a clean value is returned as it was", () => {
    expect(cleanValue(`a\u0000b${LONE_HIGH}`)).toBe("a\uFFFDb\uFFFD");
    const nested = { list: ["ok", `x${LONE_LOW}`], "k\u0000": { n: 1, big: 12n } };
    expect(cleanValue(nested)).toEqual({ list: ["ok", "x\uFFFD"], "k\uFFFD": { n: 1, big: 12n } });
    const clean = { a: ["x", { b: PAIR }], d: new Date(0) };
    expect(cleanValue(clean)).toBe(clean);
  });

  it("keeps each changed column's original, escaped, in extra._original, and counts the values", () => {
    const columns = ["service", "count", "extra", "tags"];
    const values: unknown[] = ["a\u0000b", 5, { kept: "x", odd: `y${LONE_HIGH}` }, ["t", `u\u0000`]];
    expect(cleanRow(columns, values)).toBe(3);
    expect(values).toEqual([
      "a\uFFFDb",
      5,
      { kept: "x", odd: "y\uFFFD", [ORIGINAL_KEY]: { service: "a\\u0000b", odd: "y\\ud83d", tags: '["t","u\\u0000"]' } },
      ["t", "u\uFFFD"],
    ]);
    // The escaped originals are JSON's escapes: the exact original comes back from them.
    const originals = (values[2] as Record<string, Record<string, string>>)[ORIGINAL_KEY]!;
    expect(JSON.parse(`"${originals.service}"`)).toBe("a\u0000b");
    expect(JSON.parse(originals.tags!)).toEqual(["t", "u\u0000"]);
  });

  it("adds extra when the row had none, and changes nothing in a clean row", () => {
    const values: unknown[] = ["a\u0000", null];
    expect(cleanRow(["service", "extra"], values)).toBe(1);
    expect(values[1]).toEqual({ [ORIGINAL_KEY]: { service: "a\\u0000" } });
    const clean: unknown[] = ["a", { x: 1 }];
    expect(cleanRow(["service", "extra"], clean)).toBe(0);
    expect(clean).toEqual(["a", { x: 1 }]);
  });

  it("escapes control characters and unpaired surrogates of free text, keeping tab, newline and pairs", () => {
    expect(escapeControl(`gzip \u001f\u008b\u0000 bomb\x1b[31m\ttab\nline ${PAIR} ${LONE_HIGH}`)).toBe(
      `gzip \\u001f\u008b\\u0000 bomb\\u001b[31m\ttab\nline ${PAIR} \\ud83d`,
    );
  });
});

// Metric names in a PromQL expression, parsed just enough for the rules test: string literals,
// label matchers, range/offset durations, grouping label lists, functions, keywords, numbers and
// NaN/Inf are not metric names; every other identifier is.

const KEYWORDS = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "bool",
  "and",
  "or",
  "unless",
  "offset",
  "atan2",
]);
const GROUPING = /\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g;

export function metricNames(expr: string): string[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(GROUPING, " ")
    .replace(/\boffset\s+-?[0-9a-z]+/gi, " ")
    .replace(/\b\d+(\.\d+)?([eE][+-]?\d+)?\b/g, " ");
  const names = new Set<string>();
  for (const m of text.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = text.slice(m.index + m[0].length).trimStart();
    if (after.startsWith("(") || KEYWORDS.has(m[0]) || /^(nan|inf)$/i.test(m[0])) continue;
    names.add(m[0]);
  }
  return [...names].sort();
}

/** Names a registry's metrics appear under in the exposition (histograms: _bucket, _sum, _count). */
export function exposedNames(metrics: readonly { readonly name: string; readonly type: string }[]): Set<string> {
  const out = new Set<string>();
  for (const m of metrics) {
    out.add(m.name);
    if (m.type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) out.add(m.name + s);
    if (m.type === "summary") for (const s of ["_sum", "_count"]) out.add(m.name + s);
  }
  return out;
}

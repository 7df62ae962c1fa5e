// What Grafana does to a panel's SQL before Postgres sees it, for a given time range: template
// variables first (the frontend: multi-value and "include All" variables become quoted lists, as
// Grafana's SQL data sources format them), then the Postgres data source's macros (as in Grafana's
// pkg/tsdb/grafana-postgresql-datasource/macros.go). Unknown macros fail, as in Grafana.

export interface GrafanaVariable {
  readonly values: readonly string[];
  /** Multi-value or "include All": every value is quoted, joined by commas. */
  readonly multi: boolean;
}

export interface GrafanaContext {
  readonly from: number;
  readonly to: number;
  /** `$__interval` of the panel (Grafana: range / max data points, at least the panel's min interval). */
  readonly interval: string;
  readonly variables: Readonly<Record<string, GrafanaVariable>>;
}

const quote = (v: string) => `'${v.replaceAll("'", "''")}'`;

/** Variables ($name, ${name}) then macros ($__name(args)) of one query. */
export function expandGrafanaSql(sql: string, ctx: GrafanaContext): string {
  const vars: Record<string, GrafanaVariable> = {
    ...ctx.variables,
    __interval: { values: [ctx.interval], multi: false },
    __interval_ms: { values: [String(intervalSeconds(ctx.interval) * 1000)], multi: false },
  };
  const withVars = sql.replace(/\$\{(\w+)\}|\$(\w+)(?!\w|\()/g, (whole, braced?: string, bare?: string) => {
    const v = vars[(braced ?? bare)!];
    if (!v) return whole;
    return v.multi ? v.values.map(quote).join(",") : v.values.join(",").replaceAll("'", "''");
  });
  return withVars.replace(/\$([_a-zA-Z0-9]+)\(([^)]*)\)/g, (whole: string, name: string, params: string, at: number, text: string) => {
    // Grafana: a $__timeGroup directly followed by a comma is taken for the old aliased form.
    const alias = name === "__timeGroup" && text[at + whole.length] === ",";
    return macro(
      alias ? "__timeGroupAlias" : name,
      params.split(",").map((a) => a.trim()),
      ctx,
    );
  });
}

function macro(name: string, args: string[], ctx: GrafanaContext): string {
  const col = args[0] ?? "";
  switch (name) {
    case "__time":
      return `${col} AS "time"`;
    case "__timeEpoch":
      return `extract(epoch from ${col}) as "time"`;
    case "__timeFilter":
      return `${col} BETWEEN '${rfc3339(ctx.from)}' AND '${rfc3339(ctx.to)}'`;
    case "__timeFrom":
      return `'${rfc3339(ctx.from)}'`;
    case "__timeTo":
      return `'${rfc3339(ctx.to)}'`;
    case "__timeGroup": {
      const s = intervalSeconds((args[1] ?? "").replace(/^'|'$/g, ""));
      return `floor(extract(epoch from ${col})/${s})*${s}`;
    }
    case "__timeGroupAlias":
      return `${macro("__timeGroup", args, ctx)} AS "time"`;
    case "__unixEpochFilter":
      return `${col} >= ${Math.floor(ctx.from / 1000)} AND ${col} <= ${Math.floor(ctx.to / 1000)}`;
    default:
      throw new Error(`unknown macro "${name}"`);
  }
}

/** Go's time.RFC3339Nano in UTC: no fraction when it is zero, trailing zeros trimmed. */
function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d*?)0*Z$/, (_, f: string) => (f ? `.${f}Z` : "Z"));
}

const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 };

/** Grafana's interval syntax (`30s`, `5m`, `1h`, `1d`) in seconds. */
export function intervalSeconds(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)$/.exec(text.trim());
  if (!m) throw new Error(`error parsing interval ${text}`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

/** Every panel of a dashboard, the panels inside rows included. */
export function allPanels(dashboard: { panels?: unknown[] }): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const p of (dashboard.panels ?? []) as Record<string, unknown>[]) {
    out.push(p);
    if (Array.isArray(p.panels)) out.push(...allPanels(p as { panels: unknown[] }));
  }
  return out;
}

// The provisioned Grafana dashboards against a warehouse synced from the sandbox: every panel's SQL
// (and the project variable's), expanded as Grafana does for a 2-day range, runs without error and
// returns rows; the warehouse is given something for every panel (truncated windows from a small
// record cap, failed windows from injected 503s, a quarantined record). The panels run as Grafana
// runs them in docker-compose.yml: logged in as the read-only role deploy/postgres/grafana-reader.sql
// creates, which reads every table (also those created after it) and writes none.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { insertQuarantine } from "../../src/db/write/insertQuarantine.ts";
import { REPO_ROOT } from "../support/child-sync.ts";
import { adminSql } from "../support/db.ts";
import { DAY, type EngineHarness, HOUR, ledgerRows, MINUTE, startEngineHarness } from "../support/engine-harness.ts";
import { allPanels, expandGrafanaSql, type GrafanaContext } from "../support/grafana-sql.ts";

const TO = Date.UTC(2026, 1, 18);
const FROM = TO - 2 * DAY;
const NOW = TO + 10 * MINUTE;
const DIR = join(REPO_ROOT, "deploy", "grafana");

interface Target {
  rawSql?: string;
  expr?: string;
  datasource: { uid: string };
}
interface Dashboard {
  uid: string;
  panels: unknown[];
  templating: { list: { name: string; type: string; query: string; multi?: boolean; includeAll?: boolean }[] };
}

const dashboards: Dashboard[] = readdirSync(join(DIR, "dashboards"))
  .filter((f) => f.endsWith(".json"))
  .map((f) => JSON.parse(readFileSync(join(DIR, "dashboards", f), "utf8")) as Dashboard);
const targets = dashboards.flatMap((d) =>
  allPanels(d)
    .filter((p) => p.type !== "row")
    .flatMap((p) =>
      ((p.targets ?? []) as Target[]).map((t) => ({
        dashboard: d.uid,
        title: String(p.title),
        interval: (p.interval as string) ?? "5m",
        t,
      })),
    ),
);
/** The SQL panels (run below against a warehouse); the PromQL ones are checked in test/unit/deploy-prometheus.test.ts. */
const queries = targets.filter((q) => q.t.rawSql !== undefined).map((q) => ({ ...q, t: { ...q.t, rawSql: q.t.rawSql! } }));

const READER_SQL = readFileSync(join(REPO_ROOT, "deploy", "postgres", "grafana-reader.sql"), "utf8");

/** Runs grafana-reader.sql as the warehouse owner, with the settings compose passes in PGOPTIONS. */
async function createReader(sql: postgres.Sql, role: string, password: string, schema: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT set_config('apm_sync.reader_role', ${role}, true), set_config('apm_sync.reader_password', ${password}, true),
      set_config('apm_sync.schema', ${schema}, true)`;
    await tx.unsafe(READER_SQL);
  });
}

describe("Grafana provisioning", () => {
  let h: EngineHarness;
  let ctx: GrafanaContext;
  // Roles belong to the whole server: one of its own per run.
  const role = `grafana_reader_${randomBytes(4).toString("hex")}`;
  let reader: postgres.Sql;
  beforeAll(async () => {
    h = await startEngineHarness({
      now: NOW,
      maxRecords: 300,
      burstKeys: 1000,
      projects: 2,
      env: { APM_START: new Date(FROM).toISOString() },
    });
    const backfill = { command: "backfill", mode: { kind: "backfill", from: FROM, to: TO } } as const;
    await h.run({ command: "sync", mode: { kind: "sync" }, streams: ["account.projects"] });
    const streams = ["stat.transaction", "stat.sql", "stat.httpc", "stat.error", "visitors.h", "project.event_history"];
    expect((await h.run({ ...backfill, streams })).failed).toBe(false);
    // Failed windows: the server answers 503 to a stream fetched without retries.
    h.sandbox.setFaults(1, ["503"]);
    await h.run({ ...backfill, mode: { ...backfill.mode, to: FROM + 2 * HOUR }, streams: ["stat.remote"] }, { APM_RETRIES: "0" });
    h.sandbox.setFaults(0);
    const pcode = h.pcodes[0]!;
    await insertQuarantine(h.sql, [
      {
        runId: null,
        stream: "stat.error",
        pcode,
        windowStart: FROM,
        windowEnd: FROM + HOUR,
        recordIndex: 0,
        raw: { count: "x" },
        reason: "count: not a number",
      },
    ]);
    const statuses = new Set((await ledgerRows(h.sql)).map((l) => l.status));
    expect([...statuses].sort()).toEqual(["done", "failed", "truncated"]);
    await createReader(h.sql, role, "reader-pw-1", h.db.schema);
    const url = new URL(h.db.url);
    url.username = role;
    url.password = "reader-pw-1";
    reader = postgres(url.toString(), { max: 1, onnotice: () => {} });
    ctx = {
      from: FROM,
      to: TO,
      interval: "5m",
      variables: { schema: { values: [h.db.schema], multi: false }, project: { values: h.pcodes.map(String), multi: true } },
    };
    // A 2-day backfill of 6 streams: minutes on a loaded machine, more than the default hook timeout.
  }, 600_000);
  afterAll(async () => {
    await reader?.end();
    await h?.sql.unsafe(`DROP OWNED BY "${role}"`).catch(() => undefined);
    await h?.close();
    const admin = adminSql();
    await admin.unsafe(`DROP ROLE IF EXISTS "${role}"`).finally(() => admin.end());
  });

  it("the read-only login reads every table, also one created after it, and writes nothing", async () => {
    const [who] = await reader<{ user: string; ro: string }[]>`SELECT current_user AS user, current_setting('transaction_read_only') AS ro`;
    expect(who).toEqual({ user: role, ro: "on" });
    // A table the owner creates later (a new monthly partition, a new rollup table): readable at once.
    await h.sql.unsafe(`CREATE TABLE "${h.db.schema}".later_table (x int); INSERT INTO "${h.db.schema}".later_table VALUES (7)`);
    expect(await reader.unsafe("SELECT x FROM later_table")).toEqual([{ x: 7 }]);
    for (const write of ["INSERT INTO later_table VALUES (8)", "DELETE FROM sync_windows", "CREATE TABLE mine (x int)"])
      await expect(reader.unsafe(write), write).rejects.toThrow(/read-only transaction/);
    // Read-only by privileges too, not only by the session's default.
    for (const write of ["INSERT INTO later_table VALUES (8)", "DELETE FROM sync_windows", "CREATE TABLE mine (x int)"])
      await expect(
        reader.begin("read write", (tx) => tx.unsafe(write)),
        write,
      ).rejects.toThrow(/permission denied/);
    // Run again (every `up`): idempotent, and a new password takes.
    await createReader(h.sql, role, "reader-pw-2", h.db.schema);
    const [{ n }] = (await reader.unsafe("SELECT count(*)::int AS n FROM later_table")) as unknown as [{ n: number }];
    expect(n).toBe(1);
    const [pw] = await h.sql<{ ok: boolean }[]>`SELECT rolpassword IS NOT NULL AS ok FROM pg_authid WHERE rolname = ${role}`;
    expect(pw?.ok).toBe(true);
  });

  it("the dashboards read the provisioned data sources (SQL the warehouse, PromQL Prometheus), with a schema constant and a project variable", () => {
    const sources = parse(readFileSync(join(DIR, "provisioning", "datasources", "apm-sync.yml"), "utf8")) as {
      datasources: { uid: string; type: string }[];
    };
    const warehouse = sources.datasources.find((s) => s.uid === "apm-warehouse");
    expect(warehouse?.type).toBe("grafana-postgresql-datasource");
    expect(sources.datasources.find((s) => s.uid === "apm-prometheus")?.type).toBe("prometheus");
    expect(dashboards.map((d) => d.uid).sort()).toEqual(["apm-sync-operations", "apm-sync-overview"]);
    expect(queries.length).toBeGreaterThanOrEqual(20);
    // Every target is one or the other, on its own data source; some panel reads the metrics.
    for (const q of targets) {
      const kind = q.t.rawSql !== undefined ? "apm-warehouse" : q.t.expr !== undefined ? "apm-prometheus" : "no query";
      expect({ panel: q.title, uid: q.t.datasource.uid }).toEqual({ panel: q.title, uid: kind });
    }
    expect(targets.filter((q) => q.t.expr !== undefined).length).toBeGreaterThanOrEqual(2);
    for (const d of dashboards) {
      const vars = d.templating.list.map((v) => `${v.name}:${v.type}`);
      expect(vars).toEqual(["schema:constant", "project:query"]);
      expect(d.templating.list[1]).toMatchObject({ multi: true, includeAll: true });
    }
  });

  it("panels read the statistics through the hourly/daily views and filter them on bucket_start", () => {
    for (const q of queries) {
      const sql = q.t.rawSql;
      expect({ panel: q.title, raw: /\bstat_(transaction|sql|httpc|error|remote)\b(?!_(hourly|daily))/.test(sql) }).toEqual({
        panel: q.title,
        raw: false,
      });
      if (/stat_\w+_(hourly|daily)/.test(sql))
        expect({ panel: q.title, filter: sql.includes("$__timeFilter(bucket_start)") }).toEqual({ panel: q.title, filter: true });
    }
  });

  it("the project variable lists the synced projects", async () => {
    const variable = dashboards[0]!.templating.list.find((v) => v.name === "project")!;
    const rows = await reader.unsafe<{ __value: string; __text: string }[]>(expandGrafanaSql(variable.query, ctx));
    expect(rows.map((r) => Number(r.__value)).sort()).toEqual([...h.pcodes].sort());
    expect(rows.every((r) => r.__text.includes(String(r.__value)))).toBe(true);
  });

  it("every panel's SQL, expanded for a 2-day range, runs and returns rows (all projects, and one)", async () => {
    const one = { ...ctx, variables: { ...ctx.variables, project: { values: [String(h.pcodes[1])], multi: true } } };
    for (const q of queries) {
      const all = expandGrafanaSql(q.t.rawSql, { ...ctx, interval: q.interval });
      const rows = await reader.unsafe<Record<string, unknown>[]>(all).catch((e: Error) => `${e.message}\n${all}`);
      // A value, not just a row: an aggregate over nothing is one row of nulls.
      const valued = typeof rows === "string" ? rows : rows.some((r) => Object.entries(r).some(([k, v]) => k !== "time" && v !== null));
      expect({ panel: `${q.dashboard}: ${q.title}`, rows: valued }).toEqual({
        panel: `${q.dashboard}: ${q.title}`,
        rows: true,
      });
      const single = await reader.unsafe(expandGrafanaSql(q.t.rawSql, { ...one, interval: q.interval })).then(
        () => "ok",
        (e: Error) => e.message,
      );
      expect({ panel: q.title, single }).toEqual({ panel: q.title, single: "ok" });
    }
  });
});

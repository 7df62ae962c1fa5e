// Conformance: every JSON sample of the docs (test/fixtures/api-samples and its oldver/) is parsed by the
// schema of its operation. A sample without an operation fails the suite.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { eventRecord } from "../../src/catalogue/events.ts";
import { OPERATIONS, type OperationDef, operation } from "../../src/catalogue/index.ts";
import { parseJson } from "../../src/schemas/json.ts";
import { fixturePath } from "../support/fixtures.ts";
import { parsedOf } from "../support/pages.ts";
import { STREAM_COLUMNS } from "../support/stream-columns.ts";

const samplesDir = fixturePath("api-samples");

/** METHOD__path_with_underscores, the file name convention of the samples. */
function sampleKey(op: OperationDef): string {
  return `${op.method}__${op.path.replace(/^\//, "").replaceAll("/", "_")}`;
}

// Where the docs file a sample under a path that differs from the catalogue's.
const ALIASES: Record<string, string> = {
  // The spec's path is /open/api/v2/json/groups; the docs' example sits under /open/api/json/groups.
  GET__open_api_json_groups: "account.groups",
};
// Metric series samples use the literal {metric_type}; thread_count stands for the seven types.
for (const op of OPERATIONS.filter((o) => o.id.startsWith("series.thread_count"))) {
  ALIASES[sampleKey(op).replace("thread_count", "{metric_type}")] = op.id;
}

const byKey = new Map<string, string>(Object.entries(ALIASES));
for (const op of OPERATIONS) {
  if (byKey.has(sampleKey(op))) throw new Error(`two operations share the sample name ${sampleKey(op)}`);
  byKey.set(sampleKey(op), op.id);
}

interface Sample {
  file: string;
  key: string;
  variant: string | null;
}

function listSamples(dir: string, prefix: string): Sample[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => {
      const stem = f.slice(0, -".json".length);
      const dot = stem.indexOf(".");
      return { file: prefix + f, key: dot < 0 ? stem : stem.slice(0, dot), variant: dot < 0 ? null : stem.slice(dot + 1) };
    });
}

const samples = [...listSamples(samplesDir, ""), ...listSamples(path.join(samplesDir, "oldver"), "oldver/")];
const read = (file: string) => readFileSync(path.join(samplesDir, file), "utf8");

type Raw = Record<string, unknown> & { [k: string]: unknown };
const len = (v: unknown) => (Array.isArray(v) ? v.length : Number.NaN);
const sum = (list: unknown, f: (item: Raw) => number) => (list as Raw[]).reduce((n, item) => n + f(item), 0);

// Expected record counts computed from the RAW sample, independently of the schemas, where records
// are exploded or hoisted; every other operation: the length of the array at `records.at`.
const EXPECTED: Record<string, (raw: Raw) => number> = {
  "project.event_settings": (raw) => sum(raw, (p) => sum(p.events, (g) => Object.values(g).reduce<number>((n, e) => n + len(e), 0))),
  "extra.server.sm": (raw) => len((raw.values as Raw).servers),
  "extra.server.infra_cpu": (raw) => Object.keys(raw.values as Raw).length,
  "extra.server.infra_disk_iops": (raw) => Object.keys(raw.values as Raw).length,
  "extra.server.infra_net_traffic": (raw) => Object.keys(raw.values as Raw).length,
  "extra.server.infra_proc": (raw) => Object.values(raw.values as Raw).reduce<number>((n, list) => n + len(list), 0),
  "extra.server.sm_stat": (raw) => sum(raw.servers, (s) => len(s.timeData)),
  "extra.db.database_params": (raw) => len(raw.baseTime) + len(raw.comparisonTime) + len(raw.unmatchedKeys),
};

function expectedCount(op: OperationDef, raw: unknown): number {
  const special = EXPECTED[op.id];
  if (special) return special(raw as Raw);
  if (op.id.startsWith("series.") && op.records?.at === "objects") return sum((raw as Raw).objects, (o) => len(o.series));
  if (!op.records) return 1;
  return len(op.records.at === null ? raw : (raw as Raw)[op.records.at]);
}

/** The event-history docs sample: its first record carries YAML slips ("0,", "44,"). */
const EVENT_HISTORY = "GET__open_api_json_event_history.json";

describe("every docs sample maps to an operation", () => {
  it.each(samples.map((s) => [s.file, s] as const))("%s has an operation", (_file, s) => {
    expect(byKey.get(s.key), `no catalogue operation for sample ${s.file} (key ${s.key})`).toBeDefined();
  });

  it("found the samples directory and both levels", () => {
    expect(samples.length).toBeGreaterThan(60);
    expect(samples.some((s) => s.file.startsWith("oldver/"))).toBe(true);
  });
});

describe("request samples match the operation's request schema", () => {
  const requests = samples.filter((s) => s.variant === "request");
  it.each(requests.map((s) => [s.file, s] as const))("%s", (_file, s) => {
    const op = operation(byKey.get(s.key)!);
    expect(op.method).toBe("POST");
    expect(op.requestSchema, `${op.id} has no requestSchema`).toBeDefined();
    const result = op.requestSchema!.safeParse(parseJson(read(s.file)));
    expect(result.error?.issues ?? []).toEqual([]);
  });
});

describe("response samples parse without quarantine", () => {
  const responses = samples.filter((s) => s.variant !== "request" && !s.file.endsWith(EVENT_HISTORY));
  it.each(responses.map((s) => [s.file, s] as const))("%s", async (_file, s) => {
    const op = operation(byKey.get(s.key)!);
    const text = read(s.file);
    const parsed = await parsedOf(op, text);
    expect(parsed.quarantined).toEqual([]);
    const raw = op.format === "text" ? text : parseJson(text);
    expect(parsed.records).toHaveLength(expectedCount(op, raw));
    // Every row of a stream has exactly the columns the warehouse is built from.
    const columns = op.stream ? STREAM_COLUMNS[op.stream.table] : undefined;
    if (op.stream) expect(columns, `no STREAM_COLUMNS for ${op.stream.table}`).toBeDefined();
    for (const record of parsed.records) if (columns) expect(Object.keys(record as object).sort()).toEqual([...columns].sort());
  });
});

describe("documented quirks survive parsing", () => {
  const parse = (id: string, file: string) => {
    const op = operation(id);
    const text = read(file);
    return parsedOf(op, text);
  };
  type Row = Record<string, unknown>;

  it(`${EVENT_HISTORY}: the first record (YAML slips) is quarantined naming the bad fields, the second parses`, async () => {
    const parsed = await parse("project.event_history", EVENT_HISTORY);
    expect(parsed.quarantined.map((q) => q.index)).toEqual([0]);
    const reason = parsed.quarantined[0]!.reason;
    for (const field of ["okind", "ackCount", "eventTime", "disabled", "id"]) expect(reason).toContain(`${field}:`);
    expect(reason).toContain('"44,"');
    expect(parsed.records).toHaveLength(1);
    const event = parsed.records[0] as Row;
    expect(event.id).toBe(42);
    expect(event.pcode).toBe(7);
    expect(event.level).toBe("warning");
    expect(event.status).toBe("on");
    expect(event.metric_value).toBe(19.947985);
    expect(event.event_time).toEqual(new Date(1733288325022));
    expect(event.extra).toEqual({ process: 0, triggerId: 0 });
  });

  it('pcode "7" (string) and 7 (number) both become 7', async () => {
    const [first] = parseJson(read(EVENT_HISTORY)) as Row[];
    // Undo the docs' YAML slips only: what is left must parse, with pcode "7" coerced.
    const fixed = Object.fromEntries(Object.entries(first!).map(([k, v]) => [k, typeof v === "string" ? v.replace(/,$/, "") : v]));
    expect(first!.pcode).toBe("7");
    const parsed = eventRecord.parse(fixed) as Row;
    expect(parsed.pcode).toBe(7);
    expect(parsed.id).toBe(44);
    expect(parsed.disabled).toBe(false);
    expect(parsed.level).toBe("critical");
    expect(parsed.extra).toEqual({ process: 0, triggerId: 0 });
  });

  it("snapSeq beyond 2^53 is exact and oids-in-a-string is a list", async () => {
    const [record] = (await parse("range.exception", "GET__open_api_json_exception_{stime}_{etime}.json")).records as Row[];
    expect(record!.snap_seq).toBe(6068699991557528332n);
    expect(record!.oids).toEqual([-1459620666]);
    expect(record!.class).toBe("java.sql.SQLException(0)");
    expect(record!.time).toEqual(new Date("2018-08-29T15:45:00Z"));
  });

  it("sm totalSpace (~Long.MAX) survives exactly", async () => {
    const parsed = await parse("extra.server.sm", "GET__open_json_sm.json");
    const envelope = parsed.envelope as { values: { max: { disk: { totalSpace: bigint; usedSpace: bigint } } } };
    expect(envelope.values.max.disk.totalSpace).toBe(9223372000000000000n);
    expect(envelope.values.max.disk.usedSpace).toBe(2464956810000n);
  });

  it('capitalised enums are lower-cased ("Subscribe" -> "subscribe")', async () => {
    const [groupProject] = (await parse("account.group_projects", "GET__open_api_json_group_{groupKey}_projects.json")).records as Row[];
    expect(groupProject!.status).toBe("subscribe");
    const [detail] = (await parse("project.detail", "GET__open_api_json_project.apm.json")).records as Row[];
    expect(detail!.status).toBe("subscribe");
  });

  it("createTime strings become the right UTC instants", async () => {
    const [project] = (await parse("account.projects", "GET__open_api_json_projects.json")).records as Row[];
    expect(project!.create_time).toEqual(new Date(Date.UTC(2018, 9, 19, 7, 17, 3, 774)));
    expect(project).not.toHaveProperty("api_token");
    expect(JSON.stringify(project)).not.toContain("5****");
    const [detail] = (await parse("project.detail", "GET__open_api_json_project.apm.json")).records as Row[];
    expect(detail!.create_time).toEqual(new Date(Date.UTC(2018, 8, 18, 8, 34, 27)));
    expect(detail!.last_updated_time).toEqual(new Date(Date.UTC(2018, 8, 18, 8, 34, 34)));
  });

  it("httpc PascalCase keys become snake_case", async () => {
    const file = "GET__open_api_json_httpc_{stime}_{etime}_filter_host_{host}_port_{port}.json";
    const [row] = (await parse("range.httpc.filtered", file)).records as Row[];
    expect(Object.keys(row!).sort()).toEqual(
      ["url_hash", "host_hash", "url", "host", "port", "total", "error", "actived", "sum", "avg", "min", "max", "stdev"]
        .concat(["service_hash", "service", "extra"])
        .sort(),
    );
    expect(row!.service_hash).toBe(-1003301916);
    expect(row!.stdev).toBe(159.01);
    expect(row!.actived).toBeNull();
  });

  it("text scalars: bare and quoted numbers", async () => {
    expect((await parse("scalar.tps", "GET__open_api_tps.json")).records).toEqual([{ metric: "tps", value: 92.03, extra: {} }]);
    expect((await parse("extra.raw_tag.app_host_resource.cpu", "GET__open_api_raw_tag_app_host_resource_cpu.json")).records).toEqual([
      { metric: "app_host_resource.cpu", value: 11.5, extra: {} },
    ]);
  });

  it("spot values arrive as strings and become numbers; dotted agent.version becomes agent_version", async () => {
    const [spot] = (await parse("project.spot", "GET__open_api_json_spot.json")).records as Row[];
    expect(spot).toMatchObject({ pcode: 8, dbconn_total: 600, tps: 93.07, apdex: 0.9871 });
    const [agent] = (await parse("project.agents_window", "POST__open_api_v2_agent_list.json")).records as Row[];
    expect(agent).toMatchObject({ agent_version: "", cpu_cores: 0, subtype: "0", okind_name: "" });
  });
});

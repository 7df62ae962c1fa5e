// The Prometheus files in deploy/: every alert expression names only metrics apm-sync exposes
// (taken from a real registry, not from a list), every rule says what it is about, and the
// Prometheus config loads the rules and scrapes the worker job the rules select. The Grafana
// panels over Prometheus: their PromQL names exposed metrics and groups by labels those have.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createAppMetrics } from "../../src/metrics/metrics.ts";
import { REPO_ROOT } from "../support/child-sync.ts";
import { allPanels } from "../support/grafana-sql.ts";
import { exposedNames, metricNames } from "../support/promql-names.ts";

interface Rule {
  alert?: string;
  expr?: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const read = (path: string) => parse(readFileSync(join(REPO_ROOT, path), "utf8"));
const rules: Rule[] = (read("deploy/prometheus/apm-sync-rules.yml").groups as { rules: Rule[] }[]).flatMap((g) => g.rules);

async function exposed(): Promise<Set<string>> {
  const { registry } = createAppMetrics({ command: "worker", processMetrics: true });
  const metrics = await registry.getMetricsAsJSON();
  return exposedNames(metrics.map((m) => ({ name: m.name, type: String(m.type) })));
}

describe("metric names in PromQL", () => {
  it("finds metric names, not functions, labels, keywords, strings or durations", () => {
    expect(
      metricNames(
        'time() - max by (stream, pcode) (foo_seconds{job="a", x=~"b.*"}) > 2 * 3600 or sum without (le) (rate(bar_total[5m] offset 1h)) / on(instance) group_left(host) baz unless absent(qux{a="{b}"}) and 1e3 < bool nan',
      ),
    ).toEqual(["bar_total", "baz", "foo_seconds", "qux"]);
  });
});

describe("deploy/prometheus", () => {
  it("every rule is an alert with an expression, a duration, a severity and a summary", () => {
    expect(rules.length).toBeGreaterThanOrEqual(4);
    for (const r of rules) {
      expect({ alert: r.alert, ok: Boolean(r.expr && r.for && r.labels?.severity && r.annotations?.summary) }).toEqual({
        alert: r.alert,
        ok: true,
      });
    }
    const alerts = rules.map((r) => r.alert);
    for (const needed of ["ApmSyncStreamStale", "ApmSyncWindowsFailing", "ApmSyncWorkerNotReporting", "ApmSyncRateLimited"])
      expect(alerts).toContain(needed);
  });

  it("every expression names only metrics apm-sync exposes", async () => {
    const names = await exposed();
    expect(names.has("apm_sync_stream_lag_seconds")).toBe(true);
    for (const r of rules) {
      const unknown = metricNames(r.expr!).filter((n) => !names.has(n));
      expect({ alert: r.alert, unknown }).toEqual({ alert: r.alert, unknown: [] });
    }
  });

  it("the Prometheus config loads the rule file and scrapes the worker job the rules select", () => {
    const config = read("deploy/prometheus/prometheus.yml") as {
      rule_files: string[];
      scrape_configs: { job_name: string; honor_labels?: boolean }[];
    };
    expect(config.rule_files.map((f) => f.split("/").pop())).toEqual(["apm-sync-rules.yml"]);
    const jobs = config.scrape_configs.map((s) => s.job_name);
    const selected = new Set(rules.flatMap((r) => [...r.expr!.matchAll(/job="([^"]+)"/g)].map((m) => m[1]!)));
    // Pushed series keep their own job label (honor_labels): "apm-sync", the push's job name.
    expect(config.scrape_configs.find((s) => s.job_name === "pushgateway")?.honor_labels).toBe(true);
    for (const job of selected) expect(job === "apm-sync" || jobs.includes(job), job).toBe(true);
  });
});

/** PromQL targets of the provisioned dashboards, with their panel. */
function dashboardExprs(): { panel: string; expr: string; uid: string }[] {
  const dir = join(REPO_ROOT, "deploy", "grafana", "dashboards");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .flatMap((f) => allPanels(JSON.parse(readFileSync(join(dir, f), "utf8")) as { panels: unknown[] }))
    .flatMap((p) =>
      ((p.targets ?? []) as { expr?: string; datasource?: { uid?: string } }[])
        .filter((t) => t.expr !== undefined)
        .map((t) => ({ panel: String(p.title), expr: t.expr!, uid: t.datasource?.uid ?? "" })),
    );
}

describe("Grafana panels over Prometheus", () => {
  const exprs = dashboardExprs();
  // Labels Prometheus adds to every scraped or pushed series.
  const TARGET_LABELS = ["job", "instance"];

  it("there are some, on the provisioned Prometheus data source, watching the stale-stream alert's expression", () => {
    expect(exprs.length).toBeGreaterThanOrEqual(2);
    for (const e of exprs) expect({ panel: e.panel, uid: e.uid }).toEqual({ panel: e.panel, uid: "apm-prometheus" });
    const stale = rules
      .find((r) => r.alert === "ApmSyncStreamStale")!
      .expr!.split(">")[0]!
      .trim();
    // The panel draws what the alert compares with its threshold (filtered by the project variable).
    expect(exprs.some((e) => e.expr.replace(/\{pcode=~"\$project"\}/, "") === stale)).toBe(true);
  });

  it("every expression names only exposed metrics and groups by labels they carry", async () => {
    const { registry } = createAppMetrics({ command: "worker", processMetrics: true });
    const names = exposedNames((await registry.getMetricsAsJSON()).map((m) => ({ name: m.name, type: String(m.type) })));
    for (const e of exprs) {
      const used = metricNames(e.expr);
      expect({ panel: e.panel, unknown: used.filter((n) => !names.has(n)) }).toEqual({ panel: e.panel, unknown: [] });
      const labels = new Set([...TARGET_LABELS, ...used.flatMap((n) => registryLabels(registry, n))]);
      const grouped = [...e.expr.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) => m[1]!.split(",").map((l) => l.trim()));
      const filtered = [...e.expr.matchAll(/(\w+)\s*=~?\s*"/g)].map((m) => m[1]!);
      const missing = [...grouped, ...filtered].filter((l) => !labels.has(l));
      expect({ panel: e.panel, missing }).toEqual({ panel: e.panel, missing: [] });
    }
  });
});

/** Label names of a registered metric (histogram series by their base name). */
function registryLabels(registry: ReturnType<typeof createAppMetrics>["registry"], name: string): string[] {
  const metric = registry.getSingleMetric(name.replace(/_(bucket|sum|count)$/, "")) ?? registry.getSingleMetric(name);
  return [...((metric as unknown as { labelNames?: string[] } | undefined)?.labelNames ?? [])];
}

// The Prometheus files in deploy/: every alert expression names only metrics apm-sync exposes
// (taken from a real registry, not from a list), every rule says what it is about, and the
// Prometheus config loads the rules and scrapes the worker job the rules select.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createAppMetrics } from "../../src/metrics/metrics.ts";
import { REPO_ROOT } from "../support/child-sync.ts";
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

// The Grafana expansion the panel test relies on, against Grafana's documented output.
import { describe, expect, it } from "vitest";
import { expandGrafanaSql } from "../support/grafana-sql.ts";

const ctx = {
  from: Date.UTC(2026, 1, 16),
  to: Date.UTC(2026, 1, 18, 0, 0, 0, 500),
  interval: "5m",
  variables: { schema: { values: ["apm"], multi: false }, project: { values: ["1001", "3000000001"], multi: true } },
};

describe("Grafana SQL expansion", () => {
  it("expands variables, then the Postgres macros", () => {
    expect(
      expandGrafanaSql(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's ${variable} syntax, not a JS template
        "SELECT $__timeGroupAlias(bucket_start, $__interval), x FROM ${schema}.v WHERE $__timeFilter(bucket_start) AND pcode IN ($project) AND t < $__timeTo() AND t >= $__timeFrom()",
        ctx,
      ),
    ).toBe(
      `SELECT floor(extract(epoch from bucket_start)/300)*300 AS "time", x FROM apm.v WHERE bucket_start BETWEEN '2026-02-16T00:00:00Z' AND '2026-02-18T00:00:00.5Z' AND pcode IN ('1001','3000000001') AND t < '2026-02-18T00:00:00.5Z' AND t >= '2026-02-16T00:00:00Z'`,
    );
  });

  it("takes $__timeGroup followed by a comma for the aliased form, and refuses unknown macros", () => {
    expect(expandGrafanaSql("SELECT $__timeGroup(ts, '1h'), v", ctx)).toBe(`SELECT floor(extract(epoch from ts)/3600)*3600 AS "time", v`);
    expect(expandGrafanaSql("GROUP BY $__timeGroup(ts, 1d)", ctx)).toBe("GROUP BY floor(extract(epoch from ts)/86400)*86400");
    expect(() => expandGrafanaSql("SELECT $__nope(x)", ctx)).toThrow('unknown macro "__nope"');
  });
});

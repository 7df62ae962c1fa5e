// Metric series, visitors and the cross-project call statistics. Spec "Metric series results",
// "Visitor results", "Cross-project call statistics (filtered)".
import { type DocGroup, epoch, field, HASH32, type TableDoc } from "./types.ts";

const CONSTANT = "the catalogue entry's constant";

const tables: Record<string, TableDoc> = {
  metric_points: {
    description:
      "Points of the metric series: per agent (series_form agent) and averaged over all agents (series_form avg), " +
      "one row per metric, form, agent and time. Listed-agent forms land here too when configured.",
    columns: {
      metric: {
        text: "The metric type (path segment metric_type): thread_count, thread_daemon, thread_peak_count, threadpool_active, threadpool_queue, apdex or tx_caller.",
        conversion: `${CONSTANT} (the response's type is not trusted: the docs' example says "metric_type")`,
      },
      series_form: {
        text: "agent: a per-agent series (objects[].series); avg: the series averaged over the agents (objectMerge avg, no agent).",
        conversion: CONSTANT,
      },
      oid: field("oid", "Agent identifier; 0 for averaged series (a sentinel: their points belong to no agent).", { conversion: HASH32 }),
      ts: epoch("series[i][0]", "Time of the point: the first element of a [timestamp, number] pair."),
      value: field(
        "series[i][1]",
        "Value of the metric at ts (the envelope says timeMerge sum; how points are merged is not documented).",
        {
          unit:
            "per metric: a number of threads for thread_* and threadpool_* (threadpool_* as in spot values; thread_* by name), " +
            "the Apdex score for apdex; not documented for tx_caller",
        },
      ),
      oname: field("oname", "Agent name; null for averaged series."),
      interval: field(
        "interval",
        "Seconds between data points as the response reports them. Not filled yet: always null (the writer does not carry the envelope's interval to the points).",
        {
          unit: "seconds",
        },
      ),
    },
  },
  visitors: {
    description: "Visitor counts per 5 minutes, hour and day (granularity 5m, h, d).",
    columns: {
      granularity: { text: "5m, h or d: the operation the point came from (visitor_5m, visitor_h, visitor_d).", conversion: CONSTANT },
      ts: epoch(
        "data[i][0]",
        "Time of the point: the first element of a [timestamp, count] pair (alignment to the bucket is not documented).",
      ),
      count: field(
        "data[i][1]",
        "Visitors: users who produced a transaction within the last 5 minutes (the spec's definition); how hourly and daily points merge them is not documented.",
        {
          unit: "users",
        },
      ),
    },
  },
  visitors_monthly: {
    description: "Unique users per month (visitor_m); one request re-reads a year, since a month's count changes until it ends.",
    columns: {
      month_start: epoch("data[].stime", "Start of the month."),
      month_end: epoch("data[].etime", "End of the month."),
      sdate: field("data[].sdate", "Start of the month as the response writes it (string form of stime).", {
        conversion: 'Java date text ("Sat Sep 01 00:00:00 GMT 2018") parsed, stored as ISO 8601 UTC text (2018-09-01T00:00:00.000Z)',
      }),
      edate: field("data[].edate", "End of the month as the response writes it (string form of etime).", {
        conversion: "Java date text parsed, stored as ISO 8601 UTC text",
      }),
      mau: field("data[].mau", "Unique users in the month.", { unit: "users" }),
    },
  },
  tx_calls: {
    description:
      "Cross-project call statistics filtered by filterkey/filterval (tx_caller: transaction calls between projects; " +
      "tx_domain: transaction domain calls). The response shape is not documented: each window's answer is kept whole.",
    columns: {
      metric_type: { text: "tx_caller or tx_domain (path segment metric_type).", conversion: CONSTANT },
      filter_key: {
        text: "The filter the window was asked with (path filterkey): caller_pcode, caller_spec (version), caller_url, spec (version) or url.",
        conversion: "the request's input",
      },
      filter_value: {
        text: "The value the filter matched (path filterval), as configured.",
        conversion: "the request's input before the base64 encoding caller_url and url get",
      },
      payload: field("(body)", "The whole response body of the window.", { conversion: "kept as JSON (shape not documented)" }),
    },
  },
};

export const seriesDocs: DocGroup = { title: "Metric series, visitors and call statistics", tables };

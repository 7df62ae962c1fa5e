-- Reporting views (DESIGN.md section 3). Unqualified names: they are created in the schema the
-- connection's search_path names, like the tables.
-- Rollups bucket a window by its start (UTC); with the default 1-hour grain (or finer) every
-- window falls inside one hour. Averages are weighted: sum(time_sum) / sum(count), never an
-- average of averages.
CREATE VIEW "stat_transaction_hourly" AS
SELECT
  "pcode",
  date_trunc('hour', "window_start", 'UTC') AS "bucket_start",
  "service_hash",
  max("service") AS "service",
  count(*) AS "windows",
  sum("count") AS "count",
  sum("error") AS "error",
  sum("time_sum") AS "time_sum",
  sum("time_sum") / nullif(sum("count"), 0) AS "time_avg",
  min("time_min") AS "time_min",
  max("time_max") AS "time_max",
  sum("error")::double precision / nullif(sum("count"), 0) AS "error_rate",
  sum("sql_count") AS "sql_count",
  sum("httpc_count") AS "httpc_count",
  sum("apdex" * "count") / nullif(sum("count") FILTER (WHERE "apdex" IS NOT NULL), 0) AS "apdex"
FROM "stat_transaction"
GROUP BY "pcode", 2, "service_hash";
--> statement-breakpoint
CREATE VIEW "stat_transaction_daily" AS
SELECT
  "pcode",
  date_trunc('day', "window_start", 'UTC') AS "bucket_start",
  "service_hash",
  max("service") AS "service",
  count(*) AS "windows",
  sum("count") AS "count",
  sum("error") AS "error",
  sum("time_sum") AS "time_sum",
  sum("time_sum") / nullif(sum("count"), 0) AS "time_avg",
  min("time_min") AS "time_min",
  max("time_max") AS "time_max",
  sum("error")::double precision / nullif(sum("count"), 0) AS "error_rate",
  sum("sql_count") AS "sql_count",
  sum("httpc_count") AS "httpc_count",
  sum("apdex" * "count") / nullif(sum("count") FILTER (WHERE "apdex" IS NOT NULL), 0) AS "apdex"
FROM "stat_transaction"
GROUP BY "pcode", 2, "service_hash";
--> statement-breakpoint
CREATE VIEW "stat_sql_hourly" AS
SELECT
  "pcode",
  date_trunc('hour', "window_start", 'UTC') AS "bucket_start",
  "sql_hash",
  "dbc_hash",
  "service_hash",
  max("sql") AS "sql",
  max("db") AS "db",
  max("service") AS "service",
  count(*) AS "windows",
  sum("count") AS "count",
  sum("error") AS "error",
  sum("time_sum") AS "time_sum",
  sum("time_sum") / nullif(sum("count"), 0) AS "time_avg",
  min("time_min") AS "time_min",
  max("time_max") AS "time_max",
  sum("error")::double precision / nullif(sum("count"), 0) AS "error_rate",
  sum("fetch_count") AS "fetch_count",
  sum("fetch_time") AS "fetch_time"
FROM "stat_sql"
GROUP BY "pcode", 2, "sql_hash", "dbc_hash", "service_hash";
--> statement-breakpoint
CREATE VIEW "stat_sql_daily" AS
SELECT
  "pcode",
  date_trunc('day', "window_start", 'UTC') AS "bucket_start",
  "sql_hash",
  "dbc_hash",
  "service_hash",
  max("sql") AS "sql",
  max("db") AS "db",
  max("service") AS "service",
  count(*) AS "windows",
  sum("count") AS "count",
  sum("error") AS "error",
  sum("time_sum") AS "time_sum",
  sum("time_sum") / nullif(sum("count"), 0) AS "time_avg",
  min("time_min") AS "time_min",
  max("time_max") AS "time_max",
  sum("error")::double precision / nullif(sum("count"), 0) AS "error_rate",
  sum("fetch_count") AS "fetch_count",
  sum("fetch_time") AS "fetch_time"
FROM "stat_sql"
GROUP BY "pcode", 2, "sql_hash", "dbc_hash", "service_hash";
--> statement-breakpoint
CREATE VIEW "stat_httpc_hourly" AS
SELECT
  "pcode",
  date_trunc('hour', "window_start", 'UTC') AS "bucket_start",
  "url_hash",
  "host_hash",
  "port",
  "service_hash",
  max("url") AS "url",
  max("host") AS "host",
  max("service") AS "service",
  count(*) AS "windows",
  sum("count") AS "count",
  sum("error") AS "error",
  sum("time_sum") AS "time_sum",
  sum("time_sum") / nullif(sum("count"), 0) AS "time_avg",
  min("time_min") AS "time_min",
  max("time_max") AS "time_max",
  sum("error")::double precision / nullif(sum("count"), 0) AS "error_rate"
FROM "stat_httpc"
GROUP BY "pcode", 2, "url_hash", "host_hash", "port", "service_hash";
--> statement-breakpoint
CREATE VIEW "stat_httpc_daily" AS
SELECT
  "pcode",
  date_trunc('day', "window_start", 'UTC') AS "bucket_start",
  "url_hash",
  "host_hash",
  "port",
  "service_hash",
  max("url") AS "url",
  max("host") AS "host",
  max("service") AS "service",
  count(*) AS "windows",
  sum("count") AS "count",
  sum("error") AS "error",
  sum("time_sum") AS "time_sum",
  sum("time_sum") / nullif(sum("count"), 0) AS "time_avg",
  min("time_min") AS "time_min",
  max("time_max") AS "time_max",
  sum("error")::double precision / nullif(sum("count"), 0) AS "error_rate"
FROM "stat_httpc"
GROUP BY "pcode", 2, "url_hash", "host_hash", "port", "service_hash";
--> statement-breakpoint
CREATE VIEW "stat_error_hourly" AS
SELECT
  "pcode",
  date_trunc('hour', "window_start", 'UTC') AS "bucket_start",
  "class_hash",
  "msg_hash",
  "service_hash",
  max("class") AS "class",
  max("msg") AS "msg",
  max("service") AS "service",
  count(*) AS "windows",
  sum("count") AS "count"
FROM "stat_error"
GROUP BY "pcode", 2, "class_hash", "msg_hash", "service_hash";
--> statement-breakpoint
CREATE VIEW "stat_error_daily" AS
SELECT
  "pcode",
  date_trunc('day', "window_start", 'UTC') AS "bucket_start",
  "class_hash",
  "msg_hash",
  "service_hash",
  max("class") AS "class",
  max("msg") AS "msg",
  max("service") AS "service",
  count(*) AS "windows",
  sum("count") AS "count"
FROM "stat_error"
GROUP BY "pcode", 2, "class_hash", "msg_hash", "service_hash";
--> statement-breakpoint
CREATE VIEW "stat_remote_hourly" AS
SELECT
  "pcode",
  date_trunc('hour', "window_start", 'UTC') AS "bucket_start",
  "ip",
  max("country") AS "country",
  max("city") AS "city",
  count(*) AS "windows",
  sum("count") AS "count"
FROM "stat_remote"
GROUP BY "pcode", 2, "ip";
--> statement-breakpoint
CREATE VIEW "stat_remote_daily" AS
SELECT
  "pcode",
  date_trunc('day', "window_start", 'UTC') AS "bucket_start",
  "ip",
  max("country") AS "country",
  max("city") AS "city",
  count(*) AS "windows",
  sum("count") AS "count"
FROM "stat_remote"
GROUP BY "pcode", 2, "ip";
--> statement-breakpoint
-- Per project x stream: how far the data reaches and what went wrong. A stream with several
-- partitions is as fresh as its least advanced partition.
CREATE VIEW "stream_freshness" AS
WITH "w" AS (
  SELECT "stream", "pcode", min("watermark") AS "watermark", max("updated_at") AS "watermark_updated_at"
  FROM "watermarks" GROUP BY "stream", "pcode"
), "l" AS (
  SELECT "stream", "pcode",
    max("window_end") FILTER (WHERE "status" IN ('done', 'truncated')) AS "last_window_end",
    max("finished_at") AS "last_finished_at",
    count(*) FILTER (WHERE "status" = 'done') AS "done_windows",
    count(*) FILTER (WHERE "status" = 'failed') AS "failed_windows",
    count(*) FILTER (WHERE "status" = 'truncated') AS "truncated_windows",
    coalesce(sum("quarantined"), 0) AS "quarantined_records"
  FROM "sync_windows" GROUP BY "stream", "pcode"
)
SELECT
  "stream",
  "pcode",
  "w"."watermark",
  now() - "w"."watermark" AS "lag",
  "w"."watermark_updated_at",
  "l"."last_window_end",
  "l"."last_finished_at",
  coalesce("l"."done_windows", 0) AS "done_windows",
  coalesce("l"."failed_windows", 0) AS "failed_windows",
  coalesce("l"."truncated_windows", 0) AS "truncated_windows",
  coalesce("l"."quarantined_records", 0) AS "quarantined_records"
FROM "w" FULL JOIN "l" USING ("stream", "pcode");
--> statement-breakpoint
-- What the ledger does not cover: failed windows, and holes between recorded windows (time no
-- window of the stream covers, before its latest recorded window).
CREATE VIEW "ledger_gaps" AS
WITH "ordered" AS (
  SELECT "stream", "pcode", "partition", "window_start",
    max("window_end") OVER (
      PARTITION BY "stream", "pcode", "partition" ORDER BY "window_start", "window_end"
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS "covered_until"
  FROM "sync_windows"
)
SELECT "stream", "pcode", "partition", "covered_until" AS "gap_start", "window_start" AS "gap_end", 'hole' AS "kind", NULL::text AS "error"
FROM "ordered"
WHERE "covered_until" < "window_start"
UNION ALL
SELECT "stream", "pcode", "partition", "window_start", "window_end", 'failed', "error"
FROM "sync_windows"
WHERE "status" = 'failed';

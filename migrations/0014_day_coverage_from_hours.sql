-- A day's coverage is the sum of its hours' (rollup_coverage keeps a day's row only once the day is
-- closed into its daily table): the windows of one day in flight at once no longer write a row in
-- common, so most of a backfill's windows write nothing of their days and take no turn
-- (src/db/refreshRollups.ts). The daily views read a closed day's coverage row, and an open day's
-- from its hours; the rows the open days had are removed (they are no longer kept up to date).
DELETE FROM "rollup_coverage" AS c USING "rollup_open_days" AS o WHERE c."stream" = 'stat.transaction' AND c."grain" = 'daily'
  AND o."source" = 'stat_transaction' AND o."pcode" = c."pcode" AND o."bucket_start" = c."bucket_start";
--> statement-breakpoint
DELETE FROM "rollup_coverage" AS c USING "rollup_open_days" AS o WHERE c."stream" = 'stat.sql' AND c."grain" = 'daily'
  AND o."source" = 'stat_sql' AND o."pcode" = c."pcode" AND o."bucket_start" = c."bucket_start";
--> statement-breakpoint
DELETE FROM "rollup_coverage" AS c USING "rollup_open_days" AS o WHERE c."stream" = 'stat.httpc' AND c."grain" = 'daily'
  AND o."source" = 'stat_httpc' AND o."pcode" = c."pcode" AND o."bucket_start" = c."bucket_start";
--> statement-breakpoint
DELETE FROM "rollup_coverage" AS c USING "rollup_open_days" AS o WHERE c."stream" = 'stat.error' AND c."grain" = 'daily'
  AND o."source" = 'stat_error' AND o."pcode" = c."pcode" AND o."bucket_start" = c."bucket_start";
--> statement-breakpoint
DELETE FROM "rollup_coverage" AS c USING "rollup_open_days" AS o WHERE c."stream" = 'stat.remote' AND c."grain" = 'daily'
  AND o."source" = 'stat_remote' AND o."pcode" = c."pcode" AND o."bucket_start" = c."bucket_start";
--> statement-breakpoint
CREATE OR REPLACE VIEW "stat_transaction_daily" AS
SELECT
  r."pcode",
  r."bucket_start",
  "service_hash",
  "service",
  "windows",
  "count",
  "error",
  "time_sum",
  "time_sum" / nullif("count", 0) AS "time_avg",
  "time_min",
  "time_max",
  "error"::double precision / nullif("count", 0) AS "error_rate",
  "sql_count",
  "httpc_count",
  "apdex_weighted" / nullif("apdex_count", 0) AS "apdex",
  coalesce(c."coverage", (SELECT coalesce(sum(hc."coverage"), 0) FROM "rollup_coverage" AS hc WHERE hc."stream" = 'stat.transaction' AND hc."grain" = 'hourly'
    AND hc."pcode" = r."pcode" AND hc."bucket_start" >= r."bucket_start" AND hc."bucket_start" < r."bucket_start" + interval '1 day') / 24) AS "coverage"
FROM (
SELECT "pcode", "bucket_start", "service_hash", "service", "windows", "count", "error", "time_sum", "time_min", "time_max", "sql_count", "httpc_count", "apdex_weighted", "apdex_count" FROM "rollup_stat_transaction_daily"
UNION ALL
SELECT h."pcode", o."day", h."service_hash", max(h."service"), count(*)::bigint, sum("count")::bigint, sum("error")::bigint, sum("time_sum"), min("time_min"), max("time_max"), sum("sql_count"), sum("httpc_count"), sum("apdex" * "count"), sum("count") FILTER (WHERE "apdex" IS NOT NULL)::bigint FROM (SELECT o."pcode", o."bucket_start" AS "day" FROM "rollup_open_days" AS o WHERE o."source" = 'stat_transaction') AS o JOIN "stat_transaction" AS h ON h."pcode" = o."pcode" AND h."window_start" >= o."day" AND h."window_start" < o."day" + interval '1 day' GROUP BY h."pcode", o."day", h."service_hash"
) AS r
LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.transaction' AND c."grain" = 'daily'
  AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
--> statement-breakpoint
CREATE OR REPLACE VIEW "stat_sql_daily" AS
SELECT
  r."pcode",
  r."bucket_start",
  "sql_hash",
  "dbc_hash",
  "service_hash",
  "sql",
  "db",
  "service",
  "windows",
  "count",
  "error",
  "time_sum",
  "time_sum" / nullif("count", 0) AS "time_avg",
  "time_min",
  "time_max",
  "error"::double precision / nullif("count", 0) AS "error_rate",
  "fetch_count",
  "fetch_time",
  coalesce(c."coverage", (SELECT coalesce(sum(hc."coverage"), 0) FROM "rollup_coverage" AS hc WHERE hc."stream" = 'stat.sql' AND hc."grain" = 'hourly'
    AND hc."pcode" = r."pcode" AND hc."bucket_start" >= r."bucket_start" AND hc."bucket_start" < r."bucket_start" + interval '1 day') / 24) AS "coverage"
FROM (
SELECT "pcode", "bucket_start", "sql_hash", "dbc_hash", "service_hash", "sql", "db", "service", "windows", "count", "error", "time_sum", "time_min", "time_max", "fetch_count", "fetch_time" FROM "rollup_stat_sql_daily"
UNION ALL
SELECT h."pcode", o."day", h."sql_hash", h."dbc_hash", h."service_hash", max(h."sql"), max(h."db"), max(h."service"), count(*)::bigint, sum("count")::bigint, sum("error")::bigint, sum("time_sum"), min("time_min"), max("time_max"), sum("fetch_count"), sum("fetch_time") FROM (SELECT o."pcode", o."bucket_start" AS "day" FROM "rollup_open_days" AS o WHERE o."source" = 'stat_sql') AS o JOIN "stat_sql" AS h ON h."pcode" = o."pcode" AND h."window_start" >= o."day" AND h."window_start" < o."day" + interval '1 day' GROUP BY h."pcode", o."day", h."sql_hash", h."dbc_hash", h."service_hash"
) AS r
LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.sql' AND c."grain" = 'daily'
  AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
--> statement-breakpoint
CREATE OR REPLACE VIEW "stat_httpc_daily" AS
SELECT
  r."pcode",
  r."bucket_start",
  "url_hash",
  "host_hash",
  "port",
  "service_hash",
  "url",
  "host",
  "service",
  "windows",
  "count",
  "error",
  "time_sum",
  "time_sum" / nullif("count", 0) AS "time_avg",
  "time_min",
  "time_max",
  "error"::double precision / nullif("count", 0) AS "error_rate",
  coalesce(c."coverage", (SELECT coalesce(sum(hc."coverage"), 0) FROM "rollup_coverage" AS hc WHERE hc."stream" = 'stat.httpc' AND hc."grain" = 'hourly'
    AND hc."pcode" = r."pcode" AND hc."bucket_start" >= r."bucket_start" AND hc."bucket_start" < r."bucket_start" + interval '1 day') / 24) AS "coverage"
FROM (
SELECT "pcode", "bucket_start", "url_hash", "host_hash", "port", "service_hash", "url", "host", "service", "windows", "count", "error", "time_sum", "time_min", "time_max" FROM "rollup_stat_httpc_daily"
UNION ALL
SELECT h."pcode", o."day", h."url_hash", h."host_hash", h."port", h."service_hash", max(h."url"), max(h."host"), max(h."service"), count(*)::bigint, sum("count")::bigint, sum("error")::bigint, sum("time_sum"), min("time_min"), max("time_max") FROM (SELECT o."pcode", o."bucket_start" AS "day" FROM "rollup_open_days" AS o WHERE o."source" = 'stat_httpc') AS o JOIN "stat_httpc" AS h ON h."pcode" = o."pcode" AND h."window_start" >= o."day" AND h."window_start" < o."day" + interval '1 day' GROUP BY h."pcode", o."day", h."url_hash", h."host_hash", h."port", h."service_hash"
) AS r
LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.httpc' AND c."grain" = 'daily'
  AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
--> statement-breakpoint
CREATE OR REPLACE VIEW "stat_error_daily" AS
SELECT
  r."pcode",
  r."bucket_start",
  "class_hash",
  "msg_hash",
  "service_hash",
  "class",
  "msg",
  "service",
  "windows",
  "count",
  coalesce(c."coverage", (SELECT coalesce(sum(hc."coverage"), 0) FROM "rollup_coverage" AS hc WHERE hc."stream" = 'stat.error' AND hc."grain" = 'hourly'
    AND hc."pcode" = r."pcode" AND hc."bucket_start" >= r."bucket_start" AND hc."bucket_start" < r."bucket_start" + interval '1 day') / 24) AS "coverage"
FROM (
SELECT "pcode", "bucket_start", "class_hash", "msg_hash", "service_hash", "class", "msg", "service", "windows", "count" FROM "rollup_stat_error_daily"
UNION ALL
SELECT h."pcode", o."day", h."class_hash", h."msg_hash", h."service_hash", max(h."class"), max(h."msg"), max(h."service"), count(*)::bigint, sum("count")::bigint FROM (SELECT o."pcode", o."bucket_start" AS "day" FROM "rollup_open_days" AS o WHERE o."source" = 'stat_error') AS o JOIN "stat_error" AS h ON h."pcode" = o."pcode" AND h."window_start" >= o."day" AND h."window_start" < o."day" + interval '1 day' GROUP BY h."pcode", o."day", h."class_hash", h."msg_hash", h."service_hash"
) AS r
LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.error' AND c."grain" = 'daily'
  AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
--> statement-breakpoint
CREATE OR REPLACE VIEW "stat_remote_daily" AS
SELECT
  r."pcode",
  r."bucket_start",
  "ip",
  "country",
  "city",
  "windows",
  "count",
  coalesce(c."coverage", (SELECT coalesce(sum(hc."coverage"), 0) FROM "rollup_coverage" AS hc WHERE hc."stream" = 'stat.remote' AND hc."grain" = 'hourly'
    AND hc."pcode" = r."pcode" AND hc."bucket_start" >= r."bucket_start" AND hc."bucket_start" < r."bucket_start" + interval '1 day') / 24) AS "coverage"
FROM (
SELECT "pcode", "bucket_start", "ip", "country", "city", "windows", "count" FROM "rollup_stat_remote_daily"
UNION ALL
SELECT h."pcode", o."day", h."ip", max(h."country"), max(h."city"), count(*)::bigint, sum("count")::bigint FROM (SELECT o."pcode", o."bucket_start" AS "day" FROM "rollup_open_days" AS o WHERE o."source" = 'stat_remote') AS o JOIN "stat_remote" AS h ON h."pcode" = o."pcode" AND h."window_start" >= o."day" AND h."window_start" < o."day" + interval '1 day' GROUP BY h."pcode", o."day", h."ip"
) AS r
LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.remote' AND c."grain" = 'daily'
  AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";

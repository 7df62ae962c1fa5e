-- The reporting views read the rollups the sync keeps (src/db/rollups.ts, db/refreshRollups.ts): the
-- same names and columns as 0001's views, counts now bigint, bucket_start a column of the rollup (a
-- filter on it prunes partitions and uses its key), and the share of the bucket the ledger covers
-- (coverage, 0..1, from rollup_coverage: 0 where the ledger covers none of it) last, by a LEFT JOIN
-- on its key (a query that does not select it does not read it; a lookup per row made Postgres
-- compile long queries first, see the README). Averages stay weighted: sum(time_sum) / sum(count), never an average of averages. The old views go (a column type
-- changes: they cannot be replaced in place): views a user made on them, and grants on them, are
-- saved first and made again over the new ones, in their order of creation, as 0005 does for the
-- tables. Then the rollups are filled from the history the warehouse holds, into partitions made
-- first for the months it spans (named as src/db/partitionName.ts names them), by the statements
-- src/db/rollupSql.ts makes (fillBuckets, fillCoverage; a test keeps them equal): hourly from the
-- raw rows, daily from the hourly rows, coverage from the ledger.
--
-- Grants of a view made again on its replacement (its owner's own are implied).
CREATE FUNCTION pg_temp.apm_regrant(target text, acl text, owner oid) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
  g record;
BEGIN
  IF acl IS NULL THEN
    RETURN;
  END IF;
  FOR g IN SELECT a.privilege_type, a.grantee, a.is_grantable FROM aclexplode(acl::aclitem[]) a WHERE a.grantee <> owner LOOP
    EXECUTE format('GRANT %s ON %s TO %s%s', g.privilege_type, target,
      CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END,
      CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
  END LOOP;
END $f$;
--> statement-breakpoint
DO $$
DECLARE
  saved record;
  old text[] := ARRAY['stat_transaction_hourly', 'stat_transaction_daily', 'stat_sql_hourly', 'stat_sql_daily', 'stat_httpc_hourly', 'stat_httpc_daily', 'stat_error_hourly', 'stat_error_daily', 'stat_remote_hourly', 'stat_remote_daily'];
  views_saved jsonb;
  grants_saved jsonb;
BEGIN
  -- Views reading the old views, directly or through another view, oldest first.
  WITH RECURSIVE dependent(oid) AS (
    SELECT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
    WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
      AND d.refobjid IN (SELECT to_regclass(quote_ident(v)) FROM unnest(old) v) AND r.ev_class <> d.refobjid
    UNION
    SELECT r.ev_class FROM dependent v JOIN pg_depend d ON d.refobjid = v.oid AND d.classid = 'pg_rewrite'::regclass
    JOIN pg_rewrite r ON r.oid = d.objid WHERE r.ev_class <> d.refobjid
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object(
      'name', format('%I.%I', n.nspname, c.relname), 'kind', c.relkind, 'def', pg_get_viewdef(c.oid),
      'options', array_to_string(c.reloptions, ', '), 'acl', c.relacl::text, 'owner', c.relowner) ORDER BY c.oid), '[]'::jsonb)
  INTO views_saved
  FROM (SELECT DISTINCT oid FROM dependent) v JOIN pg_class c ON c.oid = v.oid JOIN pg_namespace n ON n.oid = c.relnamespace;
  SELECT coalesce(jsonb_agg(jsonb_build_object('name', quote_ident(c.relname), 'acl', c.relacl::text, 'owner', c.relowner)), '[]'::jsonb)
  INTO grants_saved FROM unnest(old) v JOIN pg_class c ON c.oid = to_regclass(quote_ident(v));
  FOR saved IN SELECT value FROM jsonb_array_elements(views_saved) WITH ORDINALITY AS e(value, i) ORDER BY i DESC LOOP
    EXECUTE format('DROP %s %s', CASE saved.value->>'kind' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END, saved.value->>'name');
  END LOOP;
  FOR saved IN SELECT v FROM unnest(old) v WHERE to_regclass(quote_ident(v)) IS NOT NULL LOOP
    EXECUTE format('DROP VIEW %I', saved.v);
  END LOOP;

  CREATE VIEW "stat_transaction_hourly" AS
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
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_transaction_hourly" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.transaction' AND c."grain" = 'hourly'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "stat_transaction_daily" AS
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
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_transaction_daily" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.transaction' AND c."grain" = 'daily'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "stat_sql_hourly" AS
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
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_sql_hourly" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.sql' AND c."grain" = 'hourly'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "stat_sql_daily" AS
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
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_sql_daily" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.sql' AND c."grain" = 'daily'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "stat_httpc_hourly" AS
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
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_httpc_hourly" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.httpc' AND c."grain" = 'hourly'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "stat_httpc_daily" AS
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
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_httpc_daily" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.httpc' AND c."grain" = 'daily'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "stat_error_hourly" AS
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
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_error_hourly" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.error' AND c."grain" = 'hourly'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "stat_error_daily" AS
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
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_error_daily" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.error' AND c."grain" = 'daily'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "stat_remote_hourly" AS
  SELECT
    r."pcode",
    r."bucket_start",
    "ip",
    "country",
    "city",
    "windows",
    "count",
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_remote_hourly" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.remote' AND c."grain" = 'hourly'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "stat_remote_daily" AS
  SELECT
    r."pcode",
    r."bucket_start",
    "ip",
    "country",
    "city",
    "windows",
    "count",
    coalesce(c."coverage", 0) AS "coverage"
  FROM "rollup_stat_remote_daily" AS r
  LEFT JOIN "rollup_coverage" AS c ON c."stream" = 'stat.remote' AND c."grain" = 'daily'
    AND c."pcode" = r."pcode" AND c."bucket_start" = r."bucket_start";
  CREATE VIEW "metric_points_hourly" AS
  SELECT
    "pcode",
    "metric",
    "series_form",
    "bucket_start",
    "oid",
    "oname",
    "points",
    "value_sum" / nullif("points", 0) AS "value_avg",
    "value_min",
    "value_max"
  FROM "rollup_metric_points_hourly";
  CREATE VIEW "metric_points_daily" AS
  SELECT
    "pcode",
    "metric",
    "series_form",
    "bucket_start",
    "oid",
    "oname",
    "points",
    "value_sum" / nullif("points", 0) AS "value_avg",
    "value_min",
    "value_max"
  FROM "rollup_metric_points_daily";

  FOR saved IN SELECT value FROM jsonb_array_elements(grants_saved) LOOP
    PERFORM pg_temp.apm_regrant(saved.value->>'name', saved.value->>'acl', (saved.value->>'owner')::oid);
  END LOOP;
  FOR saved IN SELECT value FROM jsonb_array_elements(views_saved) WITH ORDINALITY AS e(value, i) ORDER BY i LOOP
    EXECUTE format('CREATE %s %s%s AS %s',
      CASE saved.value->>'kind' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END, saved.value->>'name',
      CASE WHEN coalesce(saved.value->>'options', '') = '' THEN '' ELSE format(' WITH (%s)', saved.value->>'options') END,
      rtrim(saved.value->>'def', ';'));
    PERFORM pg_temp.apm_regrant(saved.value->>'name', saved.value->>'acl', (saved.value->>'owner')::oid);
  END LOOP;
END $$;
--> statement-breakpoint
DROP FUNCTION pg_temp.apm_regrant(text, text, oid);
--> statement-breakpoint
DO $$
DECLARE
  spec record;
  month timestamptz;
BEGIN
  -- rollup_coverage holds the buckets of every statistics table: a month may come from several.
  FOR spec IN SELECT * FROM (VALUES
    ('rollup_stat_transaction_hourly', 'stat_transaction', 'window_start'),
    ('rollup_stat_transaction_daily', 'stat_transaction', 'window_start'),
    ('rollup_stat_sql_hourly', 'stat_sql', 'window_start'),
    ('rollup_stat_sql_daily', 'stat_sql', 'window_start'),
    ('rollup_stat_httpc_hourly', 'stat_httpc', 'window_start'),
    ('rollup_stat_httpc_daily', 'stat_httpc', 'window_start'),
    ('rollup_stat_error_hourly', 'stat_error', 'window_start'),
    ('rollup_stat_error_daily', 'stat_error', 'window_start'),
    ('rollup_stat_remote_hourly', 'stat_remote', 'window_start'),
    ('rollup_stat_remote_daily', 'stat_remote', 'window_start'),
    ('rollup_metric_points_hourly', 'metric_points', 'ts'),
    ('rollup_metric_points_daily', 'metric_points', 'ts')) AS s(name, source, col) LOOP
    FOR month IN EXECUTE format('SELECT DISTINCT date_trunc(''month'', %I, ''UTC'') FROM %I', spec.col, spec.source) LOOP
      EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
        spec.name || '_p' || to_char(month AT TIME ZONE 'UTC', 'YYYY_MM'), spec.name,
        to_char(month AT TIME ZONE 'UTC', 'YYYY-MM-DD"T00:00:00Z"'),
        to_char((month AT TIME ZONE 'UTC') + interval '1 month', 'YYYY-MM-DD"T00:00:00Z"'));
    END LOOP;
  END LOOP;
END $$;
--> statement-breakpoint
INSERT INTO "rollup_stat_transaction_hourly" ("pcode", "bucket_start", "service_hash", "service", "windows", "count", "error", "time_sum", "time_min", "time_max", "sql_count", "httpc_count", "apdex_weighted", "apdex_count") SELECT h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."service_hash", max(h."service"), count(*), sum("count"), sum("error"), sum("time_sum"), min("time_min"), max("time_max"), sum("sql_count"), sum("httpc_count"), sum("apdex" * "count"), sum("count") FILTER (WHERE "apdex" IS NOT NULL) FROM "stat_transaction" AS h GROUP BY h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."service_hash";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.transaction', r."pcode", 'hourly', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 hour') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 hour')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.transaction' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 hour' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_transaction_hourly") AS r;
--> statement-breakpoint
INSERT INTO "rollup_stat_transaction_daily" ("pcode", "bucket_start", "service_hash", "service", "windows", "count", "error", "time_sum", "time_min", "time_max", "sql_count", "httpc_count", "apdex_weighted", "apdex_count") SELECT h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."service_hash", max(h."service"), sum("windows"), sum("count"), sum("error"), sum("time_sum"), min("time_min"), max("time_max"), sum("sql_count"), sum("httpc_count"), sum("apdex_weighted"), sum("apdex_count") FROM "rollup_stat_transaction_hourly" AS h GROUP BY h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."service_hash";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.transaction', r."pcode", 'daily', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 day') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 day')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.transaction' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 day' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_transaction_daily") AS r;
--> statement-breakpoint
INSERT INTO "rollup_stat_sql_hourly" ("pcode", "bucket_start", "sql_hash", "dbc_hash", "service_hash", "sql", "db", "service", "windows", "count", "error", "time_sum", "time_min", "time_max", "fetch_count", "fetch_time") SELECT h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."sql_hash", h."dbc_hash", h."service_hash", max(h."sql"), max(h."db"), max(h."service"), count(*), sum("count"), sum("error"), sum("time_sum"), min("time_min"), max("time_max"), sum("fetch_count"), sum("fetch_time") FROM "stat_sql" AS h GROUP BY h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."sql_hash", h."dbc_hash", h."service_hash";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.sql', r."pcode", 'hourly', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 hour') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 hour')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.sql' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 hour' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_sql_hourly") AS r;
--> statement-breakpoint
INSERT INTO "rollup_stat_sql_daily" ("pcode", "bucket_start", "sql_hash", "dbc_hash", "service_hash", "sql", "db", "service", "windows", "count", "error", "time_sum", "time_min", "time_max", "fetch_count", "fetch_time") SELECT h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."sql_hash", h."dbc_hash", h."service_hash", max(h."sql"), max(h."db"), max(h."service"), sum("windows"), sum("count"), sum("error"), sum("time_sum"), min("time_min"), max("time_max"), sum("fetch_count"), sum("fetch_time") FROM "rollup_stat_sql_hourly" AS h GROUP BY h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."sql_hash", h."dbc_hash", h."service_hash";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.sql', r."pcode", 'daily', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 day') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 day')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.sql' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 day' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_sql_daily") AS r;
--> statement-breakpoint
INSERT INTO "rollup_stat_httpc_hourly" ("pcode", "bucket_start", "url_hash", "host_hash", "port", "service_hash", "url", "host", "service", "windows", "count", "error", "time_sum", "time_min", "time_max") SELECT h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."url_hash", h."host_hash", h."port", h."service_hash", max(h."url"), max(h."host"), max(h."service"), count(*), sum("count"), sum("error"), sum("time_sum"), min("time_min"), max("time_max") FROM "stat_httpc" AS h GROUP BY h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."url_hash", h."host_hash", h."port", h."service_hash";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.httpc', r."pcode", 'hourly', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 hour') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 hour')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.httpc' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 hour' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_httpc_hourly") AS r;
--> statement-breakpoint
INSERT INTO "rollup_stat_httpc_daily" ("pcode", "bucket_start", "url_hash", "host_hash", "port", "service_hash", "url", "host", "service", "windows", "count", "error", "time_sum", "time_min", "time_max") SELECT h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."url_hash", h."host_hash", h."port", h."service_hash", max(h."url"), max(h."host"), max(h."service"), sum("windows"), sum("count"), sum("error"), sum("time_sum"), min("time_min"), max("time_max") FROM "rollup_stat_httpc_hourly" AS h GROUP BY h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."url_hash", h."host_hash", h."port", h."service_hash";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.httpc', r."pcode", 'daily', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 day') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 day')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.httpc' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 day' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_httpc_daily") AS r;
--> statement-breakpoint
INSERT INTO "rollup_stat_error_hourly" ("pcode", "bucket_start", "class_hash", "msg_hash", "service_hash", "class", "msg", "service", "windows", "count") SELECT h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."class_hash", h."msg_hash", h."service_hash", max(h."class"), max(h."msg"), max(h."service"), count(*), sum("count") FROM "stat_error" AS h GROUP BY h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."class_hash", h."msg_hash", h."service_hash";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.error', r."pcode", 'hourly', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 hour') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 hour')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.error' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 hour' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_error_hourly") AS r;
--> statement-breakpoint
INSERT INTO "rollup_stat_error_daily" ("pcode", "bucket_start", "class_hash", "msg_hash", "service_hash", "class", "msg", "service", "windows", "count") SELECT h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."class_hash", h."msg_hash", h."service_hash", max(h."class"), max(h."msg"), max(h."service"), sum("windows"), sum("count") FROM "rollup_stat_error_hourly" AS h GROUP BY h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."class_hash", h."msg_hash", h."service_hash";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.error', r."pcode", 'daily', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 day') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 day')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.error' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 day' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_error_daily") AS r;
--> statement-breakpoint
INSERT INTO "rollup_stat_remote_hourly" ("pcode", "bucket_start", "ip", "country", "city", "windows", "count") SELECT h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."ip", max(h."country"), max(h."city"), count(*), sum("count") FROM "stat_remote" AS h GROUP BY h."pcode", date_trunc('hour', h."window_start", 'UTC'), h."ip";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.remote', r."pcode", 'hourly', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 hour') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 hour')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.remote' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 hour' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_remote_hourly") AS r;
--> statement-breakpoint
INSERT INTO "rollup_stat_remote_daily" ("pcode", "bucket_start", "ip", "country", "city", "windows", "count") SELECT h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."ip", max(h."country"), max(h."city"), sum("windows"), sum("count") FROM "rollup_stat_remote_hourly" AS h GROUP BY h."pcode", date_trunc('day', h."bucket_start", 'UTC'), h."ip";
--> statement-breakpoint
INSERT INTO "rollup_coverage" ("stream", "pcode", "grain", "bucket_start", "coverage")
SELECT 'stat.remote', r."pcode", 'daily', r."bucket_start", (SELECT least(1, coalesce(sum(extract(epoch FROM least(w."window_end", r."bucket_start" + interval '1 day') - greatest(w."window_start", r."bucket_start"))), 0)
    / extract(epoch FROM interval '1 day')) FROM "sync_windows" AS w WHERE w."stream" = 'stat.remote' AND w."pcode" = r."pcode" AND w."partition" = ''
    AND w."status" NOT IN ('failed', 'pruned') AND w."window_start" > r."bucket_start" - interval '86400 seconds'
    AND w."window_start" < r."bucket_start" + interval '1 day' AND w."window_end" > r."bucket_start")
FROM (SELECT DISTINCT "pcode", "bucket_start" FROM "rollup_stat_remote_daily") AS r;
--> statement-breakpoint
INSERT INTO "rollup_metric_points_hourly" ("pcode", "metric", "series_form", "bucket_start", "oid", "oname", "points", "value_sum", "value_min", "value_max") SELECT h."pcode", h."metric", h."series_form", date_trunc('hour', h."ts", 'UTC'), h."oid", max(h."oname"), count(*), sum("value"), min("value"), max("value") FROM "metric_points" AS h GROUP BY h."pcode", h."metric", h."series_form", date_trunc('hour', h."ts", 'UTC'), h."oid";
--> statement-breakpoint
INSERT INTO "rollup_metric_points_daily" ("pcode", "metric", "series_form", "bucket_start", "oid", "oname", "points", "value_sum", "value_min", "value_max") SELECT h."pcode", h."metric", h."series_form", date_trunc('day', h."bucket_start", 'UTC'), h."oid", max(h."oname"), sum("points"), sum("value_sum"), min("value_min"), max("value_max") FROM "rollup_metric_points_hourly" AS h GROUP BY h."pcode", h."metric", h."series_form", date_trunc('day', h."bucket_start", 'UTC'), h."oid";

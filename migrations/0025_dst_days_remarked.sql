-- A daily rollup's bucket was its start plus `interval '1 day'`, a calendar day in the session's
-- time zone: where that zone keeps daylight saving (a server's TimeZone), a UTC day was 23 or 25
-- hours on the days its clocks change, and the refresh stored such a day without its last hour of
-- rows, its coverage short. The buckets are 24 hours now (src/db/rollups/sql.ts). The days whose
-- length in this session's zone is not 24 hours are marked, one mark a project and day, so that the
-- views compute them from the raw rows until the next refresh stores them again; in a UTC session
-- no day is marked. A mark without `partial` is partial: the day's hour is recomputed with its day.
INSERT INTO "rollup_marks" ("source", "pcode", "hour")
SELECT DISTINCT d."source", d."pcode", d."bucket_start" FROM (
  SELECT 'stat_transaction' AS "source", "pcode", "bucket_start" FROM "rollup_stat_transaction_daily"
  UNION ALL SELECT 'stat_sql', "pcode", "bucket_start" FROM "rollup_stat_sql_daily"
  UNION ALL SELECT 'stat_httpc', "pcode", "bucket_start" FROM "rollup_stat_httpc_daily"
  UNION ALL SELECT 'stat_error', "pcode", "bucket_start" FROM "rollup_stat_error_daily"
  UNION ALL SELECT 'stat_remote', "pcode", "bucket_start" FROM "rollup_stat_remote_daily"
  UNION ALL SELECT 'metric_points', "pcode", "bucket_start" FROM "rollup_metric_points_daily"
) AS d WHERE d."bucket_start" + interval '1 day' <> d."bucket_start" + interval '24 hours';

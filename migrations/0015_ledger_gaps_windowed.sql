-- ledger_gaps reported the time between two captures of a snapshot stream as a hole: a capture is
-- recorded as a zero-length window (window_start = window_end), so a healthy warehouse showed a
-- "hole" per stream, project and pair of runs. Holes are now read from the windows that cover
-- time (windowed streams); failed windows, captures included, are still listed as failed. Same
-- columns: views a user made on this one are kept.
CREATE OR REPLACE VIEW "ledger_gaps" AS
WITH "ordered" AS (
  SELECT "stream", "pcode", "partition", "window_start",
    max("window_end") OVER (
      PARTITION BY "stream", "pcode", "partition" ORDER BY "window_start", "window_end"
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS "covered_until"
  FROM "sync_windows"
  WHERE "window_end" > "window_start"
)
SELECT "stream", "pcode", "partition", "covered_until" AS "gap_start", "window_start" AS "gap_end", 'hole' AS "kind", NULL::text AS "error"
FROM "ordered"
WHERE "covered_until" < "window_start"
UNION ALL
SELECT "stream", "pcode", "partition", "window_start", "window_end", 'failed', "error"
FROM "sync_windows"
WHERE "status" = 'failed';

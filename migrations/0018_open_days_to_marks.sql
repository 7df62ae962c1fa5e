-- The rollups are refreshed after the write now (src/db/rollups): a day the previous release left
-- open (its daily views computed it when read) becomes a mark, so that the views compute it from the
-- raw rows until the next refresh stores it. The open days' table is emptied, and kept until no
-- view of an older release reads it. The views themselves are created again by `migrate` from
-- their definitions in code (src/db/views.ts).
INSERT INTO "rollup_marks" ("source", "pcode", "hour") SELECT "source", "pcode", "bucket_start" FROM "rollup_open_days";
--> statement-breakpoint
DELETE FROM "rollup_open_days";

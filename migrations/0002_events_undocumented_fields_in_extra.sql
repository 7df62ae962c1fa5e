-- process and triggerId appear in event history with no documented meaning: kept in extra, not as columns.
ALTER TABLE "events" DROP COLUMN "process";--> statement-breakpoint
ALTER TABLE "events" DROP COLUMN "trigger_id";
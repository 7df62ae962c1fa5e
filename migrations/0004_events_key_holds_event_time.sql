-- 0005 partitions events by event_time, and a partitioned table's keys must hold its partition column.
-- The parser requires eventTime, so no stored event lacks it.
ALTER TABLE "events" DROP CONSTRAINT "events_pcode_event_key_pk";--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "event_time" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_pcode_event_key_event_time_pk" PRIMARY KEY("pcode","event_key","event_time");
CREATE TABLE "archives" (
	"table_name" text NOT NULL,
	"month" timestamp with time zone NOT NULL,
	"path" text NOT NULL,
	"rows" bigint NOT NULL,
	"bytes" bigint NOT NULL,
	"sha256" text NOT NULL,
	"content_sha256" text NOT NULL,
	"archived_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "archives_table_name_month_pk" PRIMARY KEY("table_name","month")
);
--> statement-breakpoint
ALTER TABLE "sync_windows" DROP CONSTRAINT "sync_windows_status_check";--> statement-breakpoint
ALTER TABLE "sync_windows" ADD CONSTRAINT "sync_windows_status_check" CHECK ("sync_windows"."status" in ('done', 'failed', 'truncated', 'pruned', 'archived'));
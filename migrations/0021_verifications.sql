CREATE TABLE "verifications" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"range_start" timestamp with time zone NOT NULL,
	"range_end" timestamp with time zone NOT NULL,
	"args" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"windows_checked" integer NOT NULL,
	"windows_differing" integer NOT NULL,
	"windows_failed" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "verifications_finished_idx" ON "verifications" USING btree ("finished_at");
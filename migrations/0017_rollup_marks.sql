CREATE TABLE "rollup_marks" (
	"source" text NOT NULL,
	"pcode" bigint NOT NULL,
	"hour" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "rollup_marks_idx" ON "rollup_marks" USING btree ("source","pcode","hour");
CREATE TABLE "agents_history" (
	"pcode" bigint NOT NULL,
	"oname" text NOT NULL,
	"host_ip" text,
	"active" boolean,
	"extra" jsonb,
	"run_id" bigint,
	"synced_at" timestamp with time zone,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "agents_history_pkey" PRIMARY KEY("pcode","oname","valid_from")
);
--> statement-breakpoint
CREATE TABLE "event_settings_history" (
	"pcode" bigint NOT NULL,
	"event_type" text NOT NULL,
	"setting_id" text NOT NULL,
	"product_type" text,
	"platform" text,
	"enabled" boolean,
	"stateful" boolean,
	"version" integer,
	"critical_enabled" boolean,
	"warning_enabled" boolean,
	"silent_period" integer,
	"meta_id" text,
	"display_name" text,
	"critical_threshold" text,
	"warning_threshold" text,
	"message" text,
	"repeat_duration" integer,
	"repeat_count" integer,
	"conditions" jsonb,
	"select_condition" jsonb,
	"event_message" text,
	"select" text,
	"alert_label" jsonb,
	"rule" text,
	"silent_sec" integer,
	"event_title" text,
	"event_level" integer,
	"category" text,
	"interval_sec" integer,
	"query" text,
	"time_trim" integer,
	"time_period" integer,
	"desc" text,
	"silent_time" text,
	"app_ctx" jsonb,
	"exclude_app_ctx" jsonb,
	"status" jsonb,
	"exclude_status" jsonb,
	"error_class" jsonb,
	"exclude_error_class" jsonb,
	"error_message" jsonb,
	"exclude_error_message" jsonb,
	"url" jsonb,
	"exclude_url" jsonb,
	"limit" integer,
	"condition_value" double precision,
	"condition_type" text,
	"result_type" text,
	"extra" jsonb,
	"run_id" bigint,
	"synced_at" timestamp with time zone,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "event_settings_history_pkey" PRIMARY KEY("pcode","event_type","setting_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "group_members_history" (
	"group_key" text NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"desc" text,
	"sms" text,
	"extra" jsonb,
	"run_id" bigint,
	"synced_at" timestamp with time zone,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "group_members_history_pkey" PRIMARY KEY("group_key","email","valid_from")
);
--> statement-breakpoint
CREATE TABLE "group_projects_history" (
	"group_key" text NOT NULL,
	"pcode" bigint NOT NULL,
	"name" text,
	"status" text,
	"product_type" text,
	"platform" text,
	"gateway_name" text,
	"extra" jsonb,
	"run_id" bigint,
	"synced_at" timestamp with time zone,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "group_projects_history_pkey" PRIMARY KEY("group_key","pcode","valid_from")
);
--> statement-breakpoint
CREATE TABLE "groups_history" (
	"group_key" text NOT NULL,
	"group_name" text,
	"description" text,
	"extra" jsonb,
	"run_id" bigint,
	"synced_at" timestamp with time zone,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "groups_history_pkey" PRIMARY KEY("group_key","valid_from")
);
--> statement-breakpoint
CREATE TABLE "project_details_history" (
	"pcode" bigint NOT NULL,
	"name" text,
	"platform" text,
	"create_time" timestamp with time zone,
	"last_updated_time" timestamp with time zone,
	"gateway_name" text,
	"status" text,
	"product_type" text,
	"pname" text,
	"timezone" double precision,
	"region_name" text,
	"values" jsonb,
	"extra" jsonb,
	"run_id" bigint,
	"synced_at" timestamp with time zone,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "project_details_history_pkey" PRIMARY KEY("pcode","valid_from")
);
--> statement-breakpoint
CREATE TABLE "project_members_history" (
	"pcode" bigint NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"desc" text,
	"sms" text,
	"extra" jsonb,
	"run_id" bigint,
	"synced_at" timestamp with time zone,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "project_members_history_pkey" PRIMARY KEY("pcode","email","valid_from")
);
--> statement-breakpoint
CREATE TABLE "projects_history" (
	"pcode" bigint NOT NULL,
	"project_name" text,
	"create_time" timestamp with time zone,
	"status" text,
	"product_type" text,
	"platform" text,
	"group_name" text,
	"last_updated_time" timestamp with time zone,
	"gateway_name" text,
	"extra" jsonb,
	"run_id" bigint,
	"synced_at" timestamp with time zone,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "projects_history_pkey" PRIMARY KEY("pcode","valid_from")
);
--> statement-breakpoint
CREATE TABLE "restatements" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"stream" text NOT NULL,
	"pcode" bigint NOT NULL,
	"partition" text DEFAULT '' NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"rows_before" bigint NOT NULL,
	"rows_after" bigint NOT NULL,
	"measure" text,
	"measure_before" double precision,
	"measure_after" double precision,
	"run_id" bigint,
	"detected_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "agents_history_current_key" ON "agents_history" USING btree ("pcode","oname") WHERE "valid_to" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "event_settings_history_current_key" ON "event_settings_history" USING btree ("pcode","event_type","setting_id") WHERE "valid_to" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "group_members_history_current_key" ON "group_members_history" USING btree ("group_key","email") WHERE "valid_to" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "group_projects_history_current_key" ON "group_projects_history" USING btree ("group_key","pcode") WHERE "valid_to" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "groups_history_current_key" ON "groups_history" USING btree ("group_key") WHERE "valid_to" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "project_details_history_current_key" ON "project_details_history" USING btree ("pcode") WHERE "valid_to" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "project_members_history_current_key" ON "project_members_history" USING btree ("pcode","email") WHERE "valid_to" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "projects_history_current_key" ON "projects_history" USING btree ("pcode") WHERE "valid_to" IS NULL;--> statement-breakpoint
CREATE INDEX "restatements_detected_idx" ON "restatements" USING btree ("detected_at");--> statement-breakpoint
CREATE INDEX "restatements_window_idx" ON "restatements" USING btree ("stream","pcode","window_start");
--> statement-breakpoint
-- Hand-written: an upgraded warehouse starts with history. Each row becomes its first version, valid from when
-- apm-sync first saw it; a row marked deleted is a version that ended then.
INSERT INTO "projects_history" ("pcode", "project_name", "create_time", "status", "product_type", "platform", "group_name", "last_updated_time", "gateway_name", "extra", "run_id", "synced_at", "valid_from", "valid_to")
SELECT "pcode", "project_name", "create_time", "status", "product_type", "platform", "group_name", "last_updated_time", "gateway_name", "extra", "run_id", "synced_at", "first_seen_at", "deleted_at" FROM "projects";
--> statement-breakpoint
INSERT INTO "project_members_history" ("pcode", "email", "name", "desc", "sms", "extra", "run_id", "synced_at", "valid_from", "valid_to")
SELECT "pcode", "email", "name", "desc", "sms", "extra", "run_id", "synced_at", "first_seen_at", "deleted_at" FROM "project_members";
--> statement-breakpoint
INSERT INTO "groups_history" ("group_key", "group_name", "description", "extra", "run_id", "synced_at", "valid_from", "valid_to")
SELECT "group_key", "group_name", "description", "extra", "run_id", "synced_at", "first_seen_at", "deleted_at" FROM "groups";
--> statement-breakpoint
INSERT INTO "group_members_history" ("group_key", "email", "name", "desc", "sms", "extra", "run_id", "synced_at", "valid_from", "valid_to")
SELECT "group_key", "email", "name", "desc", "sms", "extra", "run_id", "synced_at", "first_seen_at", "deleted_at" FROM "group_members";
--> statement-breakpoint
INSERT INTO "group_projects_history" ("group_key", "pcode", "name", "status", "product_type", "platform", "gateway_name", "extra", "run_id", "synced_at", "valid_from", "valid_to")
SELECT "group_key", "pcode", "name", "status", "product_type", "platform", "gateway_name", "extra", "run_id", "synced_at", "first_seen_at", "deleted_at" FROM "group_projects";
--> statement-breakpoint
INSERT INTO "project_details_history" ("pcode", "name", "platform", "create_time", "last_updated_time", "gateway_name", "status", "product_type", "pname", "timezone", "region_name", "values", "extra", "run_id", "synced_at", "valid_from", "valid_to")
SELECT "pcode", "name", "platform", "create_time", "last_updated_time", "gateway_name", "status", "product_type", "pname", "timezone", "region_name", "values", "extra", "run_id", "synced_at", "first_seen_at", "deleted_at" FROM "project_details";
--> statement-breakpoint
INSERT INTO "agents_history" ("pcode", "oname", "host_ip", "active", "extra", "run_id", "synced_at", "valid_from", "valid_to")
SELECT "pcode", "oname", "host_ip", "active", "extra", "run_id", "synced_at", "first_seen_at", "deleted_at" FROM "agents";
--> statement-breakpoint
INSERT INTO "event_settings_history" ("pcode", "event_type", "setting_id", "product_type", "platform", "enabled", "stateful", "version", "critical_enabled", "warning_enabled", "silent_period", "meta_id", "display_name", "critical_threshold", "warning_threshold", "message", "repeat_duration", "repeat_count", "conditions", "select_condition", "event_message", "select", "alert_label", "rule", "silent_sec", "event_title", "event_level", "category", "interval_sec", "query", "time_trim", "time_period", "desc", "silent_time", "app_ctx", "exclude_app_ctx", "status", "exclude_status", "error_class", "exclude_error_class", "error_message", "exclude_error_message", "url", "exclude_url", "limit", "condition_value", "condition_type", "result_type", "extra", "run_id", "synced_at", "valid_from", "valid_to")
SELECT "pcode", "event_type", "setting_id", "product_type", "platform", "enabled", "stateful", "version", "critical_enabled", "warning_enabled", "silent_period", "meta_id", "display_name", "critical_threshold", "warning_threshold", "message", "repeat_duration", "repeat_count", "conditions", "select_condition", "event_message", "select", "alert_label", "rule", "silent_sec", "event_title", "event_level", "category", "interval_sec", "query", "time_trim", "time_period", "desc", "silent_time", "app_ctx", "exclude_app_ctx", "status", "exclude_status", "error_class", "exclude_error_class", "error_message", "exclude_error_message", "url", "exclude_url", "limit", "condition_value", "condition_type", "result_type", "extra", "run_id", "synced_at", "first_seen_at", "deleted_at" FROM "event_settings";

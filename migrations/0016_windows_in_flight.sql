CREATE TABLE "sync_attempts" (
	"stream" text NOT NULL,
	"pcode" bigint NOT NULL,
	"partition" text DEFAULT '' NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"run_id" bigint,
	"crashes" integer DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sync_attempts_stream_pcode_partition_window_start_window_end_pk" PRIMARY KEY("stream","pcode","partition","window_start","window_end")
);

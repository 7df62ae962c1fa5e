// The outcome of each `apm-sync verify` (one verifications row), and the latest for `status` and the report.
import { isoTime, type SqlHandle } from "../driver/exec.ts";

export interface Verification {
  readonly from: number;
  readonly to: number;
  /** The selection: streams, projects, sample; never a token. */
  readonly args: Readonly<Record<string, unknown>>;
  readonly checked: number;
  readonly differing: number;
  readonly failed: number;
  readonly startedAt: number;
}

export interface VerificationRow extends Omit<Verification, "args" | "startedAt"> {
  readonly id: number;
  readonly finishedAt: Date;
}

export async function recordVerification(sql: SqlHandle, v: Verification): Promise<number> {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO "verifications" ("range_start", "range_end", "args", "windows_checked", "windows_differing", "windows_failed", "started_at")
    VALUES (${isoTime(v.from)}::timestamptz, ${isoTime(v.to)}::timestamptz, ${JSON.stringify(v.args)}::text::jsonb,
      ${v.checked}::int, ${v.differing}::int, ${v.failed}::int, ${isoTime(v.startedAt)}::timestamptz)
    RETURNING "id"::text AS id`;
  return Number(row!.id);
}

/** The latest verification, or null when none ran. */
export async function readLastVerification(sql: SqlHandle): Promise<VerificationRow | null> {
  const [row] = await sql<Record<string, unknown>[]>`
    SELECT "id"::float8 AS id, (extract(epoch from "range_start") * 1000)::float8 AS from,
      (extract(epoch from "range_end") * 1000)::float8 AS to, "windows_checked" AS checked,
      "windows_differing" AS differing, "windows_failed" AS failed, "finished_at" AS finished_at
    FROM "verifications" ORDER BY "finished_at" DESC, "id" DESC LIMIT 1`;
  if (!row) return null;
  return {
    id: row.id as number,
    from: row.from as number,
    to: row.to as number,
    checked: row.checked as number,
    differing: row.differing as number,
    failed: row.failed as number,
    finishedAt: row.finished_at as Date,
  };
}

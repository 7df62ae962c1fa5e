// Which database errors are waited out (db/driver/transient.ts), and how a failed statement of
// drizzle's (the migrator's) is told: by the driver's error inside it.
import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { dbErrorCode, isTransientDbError } from "../../src/db/driver/transient.ts";
import { DbRetriesSpentError, withDbRetry } from "../../src/db/driver/withDbRetry.ts";
import { ADVICE, describeError, splitAdvice } from "../../src/engine/describe-error.ts";

const driverError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("isTransientDbError", () => {
  it.each([
    ["57P03", "the database system is starting up", true],
    ["ECONNRESET", "read ECONNRESET", true],
    ["CONNECTION_CLOSED", "write CONNECTION_CLOSED 127.0.0.1:5432", true],
    ["08006", "connection failure", true],
    ["23505", "duplicate key value violates unique constraint", false],
    ["42501", "permission denied for database", false],
  ])("%s: %s -> %s, alone and inside a failed drizzle statement", (code, message, transient) => {
    const cause = driverError(code, message);
    expect(isTransientDbError(cause)).toBe(transient);
    const failed = new DrizzleQueryError('select id from "apm"."__drizzle_migrations"', [], cause);
    expect(isTransientDbError(failed)).toBe(transient);
    // What "database unavailable (...)" names.
    expect(dbErrorCode(failed)).toBe(code);
  });

  it("an error without a code, or a drizzle error without a cause, is not transient", () => {
    expect(isTransientDbError(new Error("read ECONNRESET"))).toBe(false);
    expect(isTransientDbError(new DrizzleQueryError("select 1", []))).toBe(false);
  });
});

describe("describeError of a failed drizzle statement", () => {
  it("says the driver's error and the statement's start, never its parameters", () => {
    const e = new DrizzleQueryError(
      'select id, hash\n  from "apm"."__drizzle_migrations"   order by created_at',
      ["s3cr3t"],
      driverError("ECONNRESET", "read ECONNRESET"),
    );
    const line = describeError(e);
    expect(line).toBe('read ECONNRESET (ECONNRESET) in `select id, hash from "apm"."__drizzle_migrations" order by created_at`');
    expect(line).not.toContain("s3cr3t");
  });
});

describe("withDbRetry when its budget runs out", () => {
  it("a database still away: the last error inside one that says so, still a lost connection, and told what to do", async () => {
    let attempts = 0;
    const step = () => {
      attempts++;
      return Promise.reject(new DrizzleQueryError("select 1 where $1", ["s3cr3t"], driverError("ECONNRESET", "read ECONNRESET")));
    };
    const e = await withDbRetry(step, { budgetMs: 300 }).catch((err: unknown) => err);
    expect(attempts).toBeGreaterThan(1);
    expect(e).toBeInstanceOf(DbRetriesSpentError);
    // run-windowed.ts reads it as the database's failure, not the windows' own.
    expect(isTransientDbError(e)).toBe(true);
    const line = describeError(e);
    expect(line).toBe(
      `read ECONNRESET (ECONNRESET) in \`select 1 where $1\`, still unavailable after 300 ms of retries (${ADVICE.databaseAway})`,
    );
    expect(line).not.toContain("s3cr3t");
    expect(splitAdvice(line).advice).toBe(ADVICE.databaseAway);
  });

  it("an error that does not heal is thrown as it came, at once", async () => {
    let attempts = 0;
    const duplicate = driverError("23505", "duplicate key value violates unique constraint");
    const e = await withDbRetry(
      () => {
        attempts++;
        return Promise.reject(duplicate);
      },
      { budgetMs: 300 },
    ).catch((err: unknown) => err);
    expect(attempts).toBe(1);
    expect(e).toBe(duplicate);
  });
});

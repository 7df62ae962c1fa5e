// A server's own limits (statement_timeout, lock_timeout, no writes, a full disk) as describeError tells them:
// the server's words, then what to do, which `status` splits off. A statement cancelled on request
// (the shutdown's cancel of a refresh) or a lock refused at once (NOWAIT) is no limit: no advice.
import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { ADVICE, describeError, splitAdvice } from "../../src/engine/describe-error.ts";

const serverError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("a server's limits, described", () => {
  it("statement_timeout and lock_timeout: the server's words, then how to lift the limit for apm-sync", () => {
    const statement = describeError(serverError("57014", "canceling statement due to statement timeout"));
    expect(statement).toBe(`canceling statement due to statement timeout (57014) (${ADVICE.statementTimeout})`);
    expect(splitAdvice(statement)).toEqual({
      error: "canceling statement due to statement timeout (57014)",
      advice: ADVICE.statementTimeout,
    });
    const lock = describeError(serverError("55P03", "canceling statement due to lock timeout"));
    expect(lock).toBe(`canceling statement due to lock timeout (55P03) (${ADVICE.lockTimeout})`);
    expect(splitAdvice(lock).advice).toBe(ADVICE.lockTimeout);
  });

  it("a database that takes no writes (a standby, or read-only by default): where to point, or how to lift it", () => {
    const line = describeError(serverError("25006", "cannot execute CREATE SCHEMA in a read-only transaction"));
    expect(line).toBe(`cannot execute CREATE SCHEMA in a read-only transaction (25006) (${ADVICE.readOnly})`);
    expect(splitAdvice(line).advice).toBe(ADVICE.readOnly);
  });

  it("a privilege the role lacks: the grant it needs", () => {
    const line = describeError(serverError("42501", "permission denied for database warehouse"));
    expect(line).toBe(`permission denied for database warehouse (42501) (${ADVICE.privilege})`);
    expect(splitAdvice(line).advice).toBe(ADVICE.privilege);
  });

  it("no connection left on the server: how many apm-sync opens, what to set and what to raise", () => {
    const line = describeError(serverError("53300", "sorry, too many clients already"));
    expect(ADVICE.connections).toContain("opens up to APM_DB_CONNECTIONS into Postgres (15 unless set): set APM_DB_CONNECTIONS");
    expect(line).toBe(`sorry, too many clients already (53300) (${ADVICE.connections})`);
    expect(splitAdvice(line).advice).toBe(ADVICE.connections);
  });

  it("a cancel on request and a lock refused at once are no limit of the server's: no advice", () => {
    expect(describeError(serverError("57014", "canceling statement due to user request"))).toBe(
      "canceling statement due to user request (57014)",
    );
    expect(describeError(serverError("55P03", 'could not obtain lock on relation "stat_sql"'))).toBe(
      'could not obtain lock on relation "stat_sql" (55P03)',
    );
  });

  it("inside a failed drizzle statement (a migration): the advice, the statement named, its parameters never shown", () => {
    const failed = new DrizzleQueryError(
      'update "apm"."t" set x = $1',
      ["s3cr3t"],
      serverError("57014", "canceling statement due to statement timeout"),
    );
    const line = describeError(failed);
    expect(line).toBe(
      `canceling statement due to statement timeout (57014) in \`update "apm"."t" set x = $1\` (${ADVICE.statementTimeout})`,
    );
    expect(line).not.toContain("s3cr3t");
  });
});

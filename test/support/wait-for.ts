// Waiting on a condition instead of sleeping: polls `check` until it holds, failing after `timeoutMs`
// with `what` in the message (a test that waits never passes by the clock alone).
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Whether a backend of the database waits for an advisory lock (pg_locks: not granted). */
export async function waitsForAdvisoryLock(sql: { unsafe: (q: string) => Promise<unknown[]> }): Promise<boolean> {
  const rows = (await sql.unsafe(
    "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
  )) as unknown[];
  return rows.length > 0;
}

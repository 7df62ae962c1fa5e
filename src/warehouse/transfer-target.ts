// The Postgres a transfer writes to (`--to URL`): checked, opened, and named in messages with its
// password masked. The URL never reaches a log line or an error whole.

import { postgresUrlProblem } from "../config/values.ts";
import type { Config } from "../config.ts";
import { type Database, openDatabase } from "../db/driver/connect.ts";
import { databaseProblem, requireOwnSessions } from "../preflight.ts";
import { UsageError } from "../usage-error.ts";
import { redact, Secret } from "../util/secret.ts";

const SETTING = "--to";

// The user and password of a URL: the user up to the first ':', the password up to the last '@'
// of the authority (which ends at the first '/', '?' or '#'), as the WHATWG parser the driver
// uses reads them: an '@' left unescaped in a password belongs to the password.
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/[^:/?#]*:)([^/?#]*)@/i;

/** `url` as it may be shown: the password (if any) as `***`. */
export function shownUrl(url: string): string {
  return url.replace(USERINFO, "$1***@");
}

/** `text` with every spelling of `url`'s password masked (the util/secret.ts matcher). */
export function withoutPassword(text: string, url: string): string {
  const written = USERINFO.exec(url)?.[2];
  if (!written) return text;
  let password = written;
  try {
    password = decodeURIComponent(written);
  } catch {
    // A malformed escape: the password is masked as written.
  }
  return redact(redact(text, [new Secret(password)]), [new Secret(written)]);
}

/** Problems of the command line before anything is opened: usage errors (exit 2). */
export function checkTransfer(config: Config, to: string): void {
  if (config.databaseUrl)
    throw new UsageError(
      "transfer copies the embedded warehouse (APM_DATA_DIR) into --to; DATABASE_URL is set, which names a Postgres warehouse: " +
        "unset DATABASE_URL for this command",
    );
  const problem = postgresUrlProblem(to);
  if (problem) throw new UsageError(`${SETTING}: ${problem} (the target warehouse)`);
}

/** Opens the target in the configured schema; its first round trip tells a wrong URL (exit 2) from a failure. */
export async function openTarget(config: Config, to: string): Promise<Database> {
  const target = await openDatabase({ databaseUrl: to, dataDir: "", dbSchema: config.dbSchema, dbConnections: config.dbConnections });
  try {
    await target.sql`select 1`;
    await requireOwnSessions(target.sql, SETTING);
    return target;
  } catch (e) {
    await target.close();
    throw databaseProblem(e, config.dbSchema, SETTING) ?? e;
  }
}

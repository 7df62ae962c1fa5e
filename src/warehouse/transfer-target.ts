// The Postgres a transfer writes to (`--to URL`): checked, opened, and named in messages with its
// password masked. The URL never reaches a log line or an error whole.

import { postgresUrl } from "../config/values.ts";
import type { Config } from "../config.ts";
import { type Database, openDatabase } from "../db/driver/connect.ts";
import { databaseProblem } from "../preflight.ts";
import { UsageError } from "../usage-error.ts";
import { redact, Secret } from "../util/secret.ts";

const SETTING = "--to";

/** `url` as it may be shown: the password (if any) as `***`. */
export function shownUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, "$1***@");
}

/** `text` with every spelling of `url`'s password masked (the util/secret.ts matcher). */
export function withoutPassword(text: string, url: string): string {
  const match = /^[a-z]+:\/\/[^:/@]*:([^@]*)@/i.exec(url);
  if (!match?.[1]) return text;
  let password = match[1];
  try {
    password = decodeURIComponent(password);
  } catch {
    // A malformed escape: the password is masked as written.
  }
  return redact(redact(text, [new Secret(password)]), [new Secret(match[1])]);
}

/** Problems of the command line before anything is opened: usage errors (exit 2). */
export function checkTransfer(config: Config, to: string): void {
  if (config.databaseUrl)
    throw new UsageError(
      "transfer copies the embedded warehouse (APM_DATA_DIR) into --to; DATABASE_URL is set, which names a Postgres warehouse: " +
        "unset DATABASE_URL for this command",
    );
  if (!postgresUrl.safeParse(to).success)
    throw new UsageError(`${SETTING}: must start with postgres:// or postgresql:// (the target warehouse)`);
}

/** Opens the target in the configured schema; its first round trip tells a wrong URL (exit 2) from a failure. */
export async function openTarget(config: Config, to: string): Promise<Database> {
  const target = await openDatabase({ databaseUrl: to, dataDir: "", dbSchema: config.dbSchema });
  try {
    await target.sql`select 1`;
    return target;
  } catch (e) {
    await target.close();
    throw databaseProblem(e, config.dbSchema, SETTING) ?? e;
  }
}

// One report from the database: range (flags, else the ledger's span), the reads, the model.
// `report`, the demo and the tests all come through here.

import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Config } from "../config.ts";
import type { SqlHandle } from "../db/driver/exec.ts";
import { redact, type Secret } from "../util/secret.ts";
import { floorToGrid } from "../windows/grid.ts";
import { buildReport } from "./build-report.ts";
import type { ReportModel } from "./model.ts";
import { reportRange } from "./range.ts";
import { readReportInputs } from "./read-report.ts";
import { readLedgerSpan } from "./reads/readLedgerSpan.ts";
import { renderHtml } from "./render-html.ts";

/** Where `report` and the demo write the page unless told otherwise (relative to the cwd). */
export const DEFAULT_REPORT_FILE = "apm-sync-report.html";

export interface ReportRequest {
  readonly from: number | null;
  readonly to: number | null;
  readonly projects: readonly number[] | null;
  readonly now: number;
  /** The configuration's settle time: a sync stops at now - settle, the report's coverage too. */
  readonly settleMs: number;
}

export async function makeReport(sql: SqlHandle, req: ReportRequest): Promise<ReportModel> {
  const range = reportRange(req, await readLedgerSpan(sql), req.now);
  const inputs = await readReportInputs(sql, { from: range.from, to: range.to, pcodes: req.projects }, range);
  const due = floorToGrid(req.now - req.settleMs);
  return buildReport(inputs, { now: req.now, due, range, projects: req.projects });
}

/**
 * Last line of defence before a report leaves the process: no token is written to the database,
 * but error texts and quarantine reasons come from outside; any configured token in them is masked.
 */
export function redactTokens(text: string, config: Pick<Config, "api">): string {
  const secrets: Secret[] = [...config.api.projects.map((p) => p.token), ...(config.api.accountToken ? [config.api.accountToken] : [])];
  return redact(text, secrets);
}

/** Writes the page; returns its absolute path (what the user is told to open). */
export async function writeHtmlReport(model: ReportModel, config: Pick<Config, "api">, file: string): Promise<string> {
  const path = resolve(file);
  await writeFile(path, redactTokens(await renderHtml(model), config));
  return path;
}

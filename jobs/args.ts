// Flag parsing shared by the jobs (comma lists, times). A bad value is a usage error (exit 2).
import type { Config } from "../src/config.ts";
import { selectOperations, selectProjects, UsageError } from "../src/engine/targets.ts";
import { parseUtcTime } from "../src/util/time.ts";

export function parseList(value: unknown): string[] | null {
  if (typeof value !== "string" || value.trim() === "") return null;
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export function parseProjects(value: unknown): number[] | null {
  const list = parseList(value);
  if (!list) return null;
  const bad = list.filter((p) => !/^\d+$/.test(p));
  if (bad.length > 0) throw new UsageError(`--projects: not project codes: ${bad.join(", ")}`);
  return list.map(Number);
}

/** ISO date or date-time; without a zone it is UTC. */
export function parseTime(value: unknown, flag: string): number {
  const text = String(value ?? "").trim();
  const ms = parseUtcTime(text);
  if (ms === null)
    throw new UsageError(`${flag}: expected an ISO date or date-time (UTC unless a zone is given), got ${JSON.stringify(text)}`);
  return ms;
}

/** `--streams` / `--projects` of sync, backfill and check; `validate` checks them against the config (exit 2). */
export function selectionFlags(opts: Record<string, unknown>) {
  const selection: { streams: string[] | null; projects: number[] | null } = { streams: parseList(opts.streams), projects: null };
  const validate = (config: Config) => {
    selection.projects = parseProjects(opts.projects);
    selectOperations(selection.streams ?? config.sync.streams, config.sync.inputs);
    selectProjects(config, selection.projects);
  };
  return { selection, validate };
}

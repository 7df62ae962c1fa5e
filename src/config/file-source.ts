// The config file (`--config FILE` or APM_CONFIG, JSON): the settings of settings.ts plus
// `projects`. Problems are named `config file <path>: <key>`, never by the variable that would
// win over the key.
import { readFileSync } from "node:fs";
import { fileProjects } from "./credentials.ts";
import { parseSettings, type SourceValues, settingsShape } from "./settings.ts";
import { didYouMean } from "./suggest.ts";

function fileShape(now: number) {
  return { ...settingsShape(now), projects: fileProjects };
}

export function readConfigFile(path: string, now: number): SourceValues {
  const where = `config file ${path}`;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return { values: {}, problems: [`${where}: ${code ? `cannot read it (${code})` : (e as Error).message}`] };
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    return { values: {}, problems: [`${where}: expected a JSON object of settings, e.g. {"start": "7d"}`] };
  const shape = fileShape(now);
  const known = Object.keys(shape);
  const unknown = Object.keys(raw).filter((k) => !known.includes(k));
  const parsed = parseSettings(raw as Record<string, unknown>, shape, (key) => `${where}: ${key}`);
  const problems = unknown.map((k) => `${where}: unknown key ${JSON.stringify(k)}${didYouMean(k, known)}`);
  return { ...parsed, problems: [...problems, ...parsed.problems] };
}

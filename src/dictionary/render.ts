// The dictionary as `apm-sync schema` prints it: plain text (default), Markdown (docs/warehouse.md)
// or JSON. All three carry the same content: conventions, shared columns, every relation.

import { NAME_ONLY, UNDOCUMENTED } from "../kernel/docs.ts";
import { columnComment, operationText, relationComment } from "./comments.ts";
import { DICTIONARY, type DictionaryRelation } from "./index.ts";
import { SHARED_COLUMNS } from "./shared.ts";

export const DEFAULT_SCHEMA = "apm";

export const CONVENTIONS: readonly string[] = [
  "One schema, apm by default (APM_DB_SCHEMA). Every table, view and column carries its description as a COMMENT, written by `apm-sync migrate` (which sync and backfill run).",
  "Columns are the API field names in snake_case, PascalCase and dotted keys too (HostHash -> host_hash, agent.version -> agent_version).",
  "Times are timestamptz in UTC; the API's epoch milliseconds and text dates are converted on the way in.",
  "Hashes, agent ids (oid) and project codes are signed bigint: the API's 32-bit hashes are often negative, and project codes exceed 2^31.",
  "Number columns accept a number or a numeric string (the API sends several numbers as strings); the conversion says where the docs show the string form.",
  "Fields without a column are kept in extra (jsonb) under their original key: nothing is dropped.",
  `"${UNDOCUMENTED}": neither the spec nor the service's docs say. A field the spec lists by name only (no meaning) is described by reading its name, marked "${NAME_ONLY}".`,
  "Units: the spec gives ms for the average response time (rtime) and percent for CPU use (cpu), the Apdex score is 0 to 1 by definition; the statistics' times and sizes have no documented unit.",
  "Rows of windowed tables belong to the window they were fetched for: total a day by summing its windows, and average as time_sum / count, never as an average of averages.",
  "Windowed fact tables are partitioned by calendar month (UTC) on their time column: query the table; its partitions (<table>_pYYYY_MM) are not described. `apm-sync prune` drops whole months past the retention (APM_RETENTION).",
  "Not described here: the job queue's schema (apm_queue next to apm), which belongs to graphile-worker.",
];

const columnsTotal = (relations: readonly DictionaryRelation[]) => relations.reduce((n, r) => n + r.columns.length, 0);

function summary(relations: readonly DictionaryRelation[]): string {
  const tables = relations.filter((r) => r.kind === "table").length;
  return `${tables} tables, ${relations.length - tables} views, ${columnsTotal(relations)} columns`;
}

/** Relations by group title, in the dictionary's order. */
function byGroup(relations: readonly DictionaryRelation[]): Map<string, DictionaryRelation[]> {
  const groups = new Map<string, DictionaryRelation[]>();
  for (const r of relations) groups.set(r.group, [...(groups.get(r.group) ?? []), r]);
  return groups;
}

export function dictionaryJson(relations: readonly DictionaryRelation[] = DICTIONARY): string {
  const content = {
    schema: DEFAULT_SCHEMA,
    conventions: CONVENTIONS,
    sharedColumns: SHARED_COLUMNS,
    relations: relations.map((r) => ({
      ...r,
      comment: relationComment(r),
      columns: r.columns.map((c) => ({ ...c, comment: columnComment(c) })),
    })),
  };
  return `${JSON.stringify(content, null, 2)}\n`;
}

export function dictionaryText(relations: readonly DictionaryRelation[] = DICTIONARY): string {
  const lines = [`apm-sync warehouse dictionary: schema ${DEFAULT_SCHEMA}; ${summary(relations)}`, ""];
  for (const c of CONVENTIONS) lines.push(`- ${c}`);
  for (const [group, members] of byGroup(relations)) {
    lines.push("", `== ${group} ==`);
    for (const r of members) {
      lines.push("", `${r.name} (${r.kind})`, `  ${relationComment(r)}`);
      const width = Math.max(...r.columns.map((c) => c.name.length));
      const typeWidth = Math.max(...r.columns.map((c) => c.type.length));
      for (const c of r.columns) lines.push(`  ${c.name.padEnd(width)}  ${c.type.padEnd(typeWidth)}  ${columnComment(c)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

const cell = (text: string | null) => (text ? text.replaceAll("|", "\\|") : "");
const code = (text: string | null) => (text ? `\`${text}\`` : "");

function markdownRelation(r: DictionaryRelation): string[] {
  const lines = [`### \`${r.name}\``, "", `${r.kind === "view" ? "View" : "Table"}. ${cell(r.description)}`];
  if (r.operations.length > 0) lines.push("", `Filled by ${r.operations.map((op) => `\`${operationText(op)}\``).join(", ")}.`);
  if (r.partitionedOn) lines.push("", `Partitioned by month (UTC) on \`${r.partitionedOn}\`.`);
  lines.push("", "| column | type | meaning | unit | API field | conversion |", "|---|---|---|---|---|---|");
  for (const c of r.columns) {
    const meaning = c.shared ? "see [shared columns](#shared-columns)" : cell(c.description);
    const conversion = c.shared ? "" : cell(c.conversion);
    lines.push(`| \`${c.name}\` | ${c.type} | ${meaning} | ${c.shared ? "" : cell(c.unit)} | ${code(c.field)} | ${conversion} |`);
  }
  return [...lines, ""];
}

export function dictionaryMarkdown(relations: readonly DictionaryRelation[] = DICTIONARY): string {
  const groups = byGroup(relations);
  const lines = [
    "# The warehouse: data dictionary",
    "",
    "<!-- Generated by `apm-sync schema --markdown` from the stream families (src/catalogue): edit those files, then",
    "     regenerate with `npm run -s cli -- schema --markdown > docs/warehouse.md` (a test compares). -->",
    "",
    `Schema \`${DEFAULT_SCHEMA}\`: ${summary(relations)}. The same text is in the database as comments`,
    "(`\\d+ apm.stat_transaction` in psql; Metabase and Grafana show them).",
    "",
    "## Conventions",
    "",
    ...CONVENTIONS.map((c) => `- ${c}`),
    "",
    "## Contents",
    "",
    ...[...groups].map(([group, members]) => `- ${group}: ${members.map((r) => `[\`${r.name}\`](#${r.name})`).join(", ")}`),
    "",
    "## Shared columns",
    "",
    "Described once; a table whose column means something else says so in its own table.",
    "",
    "| column | meaning | conversion |",
    "|---|---|---|",
    ...Object.entries(SHARED_COLUMNS).map(([name, c]) => `| \`${name}\` | ${cell(c.text)} | ${cell(c.conversion ?? null)} |`),
  ];
  for (const [group, members] of groups) lines.push("", `## ${group}`, "", ...members.flatMap(markdownRelation));
  return `${lines.join("\n").trimEnd()}\n`;
}

// What the warehouse remembers of change: the versions of every dimension row (`<table>_history`,
// one per content a row had, valid from one capture to the next that saw it otherwise), and the
// windows the server answered differently when they were fetched again (`restatements`).
import { sql } from "drizzle-orm";
import {
  bigserial,
  customType,
  doublePrecision,
  getTableConfig,
  index,
  type PgColumnBuilderBase,
  type PgTable,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { groupMembers, groupProjects, groups, projectMembers, projects } from "../../catalogue/account.ts";
import { agents } from "../../catalogue/agents.ts";
import { eventSettings } from "../../catalogue/event-settings.ts";
import { projectDetails } from "../../catalogue/project.ts";
import { i64, ts } from "../../kernel/sql-types.ts";
import { ledgerWindowColumns } from "../../kernel/tables.ts";
import { historyTableName, UNVERSIONED_COLUMNS, VERSIONED_TABLES } from "./versioned.ts";

/** A column of the history with the dimension column's exact SQL type (drizzle-kit writes it as is). */
const typed = (type: string) => customType<{ data: unknown }>({ dataType: () => type })();

const declared = new Set<string>();

/**
 * `<table>_history`: the dimension's columns but its first/last-seen and deleted markers, plus
 * valid_from and valid_to (null while the version is current); keyed by the row's key and
 * valid_from, and at most one current version per key.
 */
function historyOf(source: PgTable) {
  const config = getTableConfig(source);
  const table = config.name;
  const key = config.primaryKeys[0]?.columns.map((c) => c.name) ?? config.columns.filter((c) => c.primary).map((c) => c.name);
  const columns: Record<string, PgColumnBuilderBase> = {};
  for (const c of config.columns) {
    if (UNVERSIONED_COLUMNS.includes(c.name)) continue;
    const column = typed(c.getSQLType());
    columns[c.name] = key.includes(c.name) ? column.notNull() : column;
  }
  columns.valid_from = ts().notNull();
  columns.valid_to = ts();
  const name = historyTableName(table);
  declared.add(table);
  return pgTable(name, columns, (t) => {
    const col = (k: string) => (t as Record<string, never>)[k]!;
    return [
      primaryKey({ name: `${name}_pkey`, columns: [col(key[0]!), ...key.slice(1).map(col), col("valid_from")] }),
      uniqueIndex(`${name}_current_key`)
        .on(col(key[0]!), ...key.slice(1).map(col))
        .where(sql`"valid_to" IS NULL`),
    ];
  });
}

// Named exports: drizzle-kit finds a table only as an export of a schema file. The list is checked
// against the catalogue below: a new dimension stream without its history fails at load.
export const projectsHistory = historyOf(projects);
export const projectMembersHistory = historyOf(projectMembers);
export const groupsHistory = historyOf(groups);
export const groupMembersHistory = historyOf(groupMembers);
export const groupProjectsHistory = historyOf(groupProjects);
export const projectDetailsHistory = historyOf(projectDetails);
export const agentsHistory = historyOf(agents);
export const eventSettingsHistory = historyOf(eventSettings);

const undeclared = VERSIONED_TABLES.filter((t) => !declared.has(t));
if (undeclared.length > 0 || declared.size !== VERSIONED_TABLES.length)
  throw new Error(
    `src/db/schema/history.ts: the history tables must be those of the catalogue's dimension streams (${VERSIONED_TABLES.join(", ")}); ` +
      `add \`export const ... = historyOf(<the drizzle table of ${undeclared[0] ?? "?"}>)\` and run \`npx drizzle-kit generate\``,
  );

/**
 * A window fetched again whose rows differ from those it replaced (db/history/restatements.ts):
 * how many rows and how much of the stream's measure (catalogue `measure`) before and after.
 */
export const restatements = pgTable(
  "restatements",
  {
    id: bigserial({ mode: "number" }).primaryKey(),
    ...ledgerWindowColumns(),
    rows_before: i64().notNull(),
    rows_after: i64().notNull(),
    measure: text(),
    measure_before: doublePrecision(),
    measure_after: doublePrecision(),
    run_id: i64(),
    detected_at: ts().notNull().defaultNow(),
  },
  (t) => [index("restatements_detected_idx").on(t.detected_at), index("restatements_window_idx").on(t.stream, t.pcode, t.window_start)],
);

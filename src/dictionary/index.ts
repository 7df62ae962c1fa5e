// The data dictionary: every table and view of the warehouse schema with what each column means,
// its unit, the API field and operation it comes from. Tables and their column types come from the
// drizzle schema, the operations that fill a table from the catalogue, the words from the files of
// this folder. A table or column without words gets an empty description, which the tests refuse:
// a new stream adds its entry here next to its catalogue entry.

import { accountDocs } from "../catalogue/account.ts";
import { agentDocs } from "../catalogue/agents.ts";
import { eventDocs } from "../catalogue/events.ts";
import { OPERATIONS } from "../catalogue/index.ts";
import { projectDocs } from "../catalogue/project.ts";
import { rangeDocs } from "../catalogue/range.ts";
import { seriesDocs } from "../catalogue/series.ts";
import { statDocs } from "../catalogue/stats.ts";
import { historyDocs } from "../db/history/docs.ts";
import { rollupDocs } from "../db/rollups/docs.ts";
import { ledgerDocs } from "../db/schema/ledger.ts";
import { tableInfo, tableNames } from "../db/tables.ts";
import type { ColumnDoc, DocGroup, TableDoc } from "../kernel/docs.ts";
import { SHARED_COLUMNS } from "./shared.ts";
import { viewDocs } from "./views.ts";

/** In the order docs/warehouse.md shows them. */
export const DOC_GROUPS: readonly DocGroup[] = [
  accountDocs,
  projectDocs,
  agentDocs,
  eventDocs,
  rangeDocs,
  seriesDocs,
  statDocs,
  rollupDocs,
  historyDocs,
  ledgerDocs,
  viewDocs,
];

export interface DictionaryColumn {
  readonly name: string;
  readonly type: string;
  /** Empty when nothing describes the column (a test fails on it). */
  readonly description: string;
  readonly unit: string | null;
  readonly field: string | null;
  readonly conversion: string | null;
  /** Described once for all tables (shared.ts). */
  readonly shared: boolean;
}

export interface DictionaryOperation {
  readonly id: string;
  readonly method: string;
  readonly path: string;
}

export interface DictionaryRelation {
  readonly name: string;
  readonly kind: "table" | "view";
  readonly group: string;
  /** Empty when nothing describes the relation (a test fails on it). */
  readonly description: string;
  /** The catalogue operations whose stream writes the table. */
  readonly operations: readonly DictionaryOperation[];
  /** The time column a table is partitioned on by month (its partitions are not described: not for users). */
  readonly partitionedOn: string | null;
  readonly columns: readonly DictionaryColumn[];
}

/** Title of the group of tables that have no entry in any group. */
export const UNDESCRIBED = "Not described yet";

function column(name: string, type: string, doc: ColumnDoc | undefined, shared: boolean): DictionaryColumn {
  return {
    name,
    type,
    description: doc?.text ?? "",
    unit: doc?.unit ?? null,
    field: doc?.field ?? null,
    conversion: doc?.conversion ?? null,
    shared,
  };
}

function operationsOf(table: string): DictionaryOperation[] {
  return OPERATIONS.filter((op) => op.stream?.table === table).map((op) => ({ id: op.id, method: op.method, path: op.path }));
}

function drizzleTable(name: string, group: string, doc: TableDoc | undefined): DictionaryRelation {
  const columns = [...tableInfo(name).types].map(([col, type]) => {
    const own = doc?.columns[col];
    return column(col, type, own ?? SHARED_COLUMNS[col], own === undefined && SHARED_COLUMNS[col] !== undefined);
  });
  const partitionedOn = tableInfo(name).partitionColumn;
  return { name, kind: "table", group, description: doc?.description ?? "", operations: operationsOf(name), partitionedOn, columns };
}

function build(): DictionaryRelation[] {
  const out: DictionaryRelation[] = [];
  const described = new Set<string>();
  for (const group of DOC_GROUPS) {
    for (const [name, doc] of Object.entries(group.tables ?? {})) {
      described.add(name);
      // A name drizzle does not define is a stale entry: listed by staleEntries(), not built.
      if (tableNames().includes(name)) out.push(drizzleTable(name, group.title, doc));
    }
    for (const [name, doc] of Object.entries(group.declared ?? {})) {
      const columns = Object.entries(doc.columns).map(([col, c]) => column(col, c.type, c, false));
      out.push({
        name,
        kind: doc.kind,
        group: group.title,
        description: doc.description,
        operations: operationsOf(name),
        partitionedOn: null,
        columns,
      });
    }
  }
  for (const name of tableNames().filter((n) => !described.has(n))) out.push(drizzleTable(name, UNDESCRIBED, undefined));
  return out;
}

/** Every relation of the warehouse schema, described. */
export const DICTIONARY: readonly DictionaryRelation[] = build();

/** Entries that name a table or column the drizzle schema does not have (views are checked against a database). */
export function staleEntries(): string[] {
  const stale: string[] = [];
  for (const group of DOC_GROUPS) {
    for (const [name, doc] of Object.entries(group.tables ?? {})) {
      if (!tableNames().includes(name)) stale.push(name);
      else for (const col of Object.keys(doc.columns)) if (!tableInfo(name).types.has(col)) stale.push(`${name}.${col}`);
    }
  }
  const used = new Set(tableNames().flatMap((name) => [...tableInfo(name).types.keys()]));
  for (const col of Object.keys(SHARED_COLUMNS)) if (!used.has(col)) stale.push(`shared column ${col}`);
  return stale;
}

// The history tables (src/db/history/tables.ts): a version table per dimension, whose columns keep
// the dimension's meaning, and the restatements of fetched windows. See docs/history.md.

import { accountDocs } from "../../catalogue/account.ts";
import { agentDocs } from "../../catalogue/agents.ts";
import { eventDocs } from "../../catalogue/events.ts";
import { projectDocs } from "../../catalogue/project.ts";
import { type ColumnDoc, type DocGroup, STREAM, type TableDoc } from "../../kernel/docs.ts";
import { tableInfo } from "../tables.ts";
import { historyTableName, VERSIONED_TABLES } from "./versioned.ts";

const SOURCES: Readonly<Record<string, TableDoc | undefined>> = {
  ...accountDocs.tables,
  ...projectDocs.tables,
  ...agentDocs.tables,
  ...eventDocs.tables,
};

const VERSION: Readonly<Record<string, ColumnDoc>> = {
  valid_from: {
    text:
      "When this version began: the capture (sync run) that first saw the row with this content. A row stored before " +
      "the history existed starts at its first_seen_at (its content may have changed before unseen).",
  },
  valid_to: {
    text:
      "When this version ended: the capture that saw the row changed or no longer listed (deleted); null while it is " +
      "the row's current content. Versions of one row meet: the next one's valid_from is this valid_to.",
  },
  run_id: { text: "The run (sync_runs.id) that opened this version." },
  synced_at: { text: "When apm-sync wrote the row's content that opened this version (database clock)." },
};

function historyDoc(table: string): TableDoc {
  const source = SOURCES[table];
  const present = tableInfo(historyTableName(table)).types;
  const own = Object.entries(source?.columns ?? {}).filter(([c]) => present.has(c));
  return {
    description:
      `Versions of the rows of ${table}: one row per content a row had, valid from valid_from until valid_to. A sync ` +
      "adds a version only when a row's content changed (its bookkeeping columns do not count), and closes the version " +
      "of a row that is no longer listed, in the transaction that writes the list.",
    columns: { ...Object.fromEntries(own), ...VERSION },
  };
}

const restatements: TableDoc = {
  description:
    "Windows fetched again whose rows differ from those stored before (the server restated them: late data, a " +
    "recount): one row per such fetch, in the window's own transaction. A re-fetch that brings the same rows adds none.",
  columns: {
    id: { text: "Restatement id." },
    stream: { text: STREAM },
    pcode: { text: "Project code of the window." },
    partition: { text: "Partition of the stream: '' unless it has several (a host/port or tx filter)." },
    window_start: { text: "Start of the window fetched again." },
    window_end: { text: "End (exclusive) of the window fetched again." },
    rows_before: { text: "Rows the window held before the fetch (those it replaced).", unit: "count" },
    rows_after: { text: "Rows the window holds after the fetch.", unit: "count" },
    measure: { text: "The stream's measure column summed (catalogue `measure`, e.g. count); null for a stream without one." },
    measure_before: { text: "Sum of the measure over the rows before; null without a measure." },
    measure_after: { text: "Sum of the measure over the rows after; null without a measure." },
    run_id: { text: "The run (sync_runs.id) that fetched the window again." },
    detected_at: { text: "When the fetch was written (database clock)." },
  },
};

export const historyDocs: DocGroup = {
  title: "History: versions of dimension rows, restated windows",
  tables: { ...Object.fromEntries(VERSIONED_TABLES.map((t) => [historyTableName(t), historyDoc(t)])), restatements },
};

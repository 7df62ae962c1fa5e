// The text of each COMMENT ON: what BI tools (Metabase, Grafana, psql \d+) show next to a table or
// column. One sentence or three: meaning, unit, where the value comes from.
import type { CommentTarget } from "../db/applyComments.ts";
import { DICTIONARY, type DictionaryColumn, type DictionaryOperation, type DictionaryRelation } from "./index.ts";

/** `stat.transaction (POST /open/api/v2/stat/transaction)`. */
export function operationText(op: DictionaryOperation): string {
  return `${op.id} (${op.method} ${op.path})`;
}

export function relationComment(relation: DictionaryRelation): string {
  if (relation.description === "") return "";
  const filled = relation.operations.length > 0 ? ` Filled by ${relation.operations.map(operationText).join(", ")}.` : "";
  const partitioned = relation.partitionedOn ? ` Partitioned by month (UTC) on ${relation.partitionedOn}.` : "";
  return `${relation.description}${filled}${partitioned}`;
}

const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${text.endsWith(".") ? "" : "."}`;

export function columnComment(column: DictionaryColumn): string {
  if (column.description === "") return "";
  const parts = [column.description];
  if (column.unit) parts.push(`Unit: ${column.unit}.`);
  if (column.field) parts.push(`API field ${column.field}${column.conversion ? `: ${column.conversion}` : ""}.`);
  else if (column.conversion) parts.push(sentence(column.conversion));
  return parts.join(" ");
}

/** Every comment the dictionary gives, described ones only. */
export function dictionaryComments(relations: readonly DictionaryRelation[] = DICTIONARY): CommentTarget[] {
  return relations
    .flatMap((r) => [
      { relation: r.name, column: null, text: relationComment(r) },
      ...r.columns.map((c) => ({ relation: r.name, column: c.name, text: columnComment(c) })),
    ])
    .filter((t) => t.text !== "");
}

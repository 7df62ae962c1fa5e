// drizzle-kit generates the migrations but cannot declare a partitioned table: the tables declared
// partitioned by month (src/kernel/tables.ts partitionedByMonth) get their `PARTITION BY RANGE` here,
// added to the CREATE TABLE statements of a freshly generated migration (jobs/db-generate.ts), so
// that a new windowed table's migration is generated, not edited by hand.

/** drizzle-kit's separator between the statements of a migration. */
const BREAKPOINT = "--> statement-breakpoint";

/**
 * The migration `text` with `PARTITION BY RANGE ("column")` closing the CREATE TABLE of each table
 * of `partitioned` (table name -> partition column). Statements that have it already, and other
 * tables, are left as they are.
 */
export function withPartitionClauses(text: string, partitioned: ReadonlyMap<string, string>): string {
  return text
    .split(BREAKPOINT)
    .map((statement) => {
      const created = /^\s*CREATE TABLE (?:IF NOT EXISTS )?"([^"]+)"/.exec(statement);
      const column = created ? partitioned.get(created[1]!) : undefined;
      if (!column || /PARTITION BY/i.test(statement)) return statement;
      const end = statement.lastIndexOf(");");
      if (end < 0) throw new Error(`CREATE TABLE "${created![1]}": no closing ");" found in the generated migration`);
      return `${statement.slice(0, end)}) PARTITION BY RANGE ("${column}");${statement.slice(end + 2)}`;
    })
    .join(BREAKPOINT);
}

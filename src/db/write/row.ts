// A row as the writers take it: its values by column name (database names).
export type Row = Readonly<Record<string, unknown>>;

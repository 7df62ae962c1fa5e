// Reads an archive file back a row group at a time (hyparquet reads only that group's bytes from
// the file), as the archive's columns' values: the check before a partition is dropped and the
// rows `restore` loads both come from here.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { parquetMetadataAsync, parquetRead } from "hyparquet";
import { asyncBufferFromFile } from "hyparquet/src/node.js";
import { type ArchiveColumn, digestPart, type ParquetValue } from "./columns.ts";

type Row = readonly ParquetValue[];

/** The file's rows, one row group at a time, in file order; its columns must be `columns`. */
export async function* archiveRowGroups(path: string, columns: readonly ArchiveColumn[]): AsyncGenerator<Row[]> {
  const file = await asyncBufferFromFile(path);
  const metadata = await parquetMetadataAsync(file);
  const names = metadata.schema.slice(1).filter((e) => e.name !== "list" && e.name !== "element");
  const expected = columns.map((c) => c.name);
  const found = names.map((e) => e.name);
  if (found.join(",") !== expected.join(","))
    throw new Error(`${path}: its columns (${found.join(", ")}) are not the table's (${expected.join(", ")})`);
  let start = 0;
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows);
    let rows: Row[] = [];
    await parquetRead({
      file,
      metadata,
      rowStart: start,
      rowEnd: end,
      rowFormat: "array",
      parsers: { timestampFromMicroseconds: (v: bigint) => v } as never,
      onComplete: (r) => {
        rows = r as Row[];
      },
    });
    start = end;
    yield rows;
  }
}

/** Rows and content digest of a file, read back through the archive's columns. */
export async function readBack(path: string, columns: readonly ArchiveColumn[]): Promise<{ rows: number; contentSha256: string }> {
  const digest = createHash("sha256");
  let rows = 0;
  for await (const group of archiveRowGroups(path, columns)) {
    for (const row of group) digest.update(rowDigest(columns, row));
    rows += group.length;
  }
  return { rows, contentSha256: digest.digest("hex") };
}

/** One row's part of the content digest. */
export function rowDigest(columns: readonly ArchiveColumn[], row: Row): string {
  let out = "";
  for (let i = 0; i < columns.length; i++) out += digestPart(columns[i]!, row[i] ?? null);
  return `${out}\n`;
}

/** SHA-256 of a file's bytes (hex), streamed. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

// `npm run db:generate`: drizzle-kit generate (its arguments passed on: --name, --custom), then the
// tables declared partitioned get `PARTITION BY RANGE` in the new migration's CREATE TABLE
// statements (src/db/partitions/partitionedDdl.ts). The migrations stay generated, never hand-edited.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withPartitionClauses } from "../src/db/partitions/partitionedDdl.ts";
import { partitionedTables } from "../src/db/tables.ts";
import { packageRoot } from "../src/util/package-root.ts";
import { migrationsFolder } from "../src/warehouse/migrate.ts";

const folder = migrationsFolder();
const sqlFiles = () => new Set(readdirSync(folder).filter((f) => f.endsWith(".sql")));
const before = sqlFiles();
const kit = join(packageRoot(), "node_modules", "drizzle-kit", "bin.cjs");
const run = spawnSync(process.execPath, [kit, "generate", ...process.argv.slice(2)], { stdio: "inherit", cwd: packageRoot() });
if (run.status !== 0) process.exit(run.status ?? 1);
const partitioned = new Map(partitionedTables().map((t) => [t.name, t.partitionColumn]));
for (const file of [...sqlFiles()].filter((f) => !before.has(f))) {
  const path = join(folder, file);
  const text = readFileSync(path, "utf8");
  const out = withPartitionClauses(text, partitioned);
  if (out !== text) {
    writeFileSync(path, out);
    process.stdout.write(`db:generate: ${file}: partitioned tables declared PARTITION BY RANGE\n`);
  }
}

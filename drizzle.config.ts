// drizzle-kit: tables carry no schema qualifier, so the generated SQL runs in whatever schema
// the connection's search_path names (Config.dbSchema, default `apm`).
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  // The stream families (src/catalogue) declare their tables beside their operations; the rollups
  // and the dimensions' history keep theirs in their own folders; the bookkeeping tables live in
  // src/db/schema.
  schema: ["./src/catalogue/*.ts", "./src/db/rollups/tables.ts", "./src/db/history/tables.ts", "./src/db/schema/*.ts"],
  out: "./migrations",
});

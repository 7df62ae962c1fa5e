// drizzle-kit: tables carry no schema qualifier, so the generated SQL runs in whatever schema
// the connection's search_path names (Config.dbSchema, default `apm`).
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema/*.ts",
  out: "./migrations",
});

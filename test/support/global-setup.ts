// Integration-test database: DATABASE_URL when set, else a throw-away Postgres container.
// Migrates ONE template database per test run; each test file clones it (graphile-worker style),
// so files run in parallel on their own database without migrating again.

import postgres from "postgres";
import type { TestProject } from "vitest/node";
import { openDatabase } from "../../src/db/driver/connect.ts";
import { migrateDatabase } from "../../src/warehouse/migrate.ts";
import { buildCli } from "./cli-build.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of a database the tests may CREATE DATABASE from (admin rights). */
    adminUrl: string;
    /** Name of the migrated template database (schema `apm`). */
    templateDatabase: string;
  }
}

export const TEMPLATE_SCHEMA = "apm";

/** `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

async function startContainer(): Promise<{ url: string; stop: () => Promise<unknown> }> {
  try {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
    const container = await new PostgreSqlContainer("postgres:16-alpine").start();
    return { url: container.getConnectionUri(), stop: () => container.stop() };
  } catch (e) {
    throw new Error(
      "integration tests need Postgres: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres) " +
        `or make Docker available for testcontainers (${(e as Error).message})`,
    );
  }
}

export default async function setup(project: TestProject) {
  buildCli();
  const container = process.env.DATABASE_URL ? null : await startContainer();
  const adminUrl = process.env.DATABASE_URL || container!.url;
  const template = `apm_tpl_${process.pid}_${Date.now().toString(36)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${template}"`);
  } catch (e) {
    await admin.end();
    await container?.stop();
    throw new Error(`cannot create the template database on the test server: ${(e as Error).message}`);
  }
  const database = await openDatabase({ databaseUrl: withDatabase(adminUrl, template), dataDir: "", dbSchema: TEMPLATE_SCHEMA });
  try {
    await migrateDatabase(database);
  } finally {
    // CREATE DATABASE .. TEMPLATE refuses a template with open connections.
    await database.close();
  }
  project.provide("adminUrl", adminUrl);
  project.provide("templateDatabase", template);

  return async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`).catch(() => {});
    await admin.end();
    await container?.stop();
  };
}

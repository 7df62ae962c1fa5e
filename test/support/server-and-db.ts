// A tiny API server and a fresh test database for one describe block (started in beforeAll,
// closed and dropped in afterAll), for engine tests that answer the API by hand.
import { afterAll, beforeAll } from "vitest";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { type Handler, startServer, type TestServer } from "./http-server.ts";

export interface ServerAndDatabase {
  readonly server: TestServer;
  readonly db: TestDatabase;
}

/** Registers the hooks; the returned object is filled once beforeAll has run. */
export function useServerAndDatabase(answer: Handler): ServerAndDatabase {
  const handles = {} as { server: TestServer; db: TestDatabase };
  beforeAll(async () => {
    handles.server = await startServer(answer);
    handles.db = await createTestDatabase();
  });
  afterAll(async () => {
    await handles.server?.close();
    await handles.db?.drop();
  });
  return handles;
}

// Embedded database: PGlite in this process, served over a loopback socket so the rest of the
// code talks to it through postgres.js exactly as to a real server.
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { quoteIdent } from "./sqlText.ts";

export interface EmbeddedServer {
  readonly host: string;
  readonly port: number;
  readonly dataPath: string;
  stop(): Promise<void>;
}

/**
 * Starts PGlite stored under `<dataDir>/pgdata` on a free loopback port.
 * PGlite is ONE backend session shared by every socket client, and it ignores the startup
 * `search_path` parameter, so the search path is set once on that session here.
 */
export async function startEmbedded(dataDir: string, schema: string): Promise<EmbeddedServer> {
  const dataPath = resolve(dataDir, "pgdata");
  mkdirSync(dataPath, { recursive: true });
  const pg = await PGlite.create(dataPath);
  try {
    await pg.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}; SET search_path TO ${quoteIdent(schema)};`);
    const server = new PGLiteSocketServer({ db: pg, host: "127.0.0.1", port: 0 });
    await server.start();
    const conn = server.getServerConn();
    const port = Number(conn.slice(conn.lastIndexOf(":") + 1));
    return {
      host: "127.0.0.1",
      port,
      dataPath,
      stop: async () => {
        await server.stop();
        await pg.close();
      },
    };
  } catch (e) {
    await pg.close().catch(() => {});
    throw e;
  }
}

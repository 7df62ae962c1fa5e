// A TCP proxy between the engine and the shared test Postgres, so that a test can take "the
// database" away without touching the server other test files use: `cut(seconds)` destroys every
// open connection (as a restart or failover does) and refuses new ones for that long.

import type { AddressInfo } from "node:net";
import { connect, createServer, type Socket } from "node:net";

export interface PgProxy {
  /** The database URL with host and port replaced by the proxy's. */
  readonly url: string;
  /** Connections accepted so far. */
  connections(): number;
  cut(seconds: number): void;
  close(): Promise<void>;
}

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  const open = new Set<Socket>();
  let refuseUntil = 0;
  let accepted = 0;
  const server = createServer((client) => {
    if (Date.now() < refuseUntil) {
      client.destroy();
      return;
    }
    accepted++;
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      open.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        open.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    connections: () => accepted,
    cut: (seconds) => {
      refuseUntil = Date.now() + seconds * 1000;
      for (const s of open) s.destroy();
    },
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A postgres.js `debug` hook (openDatabase's option) that cuts the proxy as a statement leaves. */
export interface CutOnStatement {
  readonly debug: (connection: number, query: string) => void;
  /** Cuts made so far. */
  cuts(): number;
  /** Counts from 0 again: the next `times` statements holding the marker are cut again. */
  reset(): void;
}

/**
 * Cuts every connection of `proxy` (new ones dropped for `seconds`) when a statement holding
 * `marker` is sent, the first `times` times: the database goes away at that very instant.
 */
export function cutOnStatement(proxy: PgProxy, marker: string, times: number, seconds = 0.2): CutOnStatement {
  let cuts = 0;
  return {
    debug: (_connection, query) => {
      if (!query.includes(marker) || cuts >= times) return;
      cuts += 1;
      proxy.cut(seconds);
    },
    cuts: () => cuts,
    reset: () => {
      cuts = 0;
    },
  };
}

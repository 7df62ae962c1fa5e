// A TCP proxy in front of a server that holds every connection until `open()`: a CLI run pointed
// at it starts, opens its database and then waits on its first request for as long as a test
// needs it to hold what it holds (the embedded database's lock), without a sleep.
import { type AddressInfo, connect, createServer, type Socket } from "node:net";

export interface GateProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Connections accepted (held or passed through). */
  connections(): number;
  open(): void;
  close(): Promise<void>;
}

export async function startGateProxy(target: string): Promise<GateProxy> {
  const { hostname, port } = new URL(target);
  let release: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    release = resolve;
  });
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((client) => {
    accepted++;
    sockets.add(client);
    client.on("error", () => {});
    client.pause();
    void opened.then(() => {
      const upstream = connect(Number(port), hostname);
      sockets.add(upstream);
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => accepted,
    open: () => release(),
    close: async () => {
      release();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// A small forward proxy on node:http, for the tests of a user behind a corporate proxy. It speaks
// both forms a client may use: CONNECT tunnels (what undici's ProxyAgent does by default, for
// http targets too) and absolute-URI requests (`GET http://host/path`). It records every request
// it carries; inside a tunnel it reads the request lines going to the server.
import { createServer, request as httpRequest } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";

export interface ProxiedRequest {
  readonly via: "connect" | "absolute-uri";
  /** `host:port` the client asked for. */
  readonly target: string;
  readonly method: string;
  /** Path + query the server was asked for. */
  readonly path: string;
}

export interface ForwardProxy {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: ProxiedRequest[];
  /** CONNECT tunnels opened, by target. */
  readonly tunnels: string[];
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** Maps a requested host name to where the proxy really connects (e.g. `sandbox.invalid` -> 127.0.0.1). */
  readonly hosts?: Readonly<Record<string, string>>;
}

// Request lines inside a tunnel (a JSON body never holds " HTTP/1.1" + CRLF, so this meets only heads).
const REQUEST_LINE = /(GET|POST|PUT|DELETE|HEAD|OPTIONS) (\/\S*) HTTP\/1\.[01]\r\n/g;

export async function startForwardProxy(opts: ProxyOptions = {}): Promise<ForwardProxy> {
  const requests: ProxiedRequest[] = [];
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const resolveHost = (host: string) => opts.hosts?.[host] ?? host;

  const server = createServer((req, res) => {
    // Absolute-URI form: the request line carries the whole URL.
    const url = new URL(req.url ?? "/");
    requests.push({ via: "absolute-uri", target: url.host, method: req.method ?? "", path: `${url.pathname}${url.search}` });
    const upstream = httpRequest(
      {
        host: resolveHost(url.hostname),
        port: url.port || 80,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });

  server.on("connect", (req, client: Socket, head: Buffer) => {
    const target = req.url ?? "";
    tunnels.push(target);
    const [host = "", port = "80"] = target.split(/:(?=\d+$)/);
    const upstream = connect(Number(port), resolveHost(host), () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    let text = "";
    client.on("data", (chunk: Buffer) => {
      // Plain http through the tunnel: the request heads can be read (an https tunnel is opaque).
      text += chunk.toString("latin1");
      let last = 0;
      for (const m of text.matchAll(REQUEST_LINE)) {
        requests.push({ via: "connect", target, method: m[1]!, path: m[2]! });
        last = m.index + m[0].length;
      }
      // Keep an unfinished request line for the next chunk.
      text = text.slice(last).slice(-4096);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
      s.on("close", () => sockets.delete(s));
    }
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

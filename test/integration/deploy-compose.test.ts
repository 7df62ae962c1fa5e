// docker-compose.yml without a container engine: every apm-sync service's command and flags exist
// in the CLI (its own --help), its environment names are variables the config reads (recorded
// while the config loads), every bind mount is a file of the repository, and the pieces point at
// each other (Prometheus scrapes the worker's metrics port and loads the mounted rules, Grafana's
// provisioning finds its dashboards and every variable it reads, the push goes to the gateway).
// Safe by default: ports on 127.0.0.1 only, no password in the file (compose refuses to start
// without them, interpolated here as compose does), Grafana on a read-only login.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../../src/config.ts";
import { REPO_ROOT, runCli } from "../support/child-sync.ts";

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
  profiles?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition?: string }>;
}

interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const COMPOSE_TEXT = readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8");
const compose = parse(COMPOSE_TEXT, { merge: true }) as Compose;
const services = Object.entries(compose.services);
const ours = services.filter(([, s]) => s.build === "." || s.image?.startsWith("apm-sync"));
const readYaml = <T>(path: string) => parse(readFileSync(join(REPO_ROOT, path), "utf8")) as T;

/** Options of a help text (`--name` and whether it takes a value), and its sub-commands. */
function readHelp(text: string): { options: Map<string, boolean>; commands: string[] } {
  const options = new Map<string, boolean>();
  for (const m of text.matchAll(/^\s+(?:-\w, )?(--[a-z][a-z-]*)( <[^>]+>)?/gm)) options.set(m[1]!, Boolean(m[2]));
  const commands = [...(text.split("Commands:")[1] ?? "").matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1]!);
  return { options, commands };
}

/** Every environment variable the config reads: the env it is given records each name asked for. */
function configVariables(): Set<string> {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_, name) => {
      if (typeof name === "string") read.add(name);
      return undefined;
    },
  });
  loadConfig({ env });
  return read;
}

/** The target of a mount `source:target[:mode]`. */
const mountOf = (service: Service, source: string) =>
  service.volumes?.map((v) => v.split(":")).find(([s]) => s === source)?.[1] ?? `(no mount of ${source})`;

describe("docker-compose.yml", () => {
  const help = new Map<string, ReturnType<typeof readHelp>>();
  beforeAll(async () => {
    const top = await runCli(["--help"], {});
    help.set("", readHelp(top.stdout));
    for (const cmd of new Set(ours.map(([, s]) => s.command?.[0] ?? ""))) {
      if (!help.get("")!.commands.includes(cmd)) continue;
      help.set(cmd, readHelp((await runCli([cmd, "--help"], {})).stdout));
    }
  }, 60_000);

  it("runs Postgres, a scheduled worker with metrics, Prometheus, the Pushgateway, Grafana and the sandbox", () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      "grafana",
      "grafana-reader",
      "postgres",
      "prometheus",
      "pushgateway",
      "simulate",
      "sync",
      "worker",
    ]);
    expect(compose.services.worker?.environment?.APM_SCHEDULE).toBeTruthy();
    expect(compose.services.simulate?.profiles).toEqual(["sandbox"]);
  });

  it("every apm-sync service runs a command the CLI has, with flags it has and their values", () => {
    expect(ours.length).toBeGreaterThanOrEqual(3);
    expect(help.get("")!.commands).toContain("worker");
    for (const [name, s] of ours) {
      const [cmd, ...args] = s.command ?? [];
      expect({ name, command: help.get("")!.commands.includes(cmd ?? "") }).toEqual({ name, command: true });
      const options = new Map([...help.get("")!.options, ...help.get(cmd!)!.options]);
      for (let i = 0; i < args.length; i++) {
        const flag = args[i]!;
        expect({ name, flag, known: options.has(flag) }).toEqual({ name, flag, known: true });
        if (options.get(flag)) expect({ name, flag, value: args[++i]?.startsWith("--") === false }).toEqual({ name, flag, value: true });
      }
    }
  });

  it("every environment name of an apm-sync service is a variable the config reads", () => {
    const known = configVariables();
    expect(known.has("APM_METRICS_PORT") && known.has("APM_PUSHGATEWAY_URL") && known.has("DATABASE_URL")).toBe(true);
    for (const [name, s] of ours) {
      const unknown = Object.keys(s.environment ?? {}).filter((v) => !known.has(v));
      expect({ name, unknown }).toEqual({ name, unknown: [] });
    }
  });

  it("every bind mount is a file or directory of the repository; named volumes are declared", () => {
    for (const [name, s] of services)
      for (const v of s.volumes ?? []) {
        const source = v.split(":")[0]!;
        const exists = source.startsWith(".") ? existsSync(join(REPO_ROOT, source)) : source in (compose.volumes ?? {});
        expect({ name, source, exists }).toEqual({ name, source, exists: true });
      }
  });

  it("Prometheus scrapes the worker's metrics port and the gateway the sync pushes to, and loads the mounted rules", () => {
    const prometheus = compose.services.prometheus!;
    const config = readYaml<{ rule_files: string[]; scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[] }>(
      "deploy/prometheus/prometheus.yml",
    );
    expect(mountOf(prometheus, "./deploy/prometheus/prometheus.yml")).toBe("/etc/prometheus/prometheus.yml");
    expect(config.rule_files).toEqual([mountOf(prometheus, "./deploy/prometheus/apm-sync-rules.yml")]);
    const targets = config.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
    expect(targets).toContain(`worker:${compose.services.worker!.environment!.APM_METRICS_PORT}`);
    const push = new URL(String(compose.services.sync!.environment!.APM_PUSHGATEWAY_URL));
    expect(targets).toContain(push.host);
    for (const t of targets) expect(Object.keys(compose.services)).toContain(t.split(":")[0]);
  });

  it("Grafana's provisioning finds the dashboards and every variable it reads", () => {
    const grafana = compose.services.grafana!;
    expect(mountOf(grafana, "./deploy/grafana/provisioning")).toBe("/etc/grafana/provisioning");
    const provider = readYaml<{ providers: { options: { path: string } }[] }>("deploy/grafana/provisioning/dashboards/apm-sync.yml");
    expect(mountOf(grafana, "./deploy/grafana/dashboards")).toBe(provider.providers[0]!.options.path);
    const sources = readFileSync(join(REPO_ROOT, "deploy/grafana/provisioning/datasources/apm-sync.yml"), "utf8");
    const used = [...sources.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(0);
    for (const v of used) expect({ variable: v, set: v in (grafana.environment ?? {}) }).toEqual({ variable: v, set: true });
    // The warehouse Grafana reads is the database the workers write, through the read-only login.
    const db = new URL(String(interpolated(FILLED).services.worker!.environment!.DATABASE_URL));
    const env = grafana.environment!;
    expect([env.WAREHOUSE_HOST, env.WAREHOUSE_DATABASE]).toEqual([db.host, db.pathname.slice(1)]);
    expect(compose.services.postgres!.environment).toMatchObject({ POSTGRES_USER: db.username, POSTGRES_DB: db.pathname.slice(1) });
  });
});

/** `-c name=value` pairs of a PGOPTIONS text. */
const pgOptions = (text: string) => new Map([...text.matchAll(/-c (\S+?)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));

/** Variables of `.env.example` (commented-out lines left out). */
const ENV_EXAMPLE = new Map(
  readFileSync(join(REPO_ROOT, ".env.example"), "utf8")
    .split("\n")
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const),
);
const PASSWORDS = ["POSTGRES_PASSWORD", "GRAFANA_DB_PASSWORD", "GRAFANA_ADMIN_PASSWORD"];
const FILLED: Record<string, string> = {
  ...Object.fromEntries(ENV_EXAMPLE),
  POSTGRES_PASSWORD: "pg-secret-1",
  GRAFANA_DB_PASSWORD: "reader-secret-2",
  GRAFANA_ADMIN_PASSWORD: "admin-secret-3",
};

/**
 * The file as compose reads it with `env` (.env and the shell): `${V}`, `${V:-default}`,
 * `${V-default}`, `${V:?error}`, `${V?error}`, `$$`. Every required variable missing is an error.
 */
function interpolate(text: string, env: Readonly<Record<string, string>>): { text: string; missing: string[] } {
  const missing: string[] = [];
  const out = text.replace(/\$\$|\$\{(\w+)(?:(:?)([-?])([^}]*))?\}/g, (whole, name?: string, colon?: string, op?: string, arg?: string) => {
    if (whole === "$$") return "$";
    const value = env[name!];
    const unset = value === undefined || (colon === ":" && value === "");
    if (op === "?" && unset) missing.push(name!);
    return unset ? (op === "-" ? arg! : "") : value!;
  });
  return { text: out, missing: [...new Set(missing)] };
}

function interpolated(env: Readonly<Record<string, string>>): Compose {
  const { text, missing } = interpolate(COMPOSE_TEXT, env);
  if (missing.length > 0) throw new Error(`compose would refuse: ${missing.join(", ")}`);
  return parse(text, { merge: true }) as Compose;
}

describe("docker-compose.yml is safe by default", () => {
  it("publishes every port on 127.0.0.1 only, the Pushgateway not at all, Postgres on POSTGRES_HOST_PORT", () => {
    const published = services.flatMap(([name, s]) => (s.ports ?? []).map((p) => ({ name, p })));
    expect(published.map((x) => x.name).sort()).toEqual(["grafana", "postgres", "prometheus", "worker"]);
    for (const { name, p } of published) expect({ name, host: p.split(":")[0] }).toEqual({ name, host: "127.0.0.1" });
    expect(compose.services.pushgateway!.ports).toBeUndefined();
    expect(interpolated(FILLED).services.postgres!.ports).toEqual(["127.0.0.1:5432:5432"]);
    expect(interpolated({ ...FILLED, POSTGRES_HOST_PORT: "15432" }).services.postgres!.ports).toEqual(["127.0.0.1:15432:5432"]);
  });

  it("the worker's /metrics listens on the container's interfaces, published on 127.0.0.1", () => {
    const worker = compose.services.worker!;
    expect(worker.environment!.APM_METRICS_HOST).toBe("0.0.0.0");
    expect(worker.ports).toEqual([`127.0.0.1:${worker.environment!.APM_METRICS_PORT}:${worker.environment!.APM_METRICS_PORT}`]);
  });

  it("has no password: compose refuses to start until .env sets each one, and .env.example lists them empty", () => {
    for (const [name, s] of services)
      for (const [key, value] of Object.entries(s.environment ?? {}))
        if (/PASSWORD/.test(key))
          expect({ name, key, value: String(value) }).toEqual({ name, key, value: expect.stringMatching(/^\$\{\w+:\?[^}]+\}$/) });
    expect(COMPOSE_TEXT).not.toMatch(/\$\{\w*PASSWORD\w*:?-/);
    expect(COMPOSE_TEXT).not.toMatch(/:\/\/\w+:(?!\$\{)[^@\s]+@/);
    expect(interpolate(COMPOSE_TEXT, {}).missing.sort()).toEqual([...PASSWORDS].sort());
    expect(interpolate(COMPOSE_TEXT, Object.fromEntries(ENV_EXAMPLE)).missing.sort()).toEqual([...PASSWORDS].sort());
    for (const p of PASSWORDS) expect({ p, value: ENV_EXAMPLE.get(p) }).toEqual({ p, value: "" });
    expect(readFileSync(join(REPO_ROOT, ".gitignore"), "utf8").split("\n")).toContain(".env");
    // Filled in, every piece gets its password.
    const filled = interpolated(FILLED);
    expect(new URL(String(filled.services.worker!.environment!.DATABASE_URL)).password).toBe(FILLED.POSTGRES_PASSWORD);
    expect(filled.services.postgres!.environment!.POSTGRES_PASSWORD).toBe(FILLED.POSTGRES_PASSWORD);
    expect(filled.services.grafana!.environment!.GF_SECURITY_ADMIN_PASSWORD).toBe(FILLED.GRAFANA_ADMIN_PASSWORD);
  });

  it("Grafana reads the warehouse through a read-only login the stack creates before Grafana starts", () => {
    const filled = interpolated(FILLED);
    const reader = filled.services["grafana-reader"]!;
    const grafana = filled.services.grafana!;
    const owner = new URL(String(filled.services.worker!.environment!.DATABASE_URL)).username;
    const options = pgOptions(String(reader.environment!.PGOPTIONS));
    expect(grafana.environment!.WAREHOUSE_USER).toBe(options.get("apm_sync.reader_role"));
    expect(grafana.environment!.WAREHOUSE_USER).not.toBe(owner);
    expect(grafana.environment!.WAREHOUSE_PASSWORD).toBe(options.get("apm_sync.reader_password"));
    expect(options.get("apm_sync.schema")).toBe("apm");
    expect(grafana.depends_on?.["grafana-reader"]?.condition).toBe("service_completed_successfully");
    // It runs the mounted SQL as the owner, and the SQL reads exactly the settings it is given.
    const command = reader.command!;
    expect(command.slice(command.indexOf("-U"), command.indexOf("-U") + 2)).toEqual(["-U", owner]);
    const file = command[command.indexOf("-f") + 1]!;
    expect(mountOf(reader, "./deploy/postgres/grafana-reader.sql")).toBe(file);
    const sql = readFileSync(join(REPO_ROOT, "deploy/postgres/grafana-reader.sql"), "utf8");
    const read = [...sql.matchAll(/current_setting\('([\w.]+)'\)/g)].map((m) => m[1]!);
    expect(read.sort()).toEqual([...options.keys()].sort());
  });
});

// There is no Docker engine on the build machines, so this script performs the Dockerfile's own
// steps (read from the Dockerfile, not restated) in clean directories: each stage is a fresh
// directory standing in for the image root; WORKDIR, COPY (also --from=stage), ENV and RUN are
// carried out; USER and FROM's base image cannot be and are reported. Then the ENTRYPOINT runs
// with `--help` and `streams`, and the final stage is checked for what must (not) be in it.
//   npx tsx test/docker/dockerfile-steps.ts
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const lines = readFileSync(join(repo, "Dockerfile"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

interface Stage {
  name: string;
  root: string;
  workdir: string;
  env: Record<string, string>;
}
const stages: Stage[] = [];
const scratch = mkdtempSync(join(tmpdir(), "apm-docker-"));
const ignored = readFileSync(join(repo, ".dockerignore"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter(Boolean);
let entrypoint: string[] = [];
const notes: string[] = [];
const inRoot = (stage: Stage, path: string) => join(stage.root, path.startsWith("/") ? path : join(stage.workdir, path));

for (const line of lines) {
  const [instruction, ...rest] = line.split(/\s+/);
  const args = rest.join(" ");
  const stage = stages[stages.length - 1]!;
  switch (instruction) {
    case "FROM": {
      const name = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `stage${stages.length}`;
      const root = join(scratch, name);
      mkdirSync(root, { recursive: true });
      stages.push({ name, root, workdir: "/", env: {} });
      notes.push(`FROM ${args}: base image not pulled (the local node ${process.version} stands in)`);
      break;
    }
    case "WORKDIR":
      stage.workdir = args;
      mkdirSync(join(stage.root, args), { recursive: true });
      break;
    case "ENV": {
      // Docker splits `ENV key=value` at the first "=" (a value may hold more: --flag=160) and
      // drops the quotes around a value (ENV NODE_OPTIONS="--a=1 --b=2" sets --a=1 --b=2).
      const at = args.indexOf("=");
      const raw = at < 0 ? "" : args.slice(at + 1);
      const quoted = /^"(.*)"$/.exec(raw);
      stage.env[at < 0 ? args : args.slice(0, at)] = quoted ? quoted[1]!.replace(/\\(["\\])/g, "$1") : raw;
      break;
    }
    case "COPY": {
      const from = /--from=(\S+)/.exec(args)?.[1];
      const parts = args.replace(/--from=\S+\s*/, "").split(/\s+/);
      const dest = parts.pop()!;
      for (const src of parts) {
        const source = from ? join(stages.find((s) => s.name === from)!.root, src) : join(repo, src);
        const target = dest.endsWith("/") ? join(inRoot(stage, dest), src.split("/").pop()!) : inRoot(stage, dest);
        // The build context honours .dockerignore; a copy from a stage does not.
        cpSync(source, target, { recursive: true, filter: (p) => from !== undefined || !ignored.some((i) => p.split("/").includes(i)) });
      }
      break;
    }
    case "RUN": {
      process.stderr.write(`[${stage.name}] RUN ${args}\n`);
      // Container paths (/app/...) live under the stage root here.
      const command = args
        .replaceAll(` ${stage.workdir}`, ` ${join(stage.root, stage.workdir)}`)
        .replace(/chown \S+ /, "true ")
        // The image's cache is not this machine's: never clean the host's npm cache.
        .replace("npm cache clean --force", "true");
      execFileSync("bash", ["-c", command], {
        cwd: join(stage.root, stage.workdir),
        stdio: "inherit",
        env: { ...process.env, ...stage.env },
      });
      break;
    }
    case "USER":
      notes.push(`USER ${args}: not switched (needs the image)`);
      break;
    case "ENTRYPOINT":
      entrypoint = JSON.parse(args) as string[];
      break;
    case "CMD":
      break;
    default:
      throw new Error(`Dockerfile instruction not handled by this script: ${instruction}`);
  }
}

const final = stages[stages.length - 1]!;
const app = join(final.root, final.workdir);
const run = (...extra: string[]) =>
  execFileSync(entrypoint[0]!, [...entrypoint.slice(1), ...extra], {
    cwd: app,
    encoding: "utf8",
    env: { PATH: process.env.PATH, ...final.env },
  });
const problems: string[] = [];
if (!run("--help").includes("apm-sync")) problems.push("entrypoint --help does not print the usage");
if (!run("streams").includes("stat.transaction")) problems.push("entrypoint `streams` does not list the catalogue");
if (!existsSync(join(app, "dist", "src", "cli.js"))) problems.push("dist/src/cli.js is missing: the image would fall back to tsx");
if (!existsSync(join(app, "migrations", "meta", "_journal.json"))) problems.push("migrations/ is not shipped");
for (const dev of ["vitest", "typescript", "drizzle-kit", "@biomejs"])
  if (existsSync(join(app, "node_modules", dev))) problems.push(`dev dependency ${dev} is in the final stage`);
if (existsSync(join(app, "src")) || existsSync(join(app, "test"))) problems.push("sources or tests leaked into the final stage");
for (const n of notes) process.stderr.write(`note: ${n}\n`);
rmSync(scratch, { recursive: true, force: true });
if (problems.length > 0) {
  process.stderr.write(`dockerfile-steps: FAILED\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
  process.exit(1);
}
process.stdout.write("dockerfile-steps: every step ran; the entrypoint answers --help and streams; production dependencies only\n");

// pino logger to stderr (stdout stays clean for `--json` output). Credentials are redacted by
// field name as a second line of defence: the Secret class already prints `***`. Control
// characters in what is logged (server data in messages and fields) are written as escapes in
// every format (terminal-text.ts).
import { createRequire } from "node:module";
import { type DestinationStream, type Logger, pino } from "pino";
import { terminalSafe, terminalSafeJson, terminalSafeLines, terminalSafeValue } from "./terminal-text.ts";

export type { Logger } from "pino";

export type LogFormat = "pretty" | "json" | "plain";

export interface LoggerOptions {
  readonly level: string;
  readonly format: LogFormat;
  /** Extra field names to redact, e.g. the configured token/pcode header names. */
  readonly redactKeys?: readonly string[];
  /** Where lines go instead of stderr (tests capture into memory). Disables pretty printing. */
  readonly destination?: DestinationStream;
}

const DEFAULT_KEYS = ["token", "authorization", "apiToken", "x-service-token", "x-whatap-token", "headers"];

/** Redaction paths for a key at the top level and one level down (`err.headers`, `req.token`). */
export function redactPaths(keys: readonly string[]): string[] {
  const unique = [...new Set([...DEFAULT_KEYS, ...keys])];
  return unique.flatMap((k) => {
    const path = /^[A-Za-z_$][\w$]*$/.test(k) ? k : `["${k}"]`;
    return [path, path.startsWith("[") ? `*${path}` : `*.${path}`];
  });
}

/** json: pino JSON lines; pretty: pino-pretty on a TTY (plain text otherwise); plain: one-line text. */
export function createLogger(opts: LoggerOptions): Logger {
  const options = { level: opts.level, redact: { paths: redactPaths(opts.redactKeys ?? []), censor: "***" } };
  if (opts.destination) return pino(options, opts.format === "json" ? jsonStream(opts.destination) : plainStream(opts.destination));
  if (opts.format === "json") return pino(options, jsonStream(pino.destination({ fd: 2, sync: true })));
  const stderr = pino.destination({ fd: 2, sync: true });
  if (opts.format === "pretty" && process.stderr.isTTY) {
    const pretty = loadPretty();
    if (pretty)
      return pino(options, prettyStream(pretty({ destination: 2, sync: true, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname" })));
  }
  return pino(options, plainStream(stderr));
}

// pino-pretty is a dev dependency: a production install without it falls back to plain text.
function loadPretty(): ((o: Record<string, unknown>) => DestinationStream) | null {
  try {
    return createRequire(import.meta.url)("pino-pretty") as (o: Record<string, unknown>) => DestinationStream;
  } catch {
    return null;
  }
}

const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
const SKIP = new Set(["level", "time", "pid", "hostname", "msg"]);

/** `2024-05-01T10:00:00.000Z INFO message key=value ...`, one line per record, control characters escaped. */
export function formatPlain(line: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return `${terminalSafe(line.endsWith("\n") ? line.slice(0, -1) : line)}\n`;
  }
  const time = typeof rec.time === "number" ? new Date(rec.time).toISOString() : "";
  const fields = Object.entries(rec)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`);
  const text = [time, LEVELS[rec.level as number] ?? String(rec.level), rec.msg ?? "", ...fields].filter((s) => s !== "").join(" ");
  return `${terminalSafe(text)}\n`;
}

function plainStream(dest: DestinationStream): DestinationStream {
  return { write: (line: string) => dest.write(formatPlain(line)) };
}

// pino escapes C0 in its JSON; DEL, C1 (CSI 0x9B) and bidi controls it writes raw.
function jsonStream(dest: DestinationStream): DestinationStream {
  return { write: (line: string) => dest.write(terminalSafeJson(line)) };
}

// pino-pretty prints the message and string fields as they are: they are escaped before it reads them.
function prettyStream(dest: DestinationStream): DestinationStream {
  return {
    write: (line: string) => {
      let rec: unknown;
      try {
        rec = JSON.parse(line);
      } catch {
        return dest.write(`${terminalSafe(line.trimEnd())}\n`);
      }
      return dest.write(`${JSON.stringify(terminalSafeValue(rec))}\n`);
    },
  };
}

/** A command's result lines (summaries, plans, counts): what it prints, not what it logs. */
export interface Output {
  /** `text` as it is; with the JSON log format, `record` (or `{msg: text}`) as one JSON line like the log's. */
  print(text: string, record?: { readonly msg: string } & Readonly<Record<string, unknown>>, level?: "info" | "error"): void;
}

/**
 * Output to stdout (or stderr: the demo's narration). Not filtered by the log level: a scheduler
 * that asks for warnings only still gets the run's summary.
 */
export function createOutput(format: LogFormat, fd: 1 | 2 = 1): Output {
  if (format !== "json") {
    const stream = fd === 1 ? process.stdout : process.stderr;
    return { print: (text) => void stream.write(`${terminalSafeLines(text)}\n`) };
  }
  const json = pino({ level: "info" }, jsonStream(pino.destination({ fd, sync: true })));
  return {
    print: (text, record, level = "info") => {
      const { msg, ...fields } = record ?? { msg: text };
      json[level](fields, msg);
    },
  };
}

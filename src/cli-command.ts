// commander's Command, telling every problem of a command line at once. commander stops at the
// first: `backfill --form 2d` said only that --from was missing, and the user fixed that to learn
// of the typo on the next try. Here a command's missing required options and all its unknown
// flags are gathered and said together in one error (exit 2, as before).
import { Command, type Option } from "commander";
import { didYouMean } from "./config/suggest.ts";

export class UsageCommand extends Command {
  #unknown: string[] = [];
  #missing: string[] = [];

  /** Subcommands are UsageCommands too. */
  override createCommand(name?: string): UsageCommand {
    return new UsageCommand(name);
  }

  override parseOptions(argv: string[]): { operands: string[]; unknown: string[] } {
    const parsed = super.parseOptions(argv);
    this.#unknown = parsed.unknown;
    return parsed;
  }

  /** Called by commander for each required option that has no value: noted, said with the rest. */
  missingMandatoryOptionValue(option: Option): void {
    this.#missing.push(`required option '${option.flags}' not specified`);
  }

  /** Called by commander with the first unknown flag, after the required options were checked. */
  unknownOption(_flag: string): never {
    const known = this.#knownFlags();
    const unknown = this.#unknown.filter((a) => a.startsWith("-"));
    this.#fail([...unknown.map((f) => `unknown option '${f}'${didYouMean(f.replace(/=.*$/, ""), known)}`), ...this.#missing]);
  }

  /** Before the action runs: the required options missing when every flag was known. */
  failOnProblems(): void {
    if (this.#missing.length > 0) this.#fail(this.#missing);
  }

  #fail(problems: readonly string[]): never {
    return this.error(`error: ${problems.join("; ")}`, { code: "commander.usage", exitCode: 2 });
  }

  /** The long flags this command takes, its ancestors' (global options) included. */
  #knownFlags(): string[] {
    const flags = ["--help"];
    for (let cmd: Command | null = this; cmd; cmd = cmd.parent) {
      for (const option of cmd.options) if (option.long && !option.hidden) flags.push(option.long);
    }
    return flags;
  }
}

// Placeholder: the `streams` command is built by its issue.
export async function run(_opts: Record<string, unknown>, _global: Record<string, unknown>): Promise<number> {
  process.stderr.write("apm-sync streams: not implemented yet\n");
  return 1;
}

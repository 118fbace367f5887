// The `authority` command line: dispatches subcommands.
export async function main(argv: readonly string[]): Promise<number> {
  process.stdout.write(`authority: no commands yet (${argv.join(" ")})\n`);
  return 0;
}

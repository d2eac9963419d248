/** Placeholder entry for `strata evals`; replaced by the evaluation suite tooling (issue #7). */
export async function runEvalsCommand(args: string[]): Promise<number> {
  process.stderr.write(`strata evals: unknown subcommand ${JSON.stringify(args[0] ?? '')}\n`);
  return 2;
}

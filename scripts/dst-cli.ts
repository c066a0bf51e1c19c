/**
 * What the DST runner scripts (dt-dst.ts, rkv-dst.ts) share on their command line: a usage error
 * that exits 2 with the usage, parsing with --help, integer options checked against a lower bound,
 * and the seed range (--seed N, or --from N --seeds COUNT).
 */

export function commandLineHelpers(
  script: string,
  usage: string,
): {
  fail(message: string): never;
  integer(value: string | undefined, name: string, min: number): number | undefined;
  /** Runs `parse`: its error is a usage error; with --help, prints the usage and exits 0. */
  parse<T extends { readonly values: { readonly help?: boolean | undefined } }>(parse: () => T): T;
  /** One seed (`--seed N`), or `--seeds COUNT` (default 200) from `--from N` (default 1). */
  seedRange(values: {
    readonly seed?: string | undefined;
    readonly from?: string | undefined;
    readonly seeds?: string | undefined;
  }): { readonly single: number | undefined; readonly from: number; readonly count: number };
} {
  const fail = (message: string): never => {
    process.stderr.write(`${script}: ${message}\n${usage}\n`);
    process.exit(2);
  };
  const integer = (value: string | undefined, name: string, min: number): number | undefined => {
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!(Number.isSafeInteger(parsed) && parsed >= min))
      fail(`--${name} must be an integer ≥ ${min}, got ${value}`);
    return parsed;
  };
  return {
    fail,
    integer,
    parse(parse) {
      let parsed: ReturnType<typeof parse>;
      try {
        parsed = parse();
      } catch (error) {
        return fail(error instanceof Error ? error.message : String(error));
      }
      if (parsed.values.help === true) {
        process.stdout.write(`${usage}\n`);
        process.exit(0);
      }
      return parsed;
    },
    seedRange(values) {
      const single = integer(values.seed, 'seed', 0);
      const from = single ?? integer(values.from, 'from', 0) ?? 1;
      const count = single === undefined ? (integer(values.seeds, 'seeds', 1) ?? 200) : 1;
      return { single, from, count };
    },
  };
}

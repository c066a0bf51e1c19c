/**
 * What the DST runner scripts (dt-dst.ts, rkv-dst.ts) share on their command line: a usage error
 * that exits 2 with the usage, and integer options checked against a lower bound.
 */

export function commandLineHelpers(
  script: string,
  usage: string,
): {
  fail(message: string): never;
  integer(value: string | undefined, name: string, min: number): number | undefined;
} {
  const fail = (message: string): never => {
    process.stderr.write(`${script}: ${message}\n${usage}\n`);
    process.exit(2);
  };
  return {
    fail,
    integer(value, name, min) {
      if (value === undefined) return undefined;
      const parsed = Number(value);
      if (!(Number.isSafeInteger(parsed) && parsed >= min))
        fail(`--${name} must be an integer ≥ ${min}, got ${value}`);
      return parsed;
    },
  };
}

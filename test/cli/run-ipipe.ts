import { spawnSync } from 'node:child_process';

const BIN = new URL('../../bin/ipipe.mjs', import.meta.url).pathname;

/** Runs the installed entry point (bin/ipipe.mjs) to completion; `code` is null if it was killed at `timeoutMs`. */
export function runIpipe(
  args: readonly string[],
  timeoutMs = 60_000,
): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: timeoutMs });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

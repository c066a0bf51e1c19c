/**
 * `npm run bench`: runs every benchmark, each in its own process (so one benchmark's JIT state
 * and garbage do not colour the next), in a fixed order, printing each one's table with the
 * baselines it measured in the same run. `npm run bench -- <name>…` runs only those.
 *
 * Numbers swing with machine load (2 vCPUs here): read the ratios, and see bench/RESULTS.md for
 * recorded runs with the command and the machine.
 */

import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const BENCHES = [
  'sched',
  'dmo',
  'event-kernel',
  'sim',
  'ring',
  'udp',
  'metrics',
  'migration-copy',
  'live-migration',
  'resp',
  'lsm',
] as const;
const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = wanted.filter((name) => !(BENCHES as readonly string[]).includes(name));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: unknown benchmark(s) ${unknown.join(', ')}; choose from ${BENCHES.join(', ')}\n`,
  );
  process.exit(2);
}
const selected = wanted.length > 0 ? BENCHES.filter((b) => wanted.includes(b)) : BENCHES;

process.stdout.write(
  `# ipipe benchmarks — node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ` +
    `${new Date().toISOString().slice(0, 10)}\n`,
);
let failed = false;
for (const name of selected) {
  process.stdout.write(`\n## ${name}\n`);
  const file = fileURLToPath(new URL(`./${name}.bench.ts`, import.meta.url));
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', file], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed = true;
    process.stderr.write(`bench: ${name} exited with ${result.status}\n`);
  }
}
process.exitCode = failed ? 1 : 0;

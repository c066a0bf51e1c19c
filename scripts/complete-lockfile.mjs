#!/usr/bin/env node
// The npm mirror these machines use has holes: some packages' platform-specific optional
// dependencies (e.g. @biomejs/cli-darwin-arm64) answer 404, so `npm install` leaves them out of
// package-lock.json and `npm ci` then refuses the lockfile as "out of sync". This adds the
// missing entries (optional, for their platform only, never downloaded on this one) from the
// platform encoded in their names. Run after any `npm install` that rewrites the lockfile.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const PLATFORM =
  /-(android|darwin|linux|win32|freebsd|openbsd|netbsd|sunos|aix)-(arm64|x64|arm|ia32|ppc64|s390x|riscv64|loong64|mips64el)(-musl)?$/;
const added = [];
for (const [key, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const target = `node_modules/${name}`;
    if (packages[target]) continue;
    const match = PLATFORM.exec(name);
    if (!match) continue;
    const [, os, cpu, musl] = match;
    packages[target] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(os === 'linux' ? { libc: [musl ? 'musl' : 'glibc'] } : {}),
      optional: true,
      os: [os],
    };
    added.push(`${target} (from ${key || 'root'})`);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(added.length ? `added:\n  ${added.join('\n  ')}\n` : 'lockfile complete\n');

// `npm run build` step: tsc emits only what it compiles, so copy the plain-JavaScript files that
// live beside the sources (the worker bootstrap, src/**/*.mjs) into dist/ at the same paths.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, process.argv[2] ?? 'dist');

function* assets(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* assets(path);
    else if (entry.name.endsWith('.mjs')) yield path;
  }
}

let copied = 0;
for (const file of assets(src)) {
  const target = join(dist, relative(src, file));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(file, target);
  copied++;
}
process.stdout.write(`copied ${copied} asset(s) into ${relative(root, dist) || '.'}\n`);

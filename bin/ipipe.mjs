#!/usr/bin/env node
// Entry point of the installed `ipipe` command. A built package runs dist/; a clone without a
// build runs the TypeScript sources through tsx (a devDependency), so `npx ipipe` works in both.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'main.js');
let entry = built;
if (!existsSync(built)) {
  const { register } = await import('tsx/esm/api');
  register();
  entry = join(root, 'src', 'cli', 'main.ts');
} else {
  // A built package still serves a user's .ts actor modules when tsx is installed.
  try {
    const { register } = await import('tsx/esm/api');
    register();
  } catch {
    // No tsx: actor modules must be JavaScript.
  }
}
const { runCli } = await import(pathToFileURL(entry).href);
await runCli(process.argv.slice(2));

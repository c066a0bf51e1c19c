/**
 * Bad input to the LSM engine: oversized keys and values (configurable limits), bad options, a
 * corrupt or truncated SSTable, a corrupt or missing manifest, a missing table — each refused
 * with a typed error that names the file — and a data directory in use by a second engine in this
 * process or by a real second process (the LOCK file), including a stale LOCK left by a dead one.
 *
 * The corruption sweep flips every byte of a small table in turn: each flip must be caught (at
 * open, or when the damaged block is read) and no read may ever return a wrong value.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  isLsmError,
  type LsmCorruptTableError,
  LsmEngine,
  type LsmEngineOptions,
  type LsmFileSystem,
  MemoryFileSystem,
  NodeFileSystem,
} from '../../../../src/apps/rkv/lsm/index.ts';
import { fromHex, hex, scanHex, tempDirectory, throwsLsm, utf8 } from './helpers.ts';

function options(
  fileSystem: LsmFileSystem,
  directory: string,
  extra: Partial<LsmEngineOptions> = {},
): LsmEngineOptions {
  return { directory, fileSystem, blockBytes: 256, memtableBytes: 64 << 10, ...extra };
}

function tableFiles(directory: string): string[] {
  return readdirSync(directory).filter((name) => name.endsWith('.sst'));
}

test('oversized keys and values are refused with the configured limits, and nothing is written', () => {
  const engine = LsmEngine.open(
    options(new MemoryFileSystem(), '/db', { maxKeyBytes: 16, maxValueBytes: 100 }),
  );
  try {
    engine.put(utf8('k'.repeat(16)), new Uint8Array(100)); // exactly at both limits: accepted
    const before = engine.lastSequence;
    const keyError = throwsLsm(
      () => engine.put(utf8('k'.repeat(17)), Uint8Array.of(1)),
      'IPIPE_ERR_LSM_KEY_TOO_LARGE',
    );
    assert.match(keyError.message, /17 bytes exceeds the limit of 16 bytes.*maxKeyBytes/);
    throwsLsm(() => engine.delete(utf8('k'.repeat(17))), 'IPIPE_ERR_LSM_KEY_TOO_LARGE');
    const valueError = throwsLsm(
      () => engine.put(utf8('k'), new Uint8Array(101)),
      'IPIPE_ERR_LSM_VALUE_TOO_LARGE',
    );
    assert.match(valueError.message, /101 bytes exceeds the limit of 100 bytes.*maxValueBytes/);
    assert.equal(engine.lastSequence, before, 'a refused write takes no sequence number');
    assert.equal(engine.get(utf8('k')), undefined);
    assert.equal(engine.get(utf8('k'.repeat(17))), undefined);
    assert.equal(scanHex(engine).length, 1);
    // Sequences supplied by the caller must increase.
    throwsLsm(() => engine.put(utf8('a'), utf8('b'), { sequence: before }), 'IPIPE_ERR_LSM_INVALID_SEQUENCE');
  } finally {
    engine.close();
  }
});

test('options outside their ranges are refused naming the option; nothing is created', () => {
  const fs = new MemoryFileSystem();
  for (const [bad, option] of [
    [{ maxKeyBytes: 0 }, 'maxKeyBytes'],
    [{ blockBytes: 100 }, 'blockBytes'],
    [{ bloomBitsPerKey: 33 }, 'bloomBitsPerKey'],
    [{ levelSizeRatio: 1 }, 'levelSizeRatio'],
    [{ levelCount: 1 }, 'levelCount'],
    [{ memtableBytes: 10 }, 'memtableBytes'],
    [{ maxValueBytes: 1.5 }, 'maxValueBytes'],
  ] as const) {
    const error = throwsLsm(
      () => LsmEngine.open(options(fs, '/db', bad)),
      'IPIPE_ERR_LSM_INVALID_OPTIONS',
      option,
    );
    assert.match(error.message, new RegExp(`LSM option ${option}:`));
    // The lock was released: a correct open works at once.
    LsmEngine.open(options(fs, '/db')).close();
  }
  // levelCount is part of the directory: a different one is refused later.
  LsmEngine.open(options(fs, '/five', { levelCount: 5 })).close();
  const levels = throwsLsm(
    () => LsmEngine.open(options(fs, '/five', { levelCount: 6 })),
    'IPIPE_ERR_LSM_INVALID_OPTIONS',
  );
  assert.match(levels.message, /created with 5 levels/);
  LsmEngine.open(options(fs, '/five')).close();
  throwsLsm(
    () => LsmEngine.open(options(fs, '/other', { createIfMissing: false })),
    'IPIPE_ERR_LSM_INVALID_OPTIONS',
  );
});

/** A store with one flushed table of 60 keys; returns the expected contents. */
function buildStore(fileSystem: LsmFileSystem, directory: string): Map<string, string> {
  const expected = new Map<string, string>();
  const engine = LsmEngine.open(options(fileSystem, directory));
  for (let i = 0; i < 60; i++) {
    const key = utf8(`key-${String(i).padStart(3, '0')}`);
    const value = utf8(`value-${i}-`.padEnd(20, 'x'));
    engine.put(key, value);
    expected.set(hex(key), hex(value));
  }
  engine.close();
  return expected;
}

function readWhole(fileSystem: LsmFileSystem, path: string): Uint8Array {
  const file = fileSystem.openRead(path);
  const bytes = new Uint8Array(file.sizeBytes());
  file.read(bytes, 0, bytes.length, 0);
  file.close();
  return bytes;
}

function replaceWhole(fileSystem: LsmFileSystem, path: string, bytes: Uint8Array): void {
  const file = fileSystem.create(path);
  file.write(bytes, 0, bytes.length, 0);
  file.close();
}

test('every single-byte flip of an SSTable is caught (at open or on read); no wrong value is ever served', () => {
  // The in-memory disk keeps the sweep fast; the same bytes go to real files below.
  const fs = new MemoryFileSystem();
  const expected = buildStore(fs, '/db');
  const table = fs.list('/db').find((name) => name.endsWith('.sst'));
  assert.ok(table !== undefined);
  const path = `/db/${table}`;
  const original = readWhole(fs, path);
  let refusedAtOpen = 0;
  let refusedAtRead = 0;
  for (let offset = 0; offset < original.length; offset++) {
    const damaged = original.slice();
    damaged[offset] = damaged[offset]! ^ 0x41;
    replaceWhole(fs, path, damaged);
    let engine: LsmEngine;
    try {
      engine = LsmEngine.open(options(fs, '/db', { blockCacheBytes: 0 }));
    } catch (error) {
      assert.ok(isLsmError(error, 'IPIPE_ERR_LSM_CORRUPT_TABLE'), `byte ${offset}: ${String(error)}`);
      assert.ok((error as LsmCorruptTableError).file === path && (error as Error).message.includes(path));
      refusedAtOpen++;
      continue;
    }
    let caught = false;
    try {
      for (const [key, value] of expected) {
        try {
          const got = engine.get(fromHex(key));
          assert.ok(got !== undefined && hex(got) === value, `byte ${offset}: wrong value for ${key}`);
        } catch (error) {
          if (!isLsmError(error, 'IPIPE_ERR_LSM_CORRUPT_TABLE')) throw error;
          assert.ok((error as Error).message.includes(path));
          caught = true;
        }
      }
      try {
        assert.deepEqual(scanHex(engine), [...expected].sort(), `byte ${offset}: scan`);
      } catch (error) {
        if (!isLsmError(error, 'IPIPE_ERR_LSM_CORRUPT_TABLE')) throw error;
        caught = true;
      }
    } finally {
      engine.close({ flush: false });
    }
    assert.ok(caught, `byte ${offset} of ${original.length} was flipped and nothing noticed`);
    refusedAtRead++;
  }
  assert.equal(refusedAtOpen + refusedAtRead, original.length);
  assert.ok(refusedAtOpen > 0 && refusedAtRead > 0, `${refusedAtOpen} at open, ${refusedAtRead} at read`);
});

test('on real files: a damaged data block is refused at open with verifyDataBlocksOnOpen; a truncated table always', () => {
  const directory = tempDirectory();
  try {
    buildStore(new NodeFileSystem(), directory.path);
    const [table] = tableFiles(directory.path);
    const path = `${directory.path}/${table}`;
    const original = readFileSync(path);
    const damaged = Buffer.from(original);
    damaged[10] = damaged[10]! ^ 0x41; // inside the first data block
    writeFileSync(path, damaged);
    const open = (extra: Partial<LsmEngineOptions> = {}) =>
      LsmEngine.open(options(new NodeFileSystem(), directory.path, extra));
    throwsLsm(() => open({ verifyDataBlocksOnOpen: true }), 'IPIPE_ERR_LSM_CORRUPT_TABLE');
    const lazy = open(); // metadata intact: opens, and refuses the block when it is read
    try {
      throwsLsm(() => lazy.get(utf8('key-000')), 'IPIPE_ERR_LSM_CORRUPT_TABLE');
    } finally {
      lazy.close();
    }
    writeFileSync(path, original);
    truncateSync(path, original.length - 7);
    const error = throwsLsm(() => open(), 'IPIPE_ERR_LSM_CORRUPT_TABLE');
    assert.ok(error.message.includes(path), error.message);
  } finally {
    directory.remove();
  }
});

test('a corrupt, truncated or missing manifest, or a missing table, refuses the store naming the file', () => {
  const directory = tempDirectory();
  try {
    const expected = buildStore(new NodeFileSystem(), directory.path);
    const manifest = `${directory.path}/MANIFEST`;
    const original = readFileSync(manifest);
    const open = () => LsmEngine.open(options(new NodeFileSystem(), directory.path));
    for (const offset of [0, 9, 13, 20, original.length - 10, original.length - 1]) {
      const damaged = Buffer.from(original);
      damaged[offset] = damaged[offset]! ^ 0x10;
      writeFileSync(manifest, damaged);
      const error = throwsLsm(open, 'IPIPE_ERR_LSM_CORRUPT_MANIFEST', `byte ${offset}`);
      assert.ok(error.message.includes(manifest), error.message);
    }
    writeFileSync(manifest, original.subarray(0, original.length - 3));
    throwsLsm(open, 'IPIPE_ERR_LSM_CORRUPT_MANIFEST', 'truncated');
    writeFileSync(manifest, original);
    const [table] = tableFiles(directory.path);
    const tableBytes = readFileSync(`${directory.path}/${table}`);
    // The manifest gone while tables remain: refused, never opened as an empty store.
    rmSync(manifest);
    throwsLsm(open, 'IPIPE_ERR_LSM_CORRUPT_MANIFEST', 'manifest missing');
    writeFileSync(manifest, original);
    rmSync(`${directory.path}/${table}`);
    const missing = throwsLsm(open, 'IPIPE_ERR_LSM_MISSING_TABLE');
    assert.ok(missing.message.includes(`${directory.path}/${table}`), missing.message);
    // Restored: the store opens and holds its data again (the refusals changed nothing).
    writeFileSync(`${directory.path}/${table}`, tableBytes);
    const engine = open();
    try {
      assert.deepEqual(scanHex(engine), [...expected].sort());
    } finally {
      engine.close();
    }
  } finally {
    directory.remove();
  }
});

test('a data directory in use by a second engine in this process is refused; free again after close', () => {
  for (const fileSystem of [new MemoryFileSystem(), new NodeFileSystem()]) {
    const directory = tempDirectory();
    try {
      const path = fileSystem instanceof MemoryFileSystem ? '/db' : directory.path;
      const first = LsmEngine.open(options(fileSystem, path));
      first.put(utf8('a'), utf8('1'));
      const error = throwsLsm(() => LsmEngine.open(options(fileSystem, path)), 'IPIPE_ERR_LSM_LOCKED');
      assert.match(error.message, new RegExp(`in use by this process ${process.pid}`));
      // The refused open touched nothing: the first engine goes on.
      first.put(utf8('b'), utf8('2'));
      first.close();
      const second = LsmEngine.open(options(fileSystem, path));
      assert.deepEqual(scanHex(second), [
        [hex(utf8('a')), hex(utf8('1'))],
        [hex(utf8('b')), hex(utf8('2'))],
      ]);
      second.close();
    } finally {
      directory.remove();
    }
  }
});

const here = fileURLToPath(new URL('.', import.meta.url));
const engineModule = fileURLToPath(new URL('../../../../src/apps/rkv/lsm/index.ts', import.meta.url));

/** Runs a real second process that tries to open `directory` and reports the outcome as JSON. */
function openInChildProcess(directory: string): {
  outcome: string;
  code?: string;
  holderPid?: number;
  message?: string;
} {
  const script = `
    const { LsmEngine } = await import(${JSON.stringify(engineModule)});
    try {
      const engine = LsmEngine.open({ directory: ${JSON.stringify(directory)} });
      engine.close();
      console.log(JSON.stringify({ outcome: 'opened' }));
    } catch (error) {
      console.log(JSON.stringify({ outcome: 'refused', code: error.code, holderPid: error.holderPid, message: error.message }));
    }`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: here,
    encoding: 'utf8',
    timeout: 15_000,
  });
  assert.equal(child.status, 0, `child failed: ${child.stderr}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}');
}

test('a data directory in use by another process is refused (LOCK file); a dead holder’s LOCK is taken over', () => {
  const directory = tempDirectory();
  try {
    const engine = LsmEngine.open(options(new NodeFileSystem(), directory.path));
    const refused = openInChildProcess(directory.path);
    assert.equal(refused.outcome, 'refused');
    assert.equal(refused.code, 'IPIPE_ERR_LSM_LOCKED');
    assert.equal(refused.holderPid, process.pid);
    assert.ok(refused.message?.includes(`${directory.path}/LOCK`), refused.message);
    engine.close();
    assert.equal(openInChildProcess(directory.path).outcome, 'opened');
    // A LOCK naming a process that no longer runs (a crashed holder) does not keep the store shut.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    writeFileSync(`${directory.path}/LOCK`, `${Number(dead.stdout)}\n`);
    const reopened = LsmEngine.open(options(new NodeFileSystem(), directory.path));
    assert.equal(readFileSync(`${directory.path}/LOCK`, 'utf8').trim(), String(process.pid));
    reopened.close();
  } finally {
    directory.remove();
  }
});

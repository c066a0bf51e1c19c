/**
 * `ipipe cluster up rkv` / `cluster status` / `cluster down` as a user runs them: the foreground
 * supervisor prints one JSON document (with --json) naming each replica's pid, port and role; a
 * client can use the RESP port at once; `cluster down` finds the processes through the state file
 * and stops them (the supervisor exits 0 on SIGTERM); `down` with nothing running exits 1; a
 * second `up` on a directory in use exits 3 with IPIPE_ERR_CLUSTER_DATA_DIR_IN_USE.
 * (Restarts on the same directory are restart.test.ts's; this file keeps to what needs the CLI,
 * because every CLI start costs seconds under tsx.)
 */

import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { shardOf } from '../../../../src/apps/rkv/cluster/commands.ts';
import { RespClient, respInfoFields } from '../../../../src/apps/rkv/resp/client.ts';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const main = join(root, 'src/cli/main.ts');
const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`cluster cli seed ${seed}\n`);

interface UpDocument {
  schemaVersion: number;
  respPort: number;
  replicas: { replicaId: number; pid: number; respPort: number; roles: { shard: number; role: string }[] }[];
}

function ipipe(args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', main, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function finished(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** Starts `cluster up` and resolves with its JSON document and the running process. */
async function up<D = UpDocument>(
  dataDir: string,
  extra: readonly string[] = [],
): Promise<{ child: ChildProcess; document: D; exit: ReturnType<typeof finished> }> {
  const child = ipipe([
    'cluster',
    'up',
    'rkv',
    '--replicas',
    '3',
    '--resp-port',
    '0',
    '--data-dir',
    dataDir,
    '--json',
    '--seed',
    String(seed),
    ...extra,
  ]);
  const exit = finished(child);
  const document = await new Promise<D>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      try {
        resolve(JSON.parse(text) as D);
      } catch {
        // Not complete yet.
      }
    });
    exit.then(({ code, stderr }) => reject(new Error(`cluster up exited ${code}: ${stderr}`)));
  });
  return { child, document, exit };
}

/**
 * Runs a CLI command in this process (`main` from src/cli/main.ts) and captures what it writes:
 * only `cluster up` must be a process of its own (it runs until a signal), and each CLI process
 * costs seconds of tsx start-up.
 */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main: run } = (await import(pathToFileURL(main).href)) as {
    main: (argv: string[]) => Promise<number>;
  };
  let stdout = '';
  let stderr = '';
  const writeOut = process.stdout.write;
  const writeErr = process.stderr.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += chunk.toString();
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await run(args);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = writeOut;
    process.stderr.write = writeErr;
  }
}

/** `load --app rkv --json` for a second against the cluster in `dataDir`, keys shared (64 of them). */
function loadRkv(dataDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return inProcess([
    'load',
    '--app',
    'rkv',
    '--data-dir',
    dataDir,
    '--duration',
    '1s',
    '--warmup',
    '0',
    '--closed',
    '4',
    '--keys',
    '64',
    '--gets',
    '0.5',
    '--seed',
    String(seed),
    '--json',
  ]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('cluster up prints the table and serves RESP; cluster status and cluster down find it by its data dir', {
  timeout: 90_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rkv-cli-'));
  const emptyDir = mkdtempSync(join(tmpdir(), 'rkv-cli-empty-'));
  try {
    const [first] = await Promise.all([up(dataDir), import(pathToFileURL(main).href)]);
    assert.equal(first.document.schemaVersion, 1);
    assert.equal(first.document.replicas.length, 3);
    const leaders = first.document.replicas.filter((replica) =>
      replica.roles.some((role) => role.role === 'leader'),
    );
    assert.equal(leaders.length, 1, `one leader expected: ${JSON.stringify(first.document.replicas)}`);
    for (const replica of first.document.replicas)
      assert.ok(alive(replica.pid), `replica ${replica.replicaId} runs`);

    const client = await RespClient.connect(first.document.respPort);
    assert.equal(await client.command('SET', 'cli:key', 'cli:value'), 'OK');
    assert.equal(await client.command('GET', 'cli:key'), 'cli:value');
    assert.equal((await respInfoFields(client)).get('ipipe_leader_replica'), String(leaders[0]!.replicaId));
    client.close();
    const again = await inProcess(['cluster', 'down', '--data-dir', emptyDir]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /IPIPE_ERR_CLUSTER_NOT_RUNNING/);
    const busy = await inProcess([
      'cluster',
      'up',
      'rkv',
      '--replicas',
      '3',
      '--resp-port',
      '0',
      '--data-dir',
      dataDir,
    ]);
    assert.equal(busy.code, 3, 'a second cluster on a directory in use exits 3');
    assert.match(
      busy.stderr,
      /data directory .* is in use by a running cluster supervisor \(process \d+\).*IPIPE_ERR_CLUSTER_DATA_DIR_IN_USE/,
    );
    const status = await inProcess(['cluster', 'status', '--data-dir', dataDir, '--json']);
    assert.equal(status.code, 0, status.stderr);
    assert.equal(
      (JSON.parse(status.stdout) as { replicas: { alive: boolean }[] }).replicas.filter((r) => r.alive)
        .length,
      3,
    );

    // The paper's workload over RESP, checked (load-rkv.ts); a small key space so keys are shared.
    const load = await loadRkv(dataDir);
    assert.equal(load.code, 0, load.stderr);
    const report = JSON.parse(load.stdout) as {
      app: string;
      replicas: number;
      get: { count: number };
      set: { count: number };
      unknown: number;
      check: { verdict: string };
    };
    assert.equal(report.app, 'rkv');
    assert.equal(report.replicas, 3);
    assert.ok(report.get.count > 0 && report.set.count > 0, load.stdout);
    assert.equal(report.unknown, 0);
    assert.equal(report.check.verdict, 'linearizable');
    const noCluster = await inProcess(['load', '--app', 'rkv', '--data-dir', emptyDir, '--duration', '1s']);
    assert.notEqual(noCluster.code, 0);
    assert.match(noCluster.stderr, /IPIPE_ERR_CLUSTER_NOT_RUNNING/);
    const misuse = await inProcess(['load', '--app', 'dt', '--data-dir', emptyDir, '--keys', '5']);
    assert.equal(misuse.code, 2);
    assert.match(misuse.stderr, /--keys is for --app rkv/);

    const down = await inProcess(['cluster', 'down', '--data-dir', dataDir]);
    assert.equal(down.code, 0, down.stderr);
    assert.match(down.stdout, /stopped 4 process\(es\)/);
    assert.equal((await first.exit).code, 0, 'cluster up exits 0 on SIGTERM');
    for (const replica of first.document.replicas)
      assert.ok(!alive(replica.pid), `replica ${replica.replicaId} stopped`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(emptyDir, { recursive: true, force: true });
  }
});

test('cluster up rkv --actors --shards: bad counts, too little NIC memory and another shape are refused before anything starts', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rkv-cli-actors-'));
  const upActors = (extra: string[]) =>
    inProcess(['cluster', 'up', 'rkv', '--actors', '--data-dir', dataDir, '--base-port', '1', ...extra]);
  try {
    for (const [extra, pattern] of [
      [['--shards', '65'], /--shards must be an integer in \[1, 64\], got "65"/],
      // 64 shards are allowed with --actors now; the default 512 KiB of NIC memory is too little for them.
      [
        ['--shards', '64'],
        /64 shard\(s\) leave each memtable 4096 bytes .*at least 4194304 bytes\) or use fewer shards/,
      ],
      [['--shards', '0'], /--shards must be an integer in \[1, 64\], got "0"/],
      [['--shards', '2.5'], /--shards must be an integer/],
      [['--shards', '4', '--nic-memory', '128'], /leave each memtable 16384 bytes .* or use fewer shards/],
      [['--nic-memory', '32'], /--nic-memory must be an integer in \[64, 1048576\]/],
    ] as const) {
      const refused = await upActors([...extra]);
      assert.equal(refused.code, 2, `${extra.join(' ')}: ${refused.stderr}`);
      assert.match(refused.stderr, pattern);
    }
    const noActors = await inProcess(['cluster', 'up', 'rkv', '--nic-memory', '1024', '--data-dir', dataDir]);
    assert.equal(noActors.code, 2);
    assert.match(
      noActors.stderr,
      /--nic-memory sizes the memtables of RKV on actors: use it with rkv --actors/,
    );
    const otherApp = await inProcess(['cluster', 'up', 'dt', '--nic-memory', '1024', '--data-dir', dataDir]);
    assert.equal(otherApp.code, 2, 'dt does not take --nic-memory (it used to be ignored)');
    assert.match(otherApp.stderr, /use it with rkv --actors/);

    // A directory made with 2 shards refuses 3; one whose shape predates shards means 1 shard.
    writeFileSync(
      join(dataDir, 'actor-cluster-shape.json'),
      JSON.stringify({ schemaVersion: 1, replicas: 3, shards: 2 }),
    );
    const reshard = await upActors(['--shards', '3']);
    assert.equal(reshard.code, 2);
    assert.match(reshard.stderr, /was made with --shards 2; start it with the same number/);
    writeFileSync(
      join(dataDir, 'actor-cluster-shape.json'),
      JSON.stringify({ schemaVersion: 1, replicas: 3 }),
    );
    const older = await upActors(['--shards', '2']);
    assert.equal(older.code, 2);
    assert.match(older.stderr, /was made with --shards 1/);
    // A data directory whose per-shard storage names would pass 63 bytes is refused, naming them.
    const deep = join(dataDir, 'd'.repeat(40));
    const long = await inProcess(['cluster', 'up', 'rkv', '--actors', '--shards', '2', '--data-dir', deep]);
    assert.equal(long.code, 2);
    assert.match(
      long.stderr,
      /replica-0\/s0\/(lsm|log\.journal)" is longer than the 63 bytes a setup message carries/,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('cluster up rkv --actors --shards 2 --respawn: RESP on the printed port, a killed node comes back from its files in both shards, load --app rkv, cluster down stops it', {
  timeout: 120_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rkv-cli-actors-up-'));
  try {
    const [first] = await Promise.all([
      up<{
        engine: string;
        respPort: number;
        shards: number;
        memtableLimitBytes: number;
        nodes: { replica: number; pid: number; actors: string[] }[];
      }>(dataDir, [
        '--actors',
        '--shards',
        '2',
        '--respawn',
        '--base-port',
        String(20_000 + (seed % 20_000)),
        '--election-timeout',
        '300',
      ]),
      import(pathToFileURL(main).href),
    ]);
    assert.equal(first.document.engine, 'actors');
    assert.equal(first.document.nodes.length, 3);
    assert.equal(first.document.shards, 2);
    assert.equal(
      first.document.memtableLimitBytes,
      128 * 1024,
      'the default 512 KiB of NIC memory / (2 × 2)',
    );
    assert.ok(
      first.document.nodes[1]?.actors.includes('rkv-consensus-s1-1(nic)'),
      'every node runs every shard',
    );
    const client = await RespClient.connect(first.document.respPort, { timeoutMs: 20_000 });
    try {
      for (let i = 0; i < 20; i++) assert.equal(await client.command('SET', `k${i}`, `v${i}`), 'OK');
      const victim = first.document.nodes[seed % 3]!;
      process.kill(victim.pid, 'SIGKILL');
      // --respawn starts it again and sets it up from its files; the state file gets the new pid.
      const deadline = Date.now() + 60_000;
      let status = await inProcess(['cluster', 'status', '--data-dir', dataDir, '--json']);
      while (Date.now() < deadline) {
        const replicas = (
          JSON.parse(status.stdout) as { replicas: { replicaId: number; pid: number; alive: boolean }[] }
        ).replicas;
        const again = replicas.find((r) => r.replicaId === victim.replica);
        if (again !== undefined && again.pid !== victim.pid && replicas.every((r) => r.alive)) break;
        await new Promise((wake) => setTimeout(wake, 250));
        status = await inProcess(['cluster', 'status', '--data-dir', dataDir, '--json']);
      }
      assert.equal(status.code, 0, `every replica runs again: ${status.stdout}`);
      for (let i = 20; i < 30; i++) assert.equal(await client.command('SET', `k${i}`, `v${i}`), 'OK');
      const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
      const shardsHit = new Set(keys.map((key) => shardOf(Buffer.from(key), 2)));
      assert.equal(shardsHit.size, 2, 'the keys span both shards');
      assert.deepEqual(
        await client.command('MGET', ...keys),
        keys.map((_, i) => `v${i}`),
      );
      const info = await respInfoFields(client);
      assert.equal(info.get('ipipe_shards'), '2');
      assert.ok(info.has('shard_1_leader'), "INFO names each shard's leader");
      // The paper's workload through the same front (load-rkv.ts finds it in the state file).
      const load = await loadRkv(dataDir);
      assert.equal(load.code, 0, load.stderr);
      const report = JSON.parse(load.stdout) as { set: { count: number }; check: { verdict: string } };
      assert.ok(report.set.count > 0);
      assert.equal(report.check.verdict, 'linearizable');
    } finally {
      client.close();
    }
    const down = await inProcess(['cluster', 'down', '--data-dir', dataDir]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal((await first.exit).code, 0, 'cluster up exits 0 on SIGTERM');

    // The same directory, another size or the other form: refused before anything starts.
    const resized = await inProcess([
      'cluster',
      'up',
      'rkv',
      '--actors',
      '--replicas',
      '2',
      '--data-dir',
      dataDir,
    ]);
    assert.equal(resized.code, 2);
    assert.match(resized.stderr, /was made with --replicas 3/);
    const resharded = await inProcess([
      'cluster',
      'up',
      'rkv',
      '--actors',
      '--shards',
      '3',
      '--data-dir',
      dataDir,
    ]);
    assert.equal(resharded.code, 2);
    assert.match(resharded.stderr, /was made with --shards 2/);
    const otherForm = await inProcess(['cluster', 'up', 'rkv', '--replicas', '3', '--data-dir', dataDir]);
    assert.equal(otherForm.code, 2);
    assert.match(otherForm.stderr, /holds RKV's actor cluster/);

    // Up again on the same directory: the data is there, and a new front's SETs apply (its client
    // ids are new: the replicas' durable session tables would take reused ones for duplicates).
    const second = await up<{ respPort: number }>(dataDir, [
      '--actors',
      '--shards',
      '2',
      '--base-port',
      String(20_000 + (seed % 20_000)),
    ]);
    const again = await RespClient.connect(second.document.respPort, { timeoutMs: 20_000 });
    try {
      assert.equal(await again.command('GET', 'k7'), 'v7', 'written before the restart');
      assert.equal(await again.command('SET', 'k7', 'after'), 'OK');
      assert.equal(await again.command('GET', 'k7'), 'after', 'a SET of the new front applies');
    } finally {
      again.close();
    }
    assert.equal((await inProcess(['cluster', 'down', '--data-dir', dataDir])).code, 0);
    assert.equal((await second.exit).code, 0);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

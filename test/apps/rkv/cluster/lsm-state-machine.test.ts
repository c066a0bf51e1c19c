/**
 * The shard state machine (src/apps/rkv/cluster/lsm-state-machine.ts) against a Map model:
 *   - applying commands gives the model's results;
 *   - a crash (close without flush) followed by "restore the last Paxos snapshot and re-apply the
 *     log after it" ends in the model's state, whatever was flushed — replays skip writes the
 *     engine already holds and never write a sequence twice;
 *   - a snapshot moved to a replica that is behind replaces its store (catch-up by snapshot).
 * Seeded; the seed is printed.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ClusterCommand, ClusterResult } from '../../../../src/apps/rkv/cluster/commands.ts';
import { LsmKvStateMachine } from '../../../../src/apps/rkv/cluster/lsm-state-machine.ts';
import { Random } from '../../../../src/random.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`lsm-state-machine seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const text = new TextEncoder();
const key = (n: number): Uint8Array => text.encode(`k${n}`);

function randomCommand(random: Random): ClusterCommand {
  const roll = random.next();
  const k = Math.floor(random.next() * 40);
  if (roll < 0.45)
    return {
      op: 'set',
      key: key(k),
      value: text.encode(`v${Math.floor(random.next() * 1e6)}`),
      condition: 'always',
    };
  if (roll < 0.55)
    return {
      op: 'set',
      key: key(k),
      value: text.encode('nx'),
      condition: random.next() < 0.5 ? 'if-absent' : 'if-present',
    };
  if (roll < 0.7) return { op: 'del', keys: [key(k), key(k), key((k + 1) % 40)] };
  if (roll < 0.85) return { op: 'get', key: key(k) };
  if (roll < 0.95) return { op: 'exists', keys: [key(k), key(k)] };
  return { op: 'dbsize' };
}

/** The reference: a Map with Redis semantics. */
function applyModel(model: Map<string, string>, command: ClusterCommand): ClusterResult {
  const name = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
  switch (command.op) {
    case 'get':
      return {
        op: 'value',
        value: model.has(name(command.key)) ? text.encode(model.get(name(command.key))!) : null,
      };
    case 'mget':
      return {
        op: 'values',
        values: command.keys.map((k) => (model.has(name(k)) ? text.encode(model.get(name(k))!) : null)),
      };
    case 'exists':
      return { op: 'count', count: command.keys.filter((k) => model.has(name(k))).length };
    case 'dbsize':
      return { op: 'count', count: model.size };
    case 'set': {
      const existed = model.has(name(command.key));
      if (command.condition !== 'always' && existed !== (command.condition === 'if-present'))
        return { op: 'written', written: false };
      model.set(name(command.key), new TextDecoder().decode(command.value));
      return { op: 'written', written: true };
    }
    case 'del': {
      let count = 0;
      for (const k of new Set(command.keys.map(name))) if (model.delete(k)) count++;
      return { op: 'count', count };
    }
  }
}

function contents(machine: LsmKvStateMachine): Map<string, string> {
  const map = new Map<string, string>();
  for (const [k, v] of machine.engine.scan())
    map.set(new TextDecoder().decode(k), new TextDecoder().decode(v));
  return map;
}

function withDirectory(run: (directory: string) => void): void {
  const directory = mkdtempSync(join(tmpdir(), 'rkv-sm-'));
  try {
    run(directory);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

test('results match a Map model, and a crash plus log replay from the last snapshot restores the state', () => {
  for (let round = 0; round < 12; round++) {
    const random = new Random(seed + round);
    withDirectory((directory) => {
      const commands = Array.from({ length: 300 }, () => randomCommand(random));
      // Every third round takes no snapshot: the restart then replays the log from slot 1.
      const snapshotAt = round % 3 === 0 ? 0 : 1 + Math.floor(random.next() * 200);
      const flushAt = snapshotAt + Math.floor(random.next() * 100);
      const crashAt = flushAt + Math.floor(random.next() * (300 - flushAt));
      const model = new Map<string, string>();
      let machine = LsmKvStateMachine.open({ directory, engine: { memtableBytes: 4096 } });
      let snapshot: Uint8Array | null = null;
      for (let index = 0; index < crashAt; index++) {
        const expected = applyModel(model, commands[index]!);
        assert.deepEqual(machine.apply(commands[index]!), expected, `round ${round} command ${index}`);
        machine.maintenanceStep(); // between commands, as the host does
        if (index + 1 === snapshotAt) snapshot = machine.snapshot();
        if (index + 1 === flushAt) machine.engine.flush();
      }
      // Crash: the memtable is lost; the Paxos log still holds every command after the snapshot.
      machine.close({ flush: false });
      machine = LsmKvStateMachine.open({ directory, engine: { memtableBytes: 4096 } });
      if (snapshot !== null) machine.restore(snapshot);
      const replayFrom = snapshot === null ? 0 : snapshotAt;
      for (let index = replayFrom; index < crashAt; index++) machine.apply(commands[index]!);
      assert.deepEqual(contents(machine), model, `round ${round}: state after replay`);
      // And it keeps going: new commands are written (sequences stay increasing) and answered right.
      for (let index = crashAt; index < commands.length; index++) {
        assert.deepEqual(
          machine.apply(commands[index]!),
          applyModel(model, commands[index]!),
          `round ${round} after restart ${index}`,
        );
      }
      assert.deepEqual(contents(machine), model);
      assert.equal(machine.stats().keys, model.size);
      machine.close();
    });
  }
});

test('a snapshot from a peer replaces the store of a replica that is behind', () => {
  const random = new Random(seed + 100);
  withDirectory((directory) => {
    const leader = LsmKvStateMachine.open({ directory: join(directory, 'leader') });
    const follower = LsmKvStateMachine.open({ directory: join(directory, 'follower') });
    const model = new Map<string, string>();
    const commands = Array.from({ length: 400 }, () => randomCommand(random));
    for (const [index, command] of commands.entries()) {
      leader.apply(command);
      applyModel(model, command);
      if (index < 50) follower.apply(command); // the follower then falls behind
    }
    const snapshot = leader.snapshot();
    follower.restore(snapshot);
    assert.deepEqual(contents(follower), model);
    assert.equal(follower.stats().snapshotLoads, 1);
    assert.equal(follower.stats().keys, model.size);
    // Both continue in lock step.
    for (let index = 0; index < 50; index++) {
      const command = randomCommand(random);
      assert.deepEqual(follower.apply(command), leader.apply(command));
    }
    assert.deepEqual(contents(follower), contents(leader));
    // The loaded store survives a crash: the dump was flushed.
    follower.close({ flush: false });
    const reopened = LsmKvStateMachine.open({ directory: join(directory, 'follower') });
    assert.ok(reopened.stats().replayThrough >= 400, `replay point ${reopened.stats().replayThrough}`);
    reopened.close();
    leader.close();
  });
});

/**
 * Shared by RKV's actor tests: a three-replica group on a SimCluster with small memtables, and a
 * client that runs one operation at a time against the leader and checks it against a Map model.
 */
import assert from 'node:assert/strict';
import type { ActorRef } from '../../../../src/actor/index.ts';
import { type ConsensusView, inspectConsensus } from '../../../../src/apps/rkv/actors/consensus-actor.ts';
import type { RkvMessage } from '../../../../src/apps/rkv/actors/messages.ts';
import { rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import {
  deployRkvOnSimCluster,
  type RkvSimDeployment,
  type RkvSimOptions,
} from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { baseValue } from '../../../../src/apps/rkv/actors/sim-disk.ts';
import { DmoMemtable } from '../../../../src/apps/rkv/lsm/dmo-memtable.ts';
import { EventKernel } from '../../../../src/platform/sim/event-kernel.ts';
import { SimCluster } from '../../../../src/platform/sim/sim-cluster.ts';
import type { Random } from '../../../../src/random.ts';
import { testTiming } from '../../../platform/sim/test-timing.ts';

export const VALUE_BYTES = 24;

/** A client's put of a one-byte value under the key with index `key`. */
export function putMessage(clientId: number, seq: number, key: number, value: number): RkvMessage {
  return { type: 'put', clientId, seq, key: rkvKey(key), value: new Uint8Array([value]) };
}

/**
 * A group with its timers on (heartbeat 50 µs, election timeout 250 µs), empty keys and 8-byte
 * values, run for 1 ms so that a leader is elected. `options` adds to or overrides the deployment's.
 */
export function deployElecting(
  nodes = 3,
  options: Omit<Partial<RkvSimOptions>, 'consensus'> & {
    readonly consensus?: Partial<NonNullable<RkvSimOptions['consensus']>>;
  } = {},
): RkvSimDeployment {
  const cluster = new SimCluster({ kernel: new EventKernel(), timing: testTiming(), nodes });
  const deployment = deployRkvOnSimCluster(cluster, {
    baseKeys: 0,
    valueBytes: 8,
    ...options,
    consensus: { heartbeatNs: 50_000, electionTimeoutNs: 250_000, ...options.consensus },
  });
  settle(deployment, 1_000_000);
  return deployment;
}

/** Runs the deployment's cluster for `ns` more simulated nanoseconds. */
export function settle(deployment: RkvSimDeployment, ns: number): void {
  const kernel = deployment.cluster.kernel;
  kernel.run({ untilNs: kernel.now() + ns });
}

/**
 * Sends `message` to `ref` from a client on node `at` and runs until it is answered or `waitNs`
 * passed; undefined when nothing came (a refusal is an answer).
 */
export function askWithin(
  deployment: RkvSimDeployment,
  at: number,
  ref: ActorRef<RkvMessage, RkvMessage>,
  message: RkvMessage,
  waitNs = 1_000_000,
): RkvMessage | undefined {
  let answer: RkvMessage | undefined;
  deployment.cluster.clientSend(at, ref, message, (_id, _latency, _ok, reply) => {
    answer = reply as RkvMessage;
    deployment.cluster.kernel.stop();
  });
  settle(deployment, waitNs);
  return answer;
}

/** Replica `replica`'s consensus state as its DMOs hold it (fails the test if it has none). */
export function consensusView(deployment: RkvSimDeployment, replica: number): ConsensusView {
  const instance = deployment.cluster.node(replica).instance(deployment.consensus[replica]!.id);
  const seen = inspectConsensus(instance.heap, (name) => instance.root(name));
  assert.ok(seen !== undefined, `replica ${replica} has no consensus state`);
  return seen;
}
export const BASE_KEYS = 500;

export function deployGroup(options: Partial<RkvSimOptions> = {}): RkvSimDeployment {
  const kernel = new EventKernel();
  const cluster = new SimCluster({ kernel, timing: testTiming(), nodes: 3 });
  return deployRkvOnSimCluster(cluster, {
    baseKeys: BASE_KEYS,
    valueBytes: VALUE_BYTES,
    // Small: a few hundred puts flush several times and merge level 0.
    memtableLimitBytes: 2048,
    level0Trigger: 3,
    ...options,
  });
}

/** Sends `message` from a client on `node` and runs the kernel until it is answered. */
export function call(
  deployment: RkvSimDeployment,
  node: number,
  ref: ActorRef<RkvMessage, RkvMessage>,
  message: RkvMessage,
): RkvMessage {
  let answer: RkvMessage | undefined;
  deployment.cluster.clientSend(node, ref, message, (_id, _latency, ok, reply) => {
    assert.ok(ok, `${message.type} was refused by the node`);
    answer = reply as RkvMessage;
  });
  deployment.cluster.kernel.run({});
  assert.ok(answer !== undefined, `${message.type} to ${ref.name} was never answered`);
  return answer;
}

/** The value the model expects for key index `index`: written, or the pre-loaded one. */
export function expected(model: Map<number, Uint8Array>, index: number): Uint8Array | undefined {
  return model.get(index) ?? (index < BASE_KEYS ? baseValue(index, VALUE_BYTES) : undefined);
}

/**
 * `count` random operations (60% get / 40% put over BASE_KEYS + 50 keys, so some keys are
 * absent), each checked against the model; `between(i)` runs before operation i.
 */
export function runAgainstModel(
  deployment: RkvSimDeployment,
  random: Random,
  count: number,
  model: Map<number, Uint8Array>,
  between: (i: number) => void = () => {},
): { gets: number; puts: number; hits: number } {
  const leader = deployment.leader;
  let gets = 0;
  let puts = 0;
  let hits = 0;
  for (let i = 0; i < count; i++) {
    between(i);
    const index = random.int(0, BASE_KEYS + 50);
    if (random.chance(0.4)) {
      const value = new Uint8Array(VALUE_BYTES).map(() => random.int(0, 256));
      const answer = call(deployment, leader, deployment.consensus[leader]!, {
        type: 'put',
        clientId: 0,
        seq: 0,
        key: rkvKey(index),
        value,
      });
      assert.equal(answer.type, 'put-ok', `put #${i}: ${JSON.stringify(answer)}`);
      model.set(index, value);
      puts++;
    } else {
      const answer = call(deployment, leader, deployment.memtables[leader]!, {
        type: 'get',
        key: rkvKey(index),
      });
      assert.equal(answer.type, 'value');
      if (answer.type !== 'value') continue;
      const want = expected(model, index);
      assert.equal(answer.found, want !== undefined, `get #${i} of key ${index}: found`);
      if (want !== undefined) assert.deepEqual([...answer.value], [...want], `get #${i} of key ${index}`);
      if (want !== undefined) hits++;
      gets++;
    }
  }
  return { gets, puts, hits };
}

/** The bytes replica `replica`'s memtables hold now: the active one and the frozen one (if any). */
export function memtableBytes(deployment: RkvSimDeployment, replica: number): number {
  const instance = deployment.cluster.node(replica).instance(deployment.memtables[replica]!.id);
  let bytes = 0;
  for (const name of ['active', 'frozen']) {
    const root = instance.root(name);
    if (root !== undefined) bytes += DmoMemtable.open(instance.heap, root).approximateBytes;
  }
  return bytes;
}

/** The one replica among the first `replicas` that is up and believes it leads (fails the test otherwise). */
export function leaderOf(deployment: RkvSimDeployment, replicas = 3): number {
  const leaders: number[] = [];
  for (let r = 0; r < replicas; r++) {
    if (!deployment.cluster.isDown(r) && consensusView(deployment, r).role === 'leader') leaders.push(r);
  }
  assert.equal(leaders.length, 1, `one leader expected, got [${leaders.join(',')}]`);
  return leaders[0] as number;
}

/** A client's delete of the key with index `key`. */
export function delMessage(clientId: number, seq: number, key: number): RkvMessage {
  return { type: 'del', clientId, seq, key: rkvKey(key) };
}

/**
 * A command through replica `at`'s consensus actor, retried (same session) until acknowledged;
 * fails the test after `attempts` waits of 300 µs.
 */
export function commitThrough(
  deployment: RkvSimDeployment,
  at: number,
  message: RkvMessage,
  attempts = 40,
): RkvMessage {
  const consensus = deployment.consensus[at] as ActorRef<RkvMessage, RkvMessage>;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const answer = askWithin(deployment, at, consensus, message, 300_000);
    if (answer?.type === 'put-ok' || answer?.type === 'del-ok') return answer;
  }
  assert.fail(`${JSON.stringify(message)} at replica ${at} was never acknowledged`);
}

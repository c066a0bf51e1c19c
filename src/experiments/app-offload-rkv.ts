/**
 * RKV in the applications' offload experiment (iPipe §5: "RKV: leader + 2 followers" on 3
 * servers; "16-byte keys, 95% reads / 5% writes, Zipf 0.99 over 1 million keys; value size grows
 * with packet size"). Three simulated nodes on one fabric (SimCluster), one replica each, leader
 * on node 0; each runs RKV's four actors (src/apps/rkv/actors): consensus and memtable (`any`),
 * SSTable reader and compaction (pinned to the host), over a modelled disk holding the pre-loaded
 * data set.
 *
 * Clients talk to the leader: a GET to its memtable actor (answered there on a hit, by the
 * SSTable reader on a miss), a PUT to its consensus actor (answered by the memtable once the
 * command is chosen and applied). One operation is one request; no retries.
 *
 * The store starts warm: the memtable holds the distinct keys of writes drawn from the workload's
 * own distribution until they fill half the flush limit (a memtable half-way between two flushes);
 * everything else is on the disk. The value size grows with the packet: a GET answer carrying one
 * value fills the packet (`rkvValueBytes`), and a PUT carries a value of that size.
 */

import type { ActorRef } from '../actor/actor-ref.ts';
import type { AnyActorDefinition } from '../actor/define-actor.ts';
import { type RkvMessage, rkvKey, rkvMessages } from '../apps/rkv/actors/messages.ts';
import {
  deployRkvOnSimCluster,
  loadMemtables,
  type RkvActorRole,
} from '../apps/rkv/actors/sim-deployment.ts';
import { ConfigError } from '../errors.ts';
import { ZipfSampler } from '../platform/sim/distributions.ts';
import { frameBytes } from '../platform/sim/sim-node.ts';
import type { NextRequest } from '../platform/sim/traffic.ts';
import type { Random } from '../random.ts';
import { type AppDeployContext, type AppDeployment, type OffloadApp, requestTraffic } from './app-offload.ts';

/** RKV's experiment settings (`--app-config` for `ipipe experiment rkv`). */
export interface RkvOffloadOptions {
  /** Keys in the store (default 1 000 000, all pre-loaded on every replica's disk). */
  readonly keys?: number;
  /** Zipf exponent of key popularity (default 0.99). */
  readonly zipfExponent?: number;
  /** Fraction of operations that are GETs (default 0.95). */
  readonly getFraction?: number;
  /** Memtable flush limit in bytes (default 1 MiB; it must fit the simulated 4 MiB DMO region twice). */
  readonly memtableBytes?: number;
  /** Warm the memtable to half its limit before the run (default true). */
  readonly warmMemtable?: boolean;
}

/** The memtable charges a key + value + this much per entry (MEMTABLE_ENTRY_OVERHEAD_BYTES). */
const MEMTABLE_ENTRY_OVERHEAD_BYTES = 32;
/** The memtable's default flush limit. */
export const RKV_DEFAULT_MEMTABLE_BYTES = 1024 * 1024;

/** Consensus-bound messages that arrive over the network (clients' puts, the other replicas'). */
const CONSENSUS_NETWORK_TYPES: ReadonlySet<string> = new Set([
  'put',
  'prepare',
  'promise',
  'accept',
  'accepted',
  'reject',
  'commit',
  'heartbeat-ack',
  'catchup-request',
  'catchup',
]);

/** Bytes of a value such that a GET answer carrying it fills a frame of `packetBytes`. */
export function rkvValueBytes(packetBytes: number): number {
  const empty = rkvMessages.sizeOf({ type: 'value', found: true, value: new Uint8Array(0) });
  return Math.max(8, packetBytes - frameBytes(empty));
}

/** RKV as an OffloadApp. Throws ConfigError for a bad option. */
export function rkvOffloadApp(options: RkvOffloadOptions = {}): OffloadApp {
  const keys = options.keys ?? 1_000_000;
  const zipfExponent = options.zipfExponent ?? 0.99;
  const getFraction = options.getFraction ?? 0.95;
  const memtableBytes = options.memtableBytes ?? RKV_DEFAULT_MEMTABLE_BYTES;
  const warm = options.warmMemtable ?? true;
  if (!(Number.isSafeInteger(keys) && keys >= 1 && keys < 1e15)) {
    throw new ConfigError('rkv.keys', `must be an integer in [1, 1e15), got ${keys}`);
  }
  if (!(zipfExponent > 0 && zipfExponent < 10)) {
    throw new ConfigError('rkv.zipfExponent', `must be in (0, 10), got ${zipfExponent}`);
  }
  if (!(getFraction >= 0 && getFraction <= 1)) {
    throw new ConfigError('rkv.getFraction', `must be in [0, 1], got ${getFraction}`);
  }
  if (!(Number.isInteger(memtableBytes) && memtableBytes >= 4096 && memtableBytes <= 1.5 * 1024 * 1024)) {
    throw new ConfigError(
      'rkv.memtableBytes',
      `must be an integer in [4096, 1572864] (an active and a frozen memtable share a 4 MiB DMO region), got ${memtableBytes}`,
    );
  }
  const zipf = new ZipfSampler(keys, zipfExponent);
  return {
    name: 'rkv',
    roles: ['leader', 'follower'],
    // One request per operation and no retransmission: many in flight only queue.
    probeOutstanding: 128,
    workload: {
      operation: `GET ${Math.round(getFraction * 100)}% / PUT ${Math.round((1 - getFraction) * 100)}%`,
      keys,
      keyBytes: 16,
      keyDistribution: `zipf ${zipfExponent}`,
      replicas: 3,
      memtableBytes,
      warmMemtable: warm,
      reads: 'linearizable through the leader (fixed leader; see docs/apps/rkv-sim.md)',
    },
    deploy(context: AppDeployContext): AppDeployment {
      const valueBytes = rkvValueBytes(context.packetBytes);
      const cluster = context.newCluster(3);
      const wrap = (role: RkvActorRole, definition: AnyActorDefinition): AnyActorDefinition => {
        if (role === 'consensus') {
          return context.clientFacing(definition, (m) => CONSENSUS_NETWORK_TYPES.has((m as RkvMessage).type));
        }
        if (role === 'memtable')
          return context.clientFacing(definition, (m) => (m as RkvMessage).type === 'get');
        return definition;
      };
      const deployment = deployRkvOnSimCluster(cluster, {
        baseKeys: keys,
        valueBytes,
        memtableLimitBytes: memtableBytes,
        allOnHost: context.placement === 'host-only',
        wrap,
      });
      if (warm) {
        loadMemtables(
          deployment,
          warmItems(context.random.fork('warm'), zipf, valueBytes, memtableBytes / 2),
        );
      }
      const leader = deployment.leader;
      const memtable = deployment.memtables[leader] as ActorRef<unknown, unknown>;
      const consensus = deployment.consensus[leader] as ActorRef<unknown, unknown>;
      const next = (random: Random): NextRequest => {
        const key = rkvKey(zipf.sample(random));
        if (random.chance(getFraction)) return { target: memtable, message: { type: 'get', key } };
        // clientId 0: no exactly-once session (these clients never retry).
        return {
          target: consensus,
          message: { type: 'put', clientId: 0, seq: 0, key, value: randomValue(random, valueBytes) },
        };
      };
      return {
        nodes: [
          { role: 'leader', node: cluster.node(leader) },
          ...[0, 1, 2].filter((r) => r !== leader).map((r) => ({ role: 'follower', node: cluster.node(r) })),
        ],
        // The leader's ingress also carries the followers' frames: arrivals one at a time.
        start: (plan) => requestTraffic(cluster.node(leader), next, plan, 1),
      };
    },
  };
}

function randomValue(random: Random, bytes: number): Uint8Array {
  const value = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 4) {
    const word = random.int(0, 0x1_0000_0000);
    for (let j = 0; j < 4 && i + j < bytes; j++) value[i + j] = (word >>> (8 * j)) & 0xff;
  }
  return value;
}

/** Distinct keys of writes drawn from the workload until their entries fill `bytes`. */
function warmItems(
  random: Random,
  zipf: ZipfSampler,
  valueBytes: number,
  bytes: number,
): { key: Uint8Array; value: Uint8Array }[] {
  const entryBytes = 16 + valueBytes + MEMTABLE_ENTRY_OVERHEAD_BYTES;
  const wanted = Math.floor(bytes / entryBytes);
  const seen = new Set<number>();
  // Bounded: with a small key space the distinct keys run out before the bytes do.
  for (let draws = 0; seen.size < wanted && draws < wanted * 50; draws++) seen.add(zipf.sample(random));
  return [...seen].map((index) => ({ key: rkvKey(index), value: randomValue(random, valueBytes) }));
}

/**
 * The Redis-protocol front over RKV's actor cluster (actor-cluster.ts): a `KvBackend` whose GETs
 * are lease reads at the leader's consensus actor and whose SETs are puts committed through
 * Multi-Paxos, each through a client of a pool (every client its own exactly-once session, one
 * command at a time). `redis-cli`, `redis-benchmark` and `ipipe load --app rkv` then drive the
 * actors as they drive the process-per-replica cluster.
 *
 * Order: the front dispatches a connection's pipelined commands at once and orders the replies;
 * here commands on the same key run one after another in the order they came (a per-key chain), so
 * `SET k v` then `GET k` in one pipeline reads v. Pipelined commands on different keys may commit
 * in either order — as across the slots of a Redis Cluster — since each runs as its own session.
 *
 * Shards: each key goes to its shard's consensus group (RkvActorClient routes by `shardOf`, the
 * process-per-replica form's hash); an MGET or EXISTS over keys of several shards runs one read
 * per key, each after the commands queued before it on that key, and answers in the keys' order
 * (not atomic across shards, as in the process-per-replica form). INFO names each shard's leader.
 *
 * DEL deletes key by key (each a `del` committed through Multi-Paxos in its key's shard: a
 * tombstone in the memtables, SSTables and snapshots) and counts the keys that existed.
 *
 * SCAN is one page of `RkvActorClient.scan` (every shard's leader under its lease, merged in key
 * order; not one snapshot across shards or pages, as Redis's SCAN across calls), its cursor an
 * opaque number naming the continuation key (scan-cursors.ts), so `redis-cli --scan` works.
 * DBSIZE asks each shard's leader to count its live keys (a scan of its store, at one point in
 * that shard's log) and sums them: not atomic across shards. It waits for every command queued
 * before it (on any key), so a pipeline's SETs then DBSIZE counts them.
 *
 * SET NX / XX is a conditional put decided by the key's shard leader at its applied point, under
 * a per-key lock, then committed as a plain put (messages.ts "Conditional puts"): OK or nil.
 *
 * What the actors do not have is refused with `-ERR` (BackendUnsupportedError), never faked:
 * the count of a DEL whose retry reached a leader that holds no answer for it: one that re-applied
 * the delete after a restart past a later flush of its disk, or installed a snapshot covering it
 * (the delete is done; every other replica keeps it).
 * While no leader answers, commands get `-TRYAGAIN`.
 */

import { MAX_KEY_BYTES, MAX_SCAN_LIMIT, MAX_VALUE_BYTES } from '../actors/messages.ts';
import type { KvBackend, KvBackendInfo, KvScanPage, SetCondition } from '../resp/backend.ts';
import { BackendUnavailableError, BackendUnsupportedError } from '../resp/errors.ts';
import type { RespLimitsInput } from '../resp/limits.ts';
import { ScanCursors } from '../resp/scan-cursors.ts';
import type { RkvActorClient, RkvActorConnection } from './actor-cluster.ts';
import { ClusterUnavailableError } from './errors.ts';
import { assertScanMovesOn } from './scan-merge.ts';

/** What the actors' codec carries: the front refuses longer keys and values up front. */
export const ACTOR_RESP_LIMITS: RespLimitsInput = {
  maxKeyBytes: MAX_KEY_BYTES,
  maxValueBytes: MAX_VALUE_BYTES,
};

export interface ActorKvBackendOptions {
  /** Clients in the pool: commands in flight at once (default 64). */
  readonly clients?: number;
  /**
   * The first of the pool's client ids. Ids must never repeat over the cluster's lifetime — the
   * replicas' session tables are durable, and a reused id's first puts would be taken for
   * duplicates: acknowledged, not applied. A front started again on the same cluster takes ids no
   * earlier front used (`cluster up rkv --actors` counts fronts in the data directory).
   */
  readonly firstClientId: number;
  /** How long a command may look for a leader before `-TRYAGAIN` (default 5000 ms). */
  readonly giveUpMs?: number;
}

/** The log spells a delete with an empty key field (messages.ts "Deletes"): writes need a key. */
function requireKey(command: string, key: Buffer): void {
  if (key.length === 0) {
    throw new BackendUnsupportedError(
      `${command} with an empty key: RKV's actors need a key of 1 byte or more`,
    );
  }
}

export class ActorKvBackend implements KvBackend {
  readonly #connection: RkvActorConnection;
  readonly #idle: RkvActorClient[] = [];
  readonly #waiting: ((client: RkvActorClient) => void)[] = [];
  readonly #giveUpMs: number;
  /** Per key, the last command queued on it: the next one on that key starts after it settles. */
  readonly #tails = new Map<string, Promise<unknown>>();
  /** Per shard, the leader the last command on it found (null before any did: INFO says unknown). */
  readonly #leaders: (number | null)[];
  readonly #cursors = new ScanCursors();

  constructor(connection: RkvActorConnection, options: ActorKvBackendOptions) {
    this.#connection = connection;
    this.#giveUpMs = options.giveUpMs ?? 5_000;
    this.#leaders = Array.from({ length: connection.shards }, () => null);
    const first = options.firstClientId;
    for (let i = 0; i < (options.clients ?? 64); i++) this.#idle.push(connection.client(first + i));
  }

  async get(key: Buffer): Promise<Buffer | null> {
    const value = await this.#with(key, (client) => client.get(key, this.#giveUpMs));
    return value === null ? null : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }

  async set(key: Buffer, value: Buffer, condition: SetCondition): Promise<boolean> {
    requireKey('SET', key);
    if (condition !== 'always') {
      const nxOrXx = condition === 'if-absent' ? 'nx' : 'xx';
      return this.#with(key, (client) => client.cput(key, value, nxOrXx, this.#giveUpMs));
    }
    await this.#with(key, (client) => client.put(key, value, this.#giveUpMs));
    return true;
  }

  /**
   * Redis DEL: one delete per key, each committed through Multi-Paxos on its own (as MGET is one
   * GET per key: not atomic across keys); the count is the keys that held a value at their
   * delete's slot.
   */
  async del(keys: readonly Buffer[]): Promise<number> {
    for (const key of keys) requireKey('DEL', key);
    const existed = await Promise.all(
      keys.map((key) => this.#with(key, (client) => client.del(key, this.#giveUpMs))),
    );
    if (existed.includes(null)) {
      throw new BackendUnsupportedError(
        'DEL took effect, but its reply was lost and the retry reached a replica that holds no answer for it ' +
          '(one that re-applied it after a restart past a later flush of its disk, or installed a snapshot covering it: ' +
          "RKV's actors keep a delete's answer in memory on every replica); the keys are deleted — " +
          'count them with EXISTS before a DEL if the count matters',
      );
    }
    return existed.filter((value) => value === true).length;
  }

  async exists(keys: readonly Buffer[]): Promise<number> {
    const values = await this.mget(keys);
    return values.filter((value) => value !== null).length;
  }

  mget(keys: readonly Buffer[]): Promise<ReadonlyArray<Buffer | null>> {
    return Promise.all(keys.map((key) => this.get(key)));
  }

  /**
   * Redis DBSIZE: each shard's live keys, counted at its leader at one point in that shard's log
   * (a scan of the leader's store), summed — not one atomic snapshot across shards. It starts once
   * the commands dispatched before it settled.
   */
  async dbsize(): Promise<number> {
    // After every command dispatched before it (a pipeline's SETs then DBSIZE counts those SETs).
    await Promise.all(this.#tails.values());
    const shards = Array.from({ length: this.#connection.shards }, (_unused, shard) =>
      this.#pooled(shard, (client) => client.dbsize(shard, this.#giveUpMs)),
    );
    return (await Promise.all(shards)).reduce((sum, keys) => sum + keys, 0);
  }

  /**
   * Redis SCAN: one page of `RkvActorClient.scan` (every shard's leader, merged in key order) of
   * at most `count` keys (capped at MAX_SCAN_LIMIT), continuing from the key the cursor names
   * (scan-cursors.ts). Values travel with the keys and are dropped here: a page's bytes are bounded
   * all the same. After the commands dispatched before it, as DBSIZE.
   */
  async scan(cursor: string, count: number): Promise<KvScanPage> {
    const start = this.#cursors.resume(cursor);
    await Promise.all(this.#tails.values());
    const limit = Math.min(count, MAX_SCAN_LIMIT);
    const page = await this.#pooled(0, (client) =>
      client.scan(start, undefined, { limit, giveUpMs: this.#giveUpMs }),
    );
    // A page that does not move on would hand the RESP client a cursor it could follow for ever.
    assertScanMovesOn(start, page);
    return {
      cursor: this.#cursors.open(page.next),
      keys: page.pairs.map((pair) => Buffer.from(pair.key.buffer, pair.key.byteOffset, pair.key.byteLength)),
    };
  }

  info(): Promise<KvBackendInfo> {
    return Promise.resolve({
      role: 'standalone',
      ipipe: [
        ['ipipe_backend', 'rkv-actors'],
        ['ipipe_replicas', this.#connection.replicas],
        ['ipipe_shards', this.#connection.shards],
        ['ipipe_leader_replica', this.#leaders[0] ?? 'unknown'],
        ...this.#leaders.map((leader, shard): [string, number | string] => [
          `shard_${shard}_leader`,
          leader ?? 'unknown',
        ]),
      ],
    });
  }

  /** Runs `command` with a pooled client, after the commands queued before it on `key`. */
  #with<T>(key: Buffer, command: (client: RkvActorClient) => Promise<T>): Promise<T> {
    const name = key.toString('latin1');
    const before = this.#tails.get(name);
    const shard = this.#connection.shardOf(key);
    const run = (
      before === undefined ? this.#pooled(shard, command) : before.then(() => this.#pooled(shard, command))
    ) as Promise<T>;
    const tail = run.catch(() => {});
    this.#tails.set(name, tail);
    void tail.then(() => {
      if (this.#tails.get(name) === tail) this.#tails.delete(name);
    });
    return run;
  }

  async #pooled<T>(shard: number, command: (client: RkvActorClient) => Promise<T>): Promise<T> {
    const client =
      this.#idle.pop() ?? (await new Promise<RkvActorClient>((resolve) => this.#waiting.push(resolve)));
    try {
      const result = await command(client);
      this.#leaders[shard] = client.leaderOf(shard);
      return result;
    } catch (error) {
      if (error instanceof ClusterUnavailableError) throw new BackendUnavailableError(error.message);
      throw error;
    } finally {
      const next = this.#waiting.shift();
      if (next !== undefined) next(client);
      else this.#idle.push(client);
    }
  }
}

/**
 * What the RESP front needs from a key-value store: `KvBackend` (issue 5, §2).
 *
 * Every operation is asynchronous because something real sits behind it: a Multi-Paxos round for
 * a write, a message to the memtable actor on the NIC (or a leader read) for a read. The front
 * keeps each connection's replies in request order whatever order these promises settle in.
 *
 * Key and value buffers handed to the backend may be views into the socket's receive buffers:
 * valid for as long as they are referenced, but a backend that keeps one (a store) should copy it,
 * or it pins the rest of the bytes that arrived with it. Keys are binary (any bytes).
 *
 * Telling the client "not here": reject with `NotLeaderError` (the front replies
 * `-READONLY this replica is not the leader; the leader is host:port …`) or with
 * `BackendUnavailableError` (`-TRYAGAIN reason`); see errors.ts. Any other rejection is a bug or a
 * failure the client cannot act on: `-ERR internal error: <message>`.
 */

/** When SET writes: always, only if the key is absent (NX), only if it is present (XX). */
export type SetCondition = 'always' | 'if-absent' | 'if-present';

/** `name:value` lines for an INFO section; names are ASCII words (others are made safe). */
export type InfoFields = ReadonlyArray<readonly [name: string, value: string | number]>;

/** What INFO reports about the store behind the front. */
export interface KvBackendInfo {
  /**
   * This replica's role. `leader` and `standalone` show as `role:master` in INFO's `# Replication`
   * section, `follower` as `role:slave` — the words Redis clients and tools look for.
   */
  readonly role: 'leader' | 'follower' | 'standalone';
  /** The leader's RESP address (`host:port`), when known: INFO shows it as `master_host`/`master_port` on a follower and `ipipe_leader` everywhere. */
  readonly leaderAddress?: string;
  /** Extra lines for `# Replication` (after `role:`). */
  readonly replication?: InfoFields;
  /** The `# Ipipe` section: replica id, the leader's id, ballot, shards, placement… */
  readonly ipipe?: InfoFields;
}

/** One SCAN page: the cursor to continue from ("0": done) and the keys (unfiltered by MATCH). */
export interface KvScanPage {
  readonly cursor: string;
  readonly keys: readonly Buffer[];
}

/** The store behind the RESP front. */
export interface KvBackend {
  /** The value, or null when the key is absent. */
  get(key: Buffer): Promise<Buffer | null>;
  /** Stores the value if `condition` holds; resolves true when it wrote. */
  set(key: Buffer, value: Buffer, condition: SetCondition): Promise<boolean>;
  /** Deletes the keys; resolves how many existed (a key named twice counts once, as in Redis). */
  del(keys: readonly Buffer[]): Promise<number>;
  /** How many of the keys exist; a key named twice counts twice, as in Redis. */
  exists(keys: readonly Buffer[]): Promise<number>;
  /** One entry per key, in order: the value or null. */
  mget(keys: readonly Buffer[]): Promise<ReadonlyArray<Buffer | null>>;
  /** Number of keys. */
  dbsize(): Promise<number>;
  /**
   * One SCAN page from `cursor` ("0": the start; else one this backend returned, scan-cursors.ts)
   * of about `count` keys. Optional: without it SCAN replies -ERR.
   */
  scan?(cursor: string, count: number): Promise<KvScanPage>;
  /** Role and the `# Ipipe` INFO section. */
  info(): Promise<KvBackendInfo>;
}

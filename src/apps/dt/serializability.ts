/**
 * A conflict-serializability checker over a recorded history (the correctness criterion of
 * FaSST's OCC and of iPipe's DT; Adya's dependency graphs, as Elle and Jepsen use them).
 *
 * Input: the committed transactions, each with the versions it read and the versions it installed.
 * Versions are per key; version 0 is the initial state (written by a virtual T0). In DT every
 * commit installs lock-time version + 1, so committed versions of a key form the chain 0, 1, 2, …
 *
 * Edges between committed transactions, per key:
 *   ww  writer of version v  →  writer of the next installed version after v
 *   wr  writer of version v  →  every reader of v
 *   rw  reader of version v  →  writer of the next installed version after v  (anti-dependency)
 *
 * The history is conflict-serializable iff this graph is acyclic; a topological order is then an
 * equivalent serial order (returned). Before the graph, the checker rejects what no serial order
 * can explain: two transactions installing the same version of a key (a lost update that even
 * skipped the version bump), a read of a version no committed transaction installed (a dirty read
 * of an aborted or unlogged write), a transaction reading one key at two versions (a non-repeatable
 * read), and — with `contiguousVersions` — a gap in a key's chain (an install not in the history).
 *
 * Cycles are found with Tarjan's strongly connected components (iterative, so a long history does
 * not overflow the stack) and one cycle per component is reported with its edge kinds and keys.
 */

/** One key/version a transaction read or installed. */
export interface KeyVersion {
  readonly key: string;
  readonly version: number;
}

/** A committed transaction as the history records it. */
export interface HistoryTxn {
  readonly id: string;
  readonly reads: readonly KeyVersion[];
  readonly writes: readonly KeyVersion[];
}

/** The kind of a dependency edge. */
export type EdgeKind = 'ww' | 'wr' | 'rw';

/** One step of a reported cycle: `from` must precede `to` because of `kind` on `key`. */
export interface CycleStep {
  readonly from: string;
  readonly to: string;
  readonly kind: EdgeKind;
  readonly key: string;
}

/** Why a history is not serializable. Narrow on `kind`. */
export type Violation =
  | { readonly kind: 'cycle'; readonly cycle: readonly CycleStep[] }
  | {
      readonly kind: 'duplicate-version';
      readonly key: string;
      readonly version: number;
      readonly txns: readonly string[];
    }
  | {
      readonly kind: 'read-of-unknown-version';
      readonly txn: string;
      readonly key: string;
      readonly version: number;
    }
  | {
      readonly kind: 'non-repeatable-read';
      readonly txn: string;
      readonly key: string;
      readonly versions: readonly number[];
    }
  | { readonly kind: 'version-gap'; readonly key: string; readonly missing: number }
  | { readonly kind: 'duplicate-txn'; readonly txn: string };

/** The checker's verdict. Narrow on `ok`. */
export type SerializabilityResult =
  | { readonly ok: true; readonly serialOrder: readonly string[]; readonly edges: number }
  | { readonly ok: false; readonly violations: readonly Violation[] };

/** Options of `checkSerializable`. */
export interface CheckOptions {
  /** Require each key's installed versions to be 1, 2, 3, … without gaps (true for DT). */
  readonly contiguousVersions?: boolean;
  /** Stop reporting after this many violations (default 10). */
  readonly maxViolations?: number;
}

/** One line per violation, for test failures and logs. */
export function describeViolation(violation: Violation): string {
  switch (violation.kind) {
    case 'cycle':
      return `cycle: ${violation.cycle.map((step) => `${step.from} -${step.kind}(${step.key})-> ${step.to}`).join(', ')}`;
    case 'duplicate-version':
      return `lost update: ${violation.txns.join(' and ')} both installed version ${violation.version} of ${violation.key}`;
    case 'read-of-unknown-version':
      return `${violation.txn} read version ${violation.version} of ${violation.key}, which no committed transaction installed (aborted or lost write)`;
    case 'non-repeatable-read':
      return `${violation.txn} read ${violation.key} at versions ${violation.versions.join(', ')}`;
    case 'version-gap':
      return `version ${violation.missing} of ${violation.key} was installed by no committed transaction`;
    case 'duplicate-txn':
      return `transaction ${violation.txn} appears twice in the history`;
  }
}

const INITIAL = '(initial)';

/** Checks `history` for conflict-serializability (see the header). */
export function checkSerializable(
  history: readonly HistoryTxn[],
  options: CheckOptions = {},
): SerializabilityResult {
  const maxViolations = options.maxViolations ?? 10;
  const violations: Violation[] = [];
  const report = (violation: Violation): boolean => {
    violations.push(violation);
    return violations.length >= maxViolations;
  };

  // Index transactions; node 0 is the initial state.
  const ids: string[] = [INITIAL];
  const indexOf = new Map<string, number>();
  for (const txn of history) {
    if (indexOf.has(txn.id)) {
      if (report({ kind: 'duplicate-txn', txn: txn.id })) return { ok: false, violations };
      continue;
    }
    indexOf.set(txn.id, ids.length);
    ids.push(txn.id);
  }

  // Per key: version → installing transaction index (0 for the initial version).
  const installs = new Map<string, Map<number, number>>();
  for (const txn of history) {
    const node = indexOf.get(txn.id)!;
    for (const write of txn.writes) {
      let versions = installs.get(write.key);
      if (!versions) {
        versions = new Map([[0, 0]]);
        installs.set(write.key, versions);
      }
      const other = versions.get(write.version);
      if (other !== undefined && other !== node) {
        const txns = [ids[other]!, txn.id];
        if (report({ kind: 'duplicate-version', key: write.key, version: write.version, txns })) {
          return { ok: false, violations };
        }
        continue;
      }
      versions.set(write.version, node);
    }
  }

  // Sorted versions per key, and the next installed version after each.
  const sorted = new Map<string, number[]>();
  for (const [key, versions] of installs) {
    const list = [...versions.keys()].sort((a, b) => a - b);
    sorted.set(key, list);
    if (options.contiguousVersions) {
      for (let i = 0; i < list.length; i++) {
        if (list[i] !== i && report({ kind: 'version-gap', key, missing: i }))
          return { ok: false, violations };
        if (list[i] !== i) break;
      }
    }
  }
  const nextInstalled = (key: string, version: number): number | undefined => {
    const list = sorted.get(key);
    if (!list) return undefined;
    // Binary search for the first version > `version`.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]! <= version) lo = mid + 1;
      else hi = mid;
    }
    return list[lo];
  };

  const adjacency: Map<number, { kind: EdgeKind; key: string }>[] = ids.map(() => new Map());
  let edgeCount = 0;
  const addEdge = (from: number, to: number, kind: EdgeKind, key: string): void => {
    if (from === to) return;
    const edges = adjacency[from]!;
    if (!edges.has(to)) {
      edges.set(to, { kind, key });
      edgeCount++;
    }
  };

  // ww: consecutive installs of each key.
  for (const [key, list] of sorted) {
    const versions = installs.get(key)!;
    for (let i = 1; i < list.length; i++) {
      addEdge(versions.get(list[i - 1]!)!, versions.get(list[i]!)!, 'ww', key);
    }
  }

  for (const txn of history) {
    const node = indexOf.get(txn.id)!;
    const seen = new Map<string, number[]>();
    for (const read of txn.reads) {
      const versions = seen.get(read.key);
      if (versions) {
        if (!versions.includes(read.version)) versions.push(read.version);
      } else {
        seen.set(read.key, [read.version]);
      }
      const writer = read.version === 0 ? 0 : installs.get(read.key)?.get(read.version);
      if (writer === undefined) {
        if (report({ kind: 'read-of-unknown-version', txn: txn.id, key: read.key, version: read.version })) {
          return { ok: false, violations };
        }
        continue;
      }
      addEdge(writer, node, 'wr', read.key); // wr
      const next = nextInstalled(read.key, read.version);
      if (next !== undefined) {
        const overwriter = installs.get(read.key)!.get(next)!;
        // A transaction that read v and itself installed the next version is a read-modify-write,
        // not an anti-dependency on itself.
        addEdge(node, overwriter, 'rw', read.key);
      }
    }
    for (const [key, versions] of seen) {
      if (versions.length > 1 && report({ kind: 'non-repeatable-read', txn: txn.id, key, versions })) {
        return { ok: false, violations };
      }
    }
  }

  const cycles = findCycles(adjacency, ids, maxViolations - violations.length);
  for (const cycle of cycles) violations.push({ kind: 'cycle', cycle });
  if (violations.length > 0) return { ok: false, violations };
  return { ok: true, serialOrder: topologicalOrder(adjacency, ids), edges: edgeCount };
}

/** One cycle inside each non-trivial strongly connected component (Tarjan, iterative). */
function findCycles(
  adjacency: readonly Map<number, { kind: EdgeKind; key: string }>[],
  ids: readonly string[],
  limit: number,
): CycleStep[][] {
  const count = adjacency.length;
  const index = new Int32Array(count).fill(-1);
  const low = new Int32Array(count);
  const onStack = new Uint8Array(count);
  const component = new Int32Array(count).fill(-1);
  const stack: number[] = [];
  let nextIndex = 0;
  let components = 0;
  const nonTrivial: number[] = [];
  const neighbours = adjacency.map((edges) => [...edges.keys()]);

  for (let root = 0; root < count; root++) {
    if (index[root] !== -1) continue;
    const work: [number, number][] = [[root, 0]];
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const [node, position] = frame;
      if (position === 0) {
        index[node] = low[node] = nextIndex++;
        stack.push(node);
        onStack[node] = 1;
      }
      const list = neighbours[node]!;
      if (position < list.length) {
        frame[1] = position + 1;
        const next = list[position]!;
        if (index[next] === -1) work.push([next, 0]);
        else if (onStack[next]) low[node] = Math.min(low[node]!, index[next]!);
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low[parent[0]] = Math.min(low[parent[0]]!, low[node]!);
      if (low[node] === index[node]) {
        let size = 0;
        for (;;) {
          const member = stack.pop()!;
          onStack[member] = 0;
          component[member] = components;
          size++;
          if (member === node) break;
        }
        if (size > 1) nonTrivial.push(node);
        components++;
      }
    }
  }

  const cycles: CycleStep[][] = [];
  for (const start of nonTrivial) {
    if (cycles.length >= limit) break;
    cycles.push(cycleThrough(start, component[start]!, adjacency, component, ids));
  }
  return cycles;
}

/** A shortest cycle through `start` within its component (breadth-first search back to it). */
function cycleThrough(
  start: number,
  componentId: number,
  adjacency: readonly Map<number, { kind: EdgeKind; key: string }>[],
  component: Int32Array,
  ids: readonly string[],
): CycleStep[] {
  const parent = new Map<number, number>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const next of adjacency[node]!.keys()) {
      if (component[next] !== componentId) continue;
      if (next === start) {
        const path = [node];
        for (let at = node; at !== start; ) {
          at = parent.get(at)!;
          path.push(at);
        }
        path.reverse();
        return path.map((from, i) => {
          const to = path[i + 1] ?? start;
          const edge = adjacency[from]!.get(to)!;
          return { from: ids[from]!, to: ids[to]!, kind: edge.kind, key: edge.key };
        });
      }
      if (!parent.has(next)) {
        parent.set(next, node);
        queue.push(next);
      }
    }
  }
  return [];
}

/** Kahn's algorithm; ties broken by history order, so the result is deterministic. */
function topologicalOrder(adjacency: readonly Map<number, unknown>[], ids: readonly string[]): string[] {
  const inDegree = new Int32Array(adjacency.length);
  for (const edges of adjacency) for (const to of edges.keys()) inDegree[to]!++;
  const ready: number[] = [];
  for (let node = 0; node < adjacency.length; node++) if (inDegree[node] === 0) ready.push(node);
  const order: string[] = [];
  while (ready.length > 0) {
    ready.sort((a, b) => b - a);
    const node = ready.pop()!;
    if (node !== 0) order.push(ids[node]!);
    for (const to of adjacency[node]!.keys()) {
      inDegree[to]!--;
      if (inDegree[to] === 0) ready.push(to);
    }
  }
  return order;
}

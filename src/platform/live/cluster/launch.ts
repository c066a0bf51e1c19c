/**
 * Starts a cluster of live nodes as separate OS processes on this machine, one per node of a
 * cluster file (`ipipe run --cluster <file> --node-id <n> --json` each), and keeps a handle on
 * each: its pid, where it serves, and how to stop, kill (SIGKILL, as a crash) or restart it.
 * Separate processes, not threads, because the point of a cluster is that one node can die while
 * the others go on.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ClusterStartError } from '../../../errors.ts';
import type { ClusterSpec } from './cluster-file.ts';

/** The `ipipe` entry point of this package (bin/ipipe.mjs runs sources through tsx, or dist/). */
const IPIPE_BIN = fileURLToPath(new URL('../../../../bin/ipipe.mjs', import.meta.url));

// A node process that did not come up: the error's message carries its stderr's last lines.
export { ClusterStartError };

/** What a node process printed once serving (`ipipe run --json`'s banner). */
export interface NodeBanner {
  readonly udp: { readonly address: string; readonly port: number };
  /** The admin endpoint (`/stats`, `/metrics`) when the node was started with `--metrics-port`. */
  readonly admin: string | null;
  readonly actors: readonly { readonly id: number; readonly name: string; readonly domain: string }[];
}

export interface ClusterNodeProcess {
  readonly nodeId: number;
  readonly pid: number;
  readonly banner: NodeBanner;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  readonly exited: Promise<number | string>;
}

export interface LaunchOptions {
  /** The cluster file every node reads (written by the caller). */
  readonly file: string;
  readonly spec: ClusterSpec;
  /** How long a node may take to start serving (default 60 s: each starts worker threads). */
  readonly startTimeoutMs?: number;
  /** Extra `ipipe run` arguments for every node (e.g. ['--watchdog', '2s']). */
  readonly extraArgs?: readonly string[];
  /** Where node processes' stderr goes (default: kept, and shown if a node fails to start). */
  readonly onStderr?: (nodeId: number, text: string) => void;
}

export class LocalCluster {
  readonly spec: ClusterSpec;
  readonly #options: LaunchOptions;
  readonly #processes = new Map<number, { child: ChildProcess; handle: ClusterNodeProcess }>();

  private constructor(options: LaunchOptions) {
    this.spec = options.spec;
    this.#options = options;
  }

  /** Starts every node of the file and resolves once all serve; stops them all if one fails. */
  static async launch(options: LaunchOptions): Promise<LocalCluster> {
    const cluster = new LocalCluster(options);
    // Wait for every start to settle, so that a failure stops the nodes that did come up.
    const started = await Promise.allSettled(options.spec.nodes.map((node) => cluster.start(node.id)));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed !== undefined) {
      await cluster.stopAll();
      throw failed.reason;
    }
    return cluster;
  }

  /** The running node processes, by node id. */
  get nodes(): ClusterNodeProcess[] {
    return [...this.#processes.values()].map((p) => p.handle).sort((a, b) => a.nodeId - b.nodeId);
  }

  node(nodeId: number): ClusterNodeProcess | undefined {
    return this.#processes.get(nodeId)?.handle;
  }

  /** Starts (or restarts) node `nodeId`'s process and resolves once it serves. */
  async start(nodeId: number): Promise<ClusterNodeProcess> {
    const running = this.#processes.get(nodeId);
    if (running !== undefined && running.child.exitCode === null && running.child.signalCode === null) {
      return running.handle;
    }
    const child = spawn(
      process.execPath,
      [
        IPIPE_BIN,
        'run',
        '--cluster',
        this.#options.file,
        '--node-id',
        String(nodeId),
        '--json',
        ...(this.#options.extraArgs ?? []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | string>((resolve) => {
      child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    });
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      stderr = (stderr + text).slice(-4_000);
      this.#options.onStderr?.(nodeId, text);
    });
    const banner = await new Promise<NodeBanner>((resolve, reject) => {
      let stdout = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new ClusterStartError(
            nodeId,
            `node ${nodeId} did not start serving in time; its stderr:\n${stderr}`,
          ),
        );
      }, this.#options.startTimeoutMs ?? 60_000);
      child.stdout?.setEncoding('utf8');
      const onData = (text: string) => {
        stdout += text;
        try {
          const parsed = JSON.parse(stdout) as NodeBanner;
          clearTimeout(timer);
          child.stdout?.off('data', onData);
          child.stdout?.resume();
          resolve(parsed);
        } catch {
          // not the whole document yet
        }
      };
      child.stdout?.on('data', onData);
      exited.then((code) => {
        clearTimeout(timer);
        reject(
          new ClusterStartError(
            nodeId,
            `node ${nodeId} exited (${code}) before serving; its stderr:\n${stderr}`,
          ),
        );
      });
    });
    const handle: ClusterNodeProcess = { nodeId, pid: child.pid ?? -1, banner, exited };
    this.#processes.set(nodeId, { child, handle });
    return handle;
  }

  /** SIGKILLs node `nodeId` (a crash: nothing drains) and resolves once it is gone. */
  async kill(nodeId: number): Promise<void> {
    const running = this.#processes.get(nodeId);
    if (running === undefined) return;
    running.child.kill('SIGKILL');
    await running.handle.exited;
  }

  /** SIGTERMs node `nodeId` (graceful: drain, stop cores) and resolves with its exit code. */
  async stop(nodeId: number): Promise<number | string | undefined> {
    const running = this.#processes.get(nodeId);
    if (running === undefined) return undefined;
    if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGTERM');
    return running.handle.exited;
  }

  /** Stops every node (gracefully) and resolves once all have exited. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#processes.keys()].map((id) => this.stop(id)));
  }
}

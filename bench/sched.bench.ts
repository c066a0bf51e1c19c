/**
 * Scheduler overhead per request: the bookkeeping and decisions the hybrid scheduler adds to
 * each request (arrive → takeFcfs → complete, with its EWMAs, windows and checks), against a
 * plain loop doing the unavoidable part (a FIFO push and shift and a completion count), measured
 * in the same run. Target (issue 2): under 200 ns per request.
 */

import { pathToFileURL } from 'node:url';
import { Mailbox } from '../src/actor/mailbox.ts';
import { actorId } from '../src/ids.ts';
import { HybridScheduler } from '../src/sched/hybrid-scheduler.ts';
import type { SchedRequest } from '../src/sched/types.ts';
import { type BenchRow, medianOf, printRows } from './report.ts';

const REQUESTS = 1_000_000;
const ACTORS = 8;
const CORES = 8;

function makeRequests(): SchedRequest[] {
  const requests: SchedRequest[] = [];
  for (let i = 0; i < REQUESTS; i++)
    requests.push({ actor: actorId(1 + (i % ACTORS)), sizeBytes: 512, arrivalNs: i * 100 });
  return requests;
}

/** ns per request through the scheduler: each request arrives, is taken by a core and completed. */
function schedulerRun(requests: readonly SchedRequest[], policy: 'hybrid' | 'drr'): number {
  const scheduler = new HybridScheduler({ cores: CORES, policy });
  for (let a = 1; a <= ACTORS; a++)
    scheduler.addActor({ id: actorId(a), placement: 'any', exclusive: a % 2 === 0 });
  let decisions = 0;
  const start = performance.now();
  for (let i = 0; i < requests.length; i++) {
    const request = requests[i] as SchedRequest;
    const now = request.arrivalNs;
    scheduler.arrive(request, now);
    const core = i % CORES;
    const work = policy === 'drr' ? scheduler.takeDrr(core, now) : scheduler.takeFcfs(core, now);
    if (work?.kind === 'exec') decisions += scheduler.complete(core, now + 80, 80).length;
  }
  const elapsedMs = performance.now() - start;
  if (decisions < 0) throw new Error('unreachable');
  return (elapsedMs * 1e6) / requests.length;
}

/** The floor any scheduler pays: queue the request, dequeue it, count it. */
function plainLoop(requests: readonly SchedRequest[]): number {
  const queue = new Mailbox<SchedRequest>();
  const done = new Float64Array(ACTORS + 1);
  const start = performance.now();
  for (let i = 0; i < requests.length; i++) {
    queue.push(requests[i] as SchedRequest);
    const request = queue.shift() as SchedRequest;
    done[request.actor] = (done[request.actor] as number) + 1;
  }
  const elapsedMs = performance.now() - start;
  return (elapsedMs * 1e6) / requests.length;
}

export async function runSchedulerBench(): Promise<BenchRow[]> {
  const requests = makeRequests();
  const repetitions = 7;
  // Warm-up so the JIT has compiled every path before timing.
  schedulerRun(requests, 'hybrid');
  schedulerRun(requests, 'drr');
  plainLoop(requests);
  const hybrid = medianOf(repetitions, () => schedulerRun(requests, 'hybrid'));
  const drr = medianOf(repetitions, () => schedulerRun(requests, 'drr'));
  const plain = medianOf(repetitions, () => plainLoop(requests));
  return [
    { section: 'scheduler', name: 'plain loop (FIFO push+shift+count)', value: plain, unit: 'ns/request' },
    {
      section: 'scheduler',
      name: 'hybrid: arrive+takeFcfs+complete',
      value: hybrid,
      unit: 'ns/request',
      ratio: hybrid / plain,
      baseline: 'plain loop',
      target: '< 200 ns',
      pass: hybrid < 200,
    },
    {
      section: 'scheduler',
      name: 'DRR: arrive+takeDrr+complete',
      value: drr,
      unit: 'ns/request',
      ratio: drr / plain,
      baseline: 'plain loop',
      target: '< 200 ns',
      pass: drr < 200,
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  printRows(await runSchedulerBench());
}

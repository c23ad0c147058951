/**
 * `paced()` on a thread of its own, so that a second stream of requests (the reports sent beside the
 * API reads) does not share the event loop that times the first: on one loop, a read's answer would
 * wait behind the other stream's answers in the sender, and the sender's delay would count as the
 * server's. Started by `pacedOnThread`; sends viewers' reports (`view` at 0 %, a new load each).
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { paced, type PacedRequest, type PacedResult } from './paced.ts';

export interface ReportStream {
  base: string;
  rate: number;
  seconds: number;
  connections: number;
  /** The watch page's `/watch/<uuid>/analytics`. */
  path: string;
  userAgent: string;
  /** Makes each run's load ids its own. */
  prefix: string;
}

/** The n-th viewer's report of a stream: a new load's start of playback, one of 5,000 visitors. */
export function viewReport(path: string, userAgent: string, loadId: string, n: number): PacedRequest {
  return {
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', 'user-agent': userAgent },
    body: JSON.stringify({ type: 'view', percent_watched: 0, chapter: 0, player_load_id: loadId, visitor_uuid: `visitor-${n % 5000}` }),
  };
}

export function pacedOnThread(stream: ReportStream): Promise<PacedResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./paced-thread.mjs', import.meta.url), { workerData: stream });
    worker.once('message', (result: PacedResult) => resolve(result));
    worker.once('error', reject);
    worker.once('exit', (code) => code !== 0 && reject(new Error(`the report sender exited with ${code}`)));
  });
}

if (!isMainThread && parentPort) {
  const s = workerData as ReportStream;
  let n = 0;
  const result = await paced({
    base: s.base,
    rate: s.rate,
    seconds: s.seconds,
    connections: s.connections,
    next: () => viewReport(s.path, s.userAgent, `${s.prefix}-${++n}`, n),
  });
  parentPort.postMessage(result);
}

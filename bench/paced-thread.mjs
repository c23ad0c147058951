// A worker thread's entry: Node starts workers without the parent's `--import tsx` hooks, so the
// thread registers tsx itself before loading the TypeScript sender (bench/paced-worker.ts).
import { register } from 'tsx/esm/api';

register();
await import('./paced-worker.ts');

// `npm start`: the server from the bundle the build left in dist/ (a start in well under a second),
// or from the TypeScript through tsx when src/ changed since (or nothing was built). The first start
// without a code cache writes one a few seconds in, once the functions a start and a first request
// run are compiled (scripts/run-bundle.mjs).
import { run } from './run-bundle.mjs';

await run('server', {
  cacheAfterMs: 3000,
  stale: 'reelbase: src/ changed since the last build; starting through tsx (`npm run build` starts faster)\n',
});

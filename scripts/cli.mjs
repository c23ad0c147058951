// `npm run reelbase -- …`: the admin CLI from its bundle (dist/cli.cjs), or through tsx when src/
// changed since the last build. A command compiled without a code cache writes one as it exits
// (scripts/run-bundle.mjs): the CLI started in 2.8 s through tsx, most of it loading the modules.
import { run } from './run-bundle.mjs';

await run('cli', { cacheAfterMs: 'exit' });

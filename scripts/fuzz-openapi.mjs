// The long fuzz pass over every operation of /dashboard/openapi.json; the suite runs a short one
// (test/fuzz-openapi.test.ts) with the same generators (test/helpers/openapi-arbitraries.ts).
//
//   node --import tsx scripts/fuzz-openapi.mjs
//
// FUZZ_REQUESTS  requests in all (default 20000), spread evenly over the operations
// FUZZ_SEED      the seed to replay a run (printed at the start)
// FUZZ_DIALECT   sqlite (default) or postgres, with TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test)
//
// Prints the number of requests sent and the answers by status; exits 1 when an answer was a 5xx or an
// error outside the error shape, after printing each such request with the error the app logged for it.
// (JavaScript, so that it needs no tsconfig of its own; tsx loads the TypeScript it imports.)
import { longFuzzRun } from '../test/helpers/openapi-arbitraries.ts';

const stats = await longFuzzRun({
  total: Number(process.env.FUZZ_REQUESTS ?? 20_000),
  dialect: process.env.FUZZ_DIALECT === 'postgres' ? 'postgres' : 'sqlite',
  seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31,
  print: (line) => console.log(line),
});
process.exitCode = stats.failures.length > 0 ? 1 : 0;

import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * A package loaded the first time it is used rather than at start-up: the S3 SDK, ExcelJS, nodemailer
 * and ioredis cost hundreds of milliseconds to load, and most processes never need some of them
 * (docs/performance.md, "Cold start"). Import its types with `import type` and call the loader where
 * a value is needed.
 */
export function whenUsed<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(name) as T);
}

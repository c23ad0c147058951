// A worker-only process: the same entry point with ROLE=worker.
process.env.ROLE = 'worker';
await import('./server.ts');

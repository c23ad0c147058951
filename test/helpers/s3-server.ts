import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * A real S3-compatible server process on a loopback port for the tests (test/helpers/s3-server-process.mjs:
 * the npm `s3rver`, storing under a temporary folder), and the environment that points Reelbase at it.
 */
export interface S3Server {
  endpoint: string;
  bucket: string;
  /** The folder s3rver keeps the bucket in (to check what it holds). */
  directory: string;
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'reelbase'): Promise<S3Server> {
  const directory = await fsp.mkdtemp(path.join(os.tmpdir(), 'reelbase-s3-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', path.join(import.meta.dirname, 's3-server-process.mjs'), directory, bucket], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n')) resolve(Number(line));
    });
    child.once('exit', (code) => reject(new Error(`the S3 server exited (${code}) before it listened`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    directory,
    env: {
      STORAGE_URL: `s3://${bucket}/media`,
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await fsp.rm(directory, { recursive: true, force: true });
    },
  };
}

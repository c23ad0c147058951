/**
 * An S3-compatible server process for the tests: the npm `s3rver` on a loopback port, storing under
 * the folder given as argv[2], with the bucket argv[3]. Started by test/helpers/s3-server.ts, which
 * reads the port from the first line this prints. It runs with --openssl-legacy-provider: s3rver makes
 * listing continuation tokens with DES.
 *
 * s3rver lacks two multipart operations that @tus/s3-store and the SDK's lib-storage use, ListParts
 * and AbortMultipartUpload: they are answered here from s3rver's own upload folders, in S3's XML,
 * before its router sees them. And s3rver deletes the objects of one DeleteObjects request in
 * parallel, each removing the folders it leaves empty, so two race on a shared folder: its deletes are
 * taken one at a time. And s3rver writes a PUT's body straight over the object, so a request cut off
 * halfway leaves half an object where S3 keeps the previous version: bodies are written to a file of
 * their own and put in place only once whole. (Faults of the test server, not of S3.)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const require = createRequire(import.meta.url);
const S3rver = require('s3rver');
const FilesystemStore = require('s3rver/lib/stores/filesystem.js');

const [directory, bucket] = process.argv.slice(2);

const deleteObject = FilesystemStore.prototype.deleteObject;
let deletes = Promise.resolve();
FilesystemStore.prototype.deleteObject = function (...args) {
  const run = deletes.then(() => deleteObject.apply(this, args));
  deletes = run.catch(() => {});
  return run;
};

const putObject = FilesystemStore.prototype.putObject;
FilesystemStore.prototype.putObject = async function (object) {
  if (Buffer.isBuffer(object.content)) return putObject.call(this, object);
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  await fsp.mkdir(path.dirname(objectPath), { recursive: true });
  const incoming = `${objectPath}.incoming-${crypto.randomBytes(6).toString('hex')}`;
  const md5 = crypto.createHash('md5');
  let size = 0;
  const count = new Transform({
    transform(chunk, encoding, callback) {
      md5.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  // A body whose connection goes away ends here, and so does its file.
  const cut = new Promise((_, reject) => object.content.once('aborted', () => reject(new Error('the request was cut off'))));
  try {
    await Promise.race([pipeline(object.content, count, fs.createWriteStream(incoming)), cut]);
    await fsp.rename(incoming, objectPath);
  } catch (err) {
    await fsp.rm(incoming, { force: true });
    throw err;
  }
  const digest = md5.digest('hex');
  await this.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
};

const xmlEscape = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function noSuchUpload(ctx, uploadId) {
  ctx.status = 404;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message><UploadId>${xmlEscape(uploadId)}</UploadId></Error>`;
}

const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  directory,
  silent: process.env.S3RVER_LOG !== '1',
  configureBuckets: [{ name: bucket, configs: [] }],
});
const uploadsDir = path.join(directory, bucket, '._S3rver_uploads');
server.middleware.unshift(async (ctx, next) => {
  const uploadId = ctx.query.uploadId;
  const [, inBucket, ...keyParts] = ctx.path.split('/');
  if (!uploadId || inBucket !== bucket || keyParts.length === 0 || !/^[\w-]+$/.test(uploadId)) return next();
  const dir = path.join(uploadsDir, uploadId);
  if (ctx.method === 'GET') {
    if (!fs.existsSync(dir)) return noSuchUpload(ctx, uploadId);
    const numbers = (await fsp.readdir(dir))
      .filter((f) => /^\d+$/.test(f))
      .map(Number)
      .sort((a, b) => a - b);
    const parts = await Promise.all(
      numbers.map(async (n) => {
        const stat = await fsp.stat(path.join(dir, String(n)));
        const md5 = (await fsp.readFile(path.join(dir, `${n}.md5`), 'utf8')).trim();
        return `<Part><PartNumber>${n}</PartNumber><LastModified>${stat.mtime.toISOString()}</LastModified><ETag>"${md5}"</ETag><Size>${stat.size}</Size></Part>`;
      }),
    );
    ctx.status = 200;
    ctx.type = 'application/xml';
    ctx.body = `<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>${bucket}</Bucket><Key>${xmlEscape(decodeURIComponent(keyParts.join('/')))}</Key><UploadId>${uploadId}</UploadId><PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>${numbers.at(-1) ?? 0}</NextPartNumberMarker><MaxParts>10000</MaxParts><IsTruncated>false</IsTruncated>${parts.join('')}</ListPartsResult>`;
    return;
  }
  if (ctx.method === 'DELETE') {
    if (!fs.existsSync(dir)) return noSuchUpload(ctx, uploadId);
    await fsp.rm(dir, { recursive: true, force: true });
    ctx.status = 204;
    ctx.body = null;
    return;
  }
  return next();
});

const { port } = await server.run();
process.stdout.write(`${port}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));

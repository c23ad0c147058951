/** `s3://BUCKET/PREFIX` (STORAGE_URL): the bucket, and the prefix every key is stored under ('' for none). */
export interface S3Location {
  bucket: string;
  prefix: string;
}

/** A prefix is `/`-separated segments of [A-Za-z0-9._-], none starting with a dot (as media keys). */
const PREFIX = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,7}$/;

/** The bucket and prefix of STORAGE_URL; null when it is not `s3://BUCKET[/PREFIX]` with a valid bucket name. */
export function parseStorageUrl(url: string): S3Location | null {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match) return null;
  const prefix = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix !== '' && !PREFIX.test(prefix)) return null;
  return { bucket: match[1], prefix };
}

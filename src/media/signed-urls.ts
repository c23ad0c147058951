import { createHmac } from 'node:crypto';
import { sameSecret } from '../lib/constant-time.ts';

/** Signed, expiring URLs for media files: HMAC-SHA256 over the path and the expiry. */
export class UrlSigner {
  constructor(
    private readonly secret: string,
    private readonly baseUrl: string,
    private readonly ttlSeconds = 6 * 60 * 60,
  ) {}

  private mac(path: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${path}\n${expires}`).digest('base64url');
  }

  sign(path: string, nowSeconds: number): string {
    const expires = nowSeconds + this.ttlSeconds;
    return `${this.baseUrl}${path}?expires=${expires}&signature=${this.mac(path, expires)}`;
  }

  verify(path: string, expires: number, signature: string, nowSeconds: number): boolean {
    if (!Number.isInteger(expires) || expires < nowSeconds) return false;
    return sameSecret(this.mac(path, expires), signature);
  }

  /**
   * A link to `file` that also admits every other key under `prefix` (an HLS ladder: its playlists name
   * their rungs and segments by relative URIs, which keep this path's token). The token is
   * `<expires>.<segments of prefix>.<signature>`, in the path so that relative URIs inherit it.
   */
  signFolder(folderPath: string, prefix: string, file: string, nowSeconds: number): string {
    const expires = nowSeconds + this.ttlSeconds;
    const depth = prefix.split('/').length;
    return `${this.baseUrl}${folderPath}${expires}.${depth}.${this.mac(`folder:${prefix}`, expires)}/${prefix}/${file}`;
  }

  /** Whether a folder token admits `key`; answers its expiry, or null. */
  verifyFolder(token: string, key: string, nowSeconds: number): number | null {
    const match = /^(\d{1,12})\.(\d{1,2})\.([\w-]{1,100})$/.exec(token);
    if (!match) return null;
    const [expires, depth] = [Number(match[1]), Number(match[2])];
    const segments = key.split('/');
    if (expires < nowSeconds || depth < 1 || depth >= segments.length) return null;
    return sameSecret(this.mac(`folder:${segments.slice(0, depth).join('/')}`, expires), match[3]) ? expires : null;
  }
}

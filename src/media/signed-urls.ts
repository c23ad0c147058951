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
}

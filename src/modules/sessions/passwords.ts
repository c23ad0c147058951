import { randomBytes, scrypt as scryptCallback, type ScryptOptions } from 'node:crypto';
import { sameSecret } from '../../lib/constant-time.ts';

/**
 * Passwords are hashed with scrypt (node:crypto), a memory-hard function: N = 2^15, r = 8, p = 1 is
 * 32 MiB and ~0.1 s per hash here (OWASP's minimum for scrypt is N = 2^17 with r = 8, p = 1, or the
 * same memory spread differently; we keep the parameters in each hash so that they can be raised and
 * old hashes still verify). The hash runs on libuv's thread pool, not the event loop.
 */
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;

export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 256;

function scrypt(password: string, salt: Buffer, options: ScryptOptions & { N: number; r: number; p: number }): Promise<Buffer> {
  // maxmem: 128 · N · r bytes, and room to spare.
  const maxmem = 256 * options.N * options.r;
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFKC'), salt, KEY_BYTES, { ...options, maxmem }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` is the one `stored` was made from; a malformed hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  const N = Number(n),
    R = Number(r),
    P = Number(p);
  if (scheme !== 'scrypt' || !salt || !key || ![N, R, P].every((x) => Number.isInteger(x) && x > 0) || N > 2 ** 20) return false;
  const derived = await scrypt(password, Buffer.from(salt, 'base64url'), { N, r: R, p: P });
  return sameSecret(derived.toString('base64url'), key);
}

/**
 * A hash to verify against when no user has the address, so that a wrong address costs the same
 * time as a wrong password and the answer's timing does not tell which addresses have accounts.
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}

/** Why a new password is refused, or null (NIST SP 800-63B: length, not composition rules). */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  const lower = password.toLowerCase();
  if (lower === email.toLowerCase() || lower === email.toLowerCase().split('@')[0]) return 'must not be your email address';
  if (/^(.)\1*$/.test(password)) return 'must not be one character repeated';
  return null;
}

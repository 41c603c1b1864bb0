// Passwords (DECISIONS §3): scrypt from node:crypto with OWASP's parameters (N=2^17, r=8, p=1).
// One scrypt run yields 64 bytes: the first 32 verify the password (only their SHA-256 is
// stored), the last 32 are the key that wraps the user's data key. The server never keeps a
// value that opens content without the password.
import { randomBytes, scrypt } from 'node:crypto';
import { constantTimeEqual, sha256 } from './secrets.js';
import { LIMITS } from '../config.js';

/**
 * Issue 11.1: at most LIMITS.passwordConcurrency scrypt runs at once (each ~0.5 s and 128 MiB at
 * the default cost). scrypt runs on libuv's thread pool (4 threads), which also serves the
 * WebCrypto HMAC that verifies session JWTs and file I/O: capping scrypt below the pool size keeps
 * threads free for them, so password hashing can never starve other requests. More calls wait in a
 * bounded queue; past it, `PasswordBusyError` (answered 429 with Retry-After).
 */
export class PasswordBusyError extends Error {
  constructor() {
    super('password hashing is saturated');
  }
}

let running = 0;
let peak = 0;
const waiting: (() => void)[] = [];

async function acquire(): Promise<void> {
  if (running < LIMITS.passwordConcurrency) {
    running++;
    peak = Math.max(peak, running);
    return;
  }
  if (waiting.length >= LIMITS.passwordQueue) throw new PasswordBusyError();
  await new Promise<void>((resolve) => waiting.push(resolve));
  // The releasing call handed its slot over: `running` is unchanged.
}

function release(): void {
  const next = waiting.shift();
  if (next) next();
  else running--;
}

/** For tests and the bench: scrypt runs now, the most seen at once, and callers waiting. */
export function passwordHashingStats(): { running: number; peak: number; waiting: number } {
  return { running, peak, waiting: waiting.length };
}

export function resetPasswordHashingPeak(): void {
  peak = running;
}

export type PasswordParams = { logN: number; r: number; p: number };

export type PasswordRecord = {
  salt: Buffer;
  params: PasswordParams;
  verifier: Buffer; // SHA-256 of the verification half
};

async function derive(password: string, salt: Buffer, params: PasswordParams): Promise<Buffer> {
  await acquire();
  try {
    return await deriveNow(password, salt, params);
  } finally {
    release();
  }
}

function deriveNow(password: string, salt: Buffer, params: PasswordParams): Promise<Buffer> {
  const N = 2 ** params.logN;
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      64,
      { N, r: params.r, p: params.p, maxmem: 256 * N * params.r + 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

export async function hashPassword(
  password: string,
  logN: number,
): Promise<{ record: PasswordRecord; kek: Buffer }> {
  const salt = randomBytes(16);
  const params = { logN, r: 8, p: 1 };
  const out = await derive(password, salt, params);
  return { record: { salt, params, verifier: sha256(out.subarray(0, 32)) }, kek: out.subarray(32) };
}

/** Returns the password KEK when the password is right, else null (constant-time check). */
export async function verifyPassword(password: string, record: PasswordRecord): Promise<Buffer | null> {
  const out = await derive(password, record.salt, record.params);
  return constantTimeEqual(sha256(out.subarray(0, 32)), record.verifier) ? out.subarray(32) : null;
}

/** A fixed record to spend the same time on unknown emails as on wrong passwords. */
export function decoyRecord(logN: number): PasswordRecord {
  return { salt: Buffer.alloc(16, 7), params: { logN, r: 8, p: 1 }, verifier: Buffer.alloc(32) };
}

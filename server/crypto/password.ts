// Passwords (DECISIONS §3): scrypt from node:crypto with OWASP's parameters (N=2^17, r=8, p=1).
// One scrypt run yields 64 bytes: the first 32 verify the password (only their SHA-256 is
// stored), the last 32 are the key that wraps the user's data key. The server never keeps a
// value that opens content without the password.
import { randomBytes, scrypt } from 'node:crypto';
import { constantTimeEqual, sha256 } from './secrets.js';

export type PasswordParams = { logN: number; r: number; p: number };

export type PasswordRecord = {
  salt: Buffer;
  params: PasswordParams;
  verifier: Buffer; // SHA-256 of the verification half
};

function derive(password: string, salt: Buffer, params: PasswordParams): Promise<Buffer> {
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

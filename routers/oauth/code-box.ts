// The authorization code's way from the approving device to the waiting browser page without the
// server keeping it readable. The page holds a random wait handle; the server keeps only its hash
// and the X25519 public key derived from it. At approval the code is sealed to that public key
// (ephemeral X25519 + HKDF + the seal module); only a request presenting the handle can open it.
import { createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { hkdf } from '../../core/crypto/secrets.js';
import { open, seal } from '../../core/crypto/seal.js';

const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex');

function privateFromHandle(handle: Buffer): KeyObject {
  const raw = hkdf(handle, 'cairn oauth wait x25519 v1');
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519, raw]), format: 'der', type: 'pkcs8' });
}

function rawPublic(key: KeyObject): Buffer {
  return (createPublicKey(key).export({ format: 'der', type: 'spki' }) as Buffer).subarray(SPKI_X25519.length);
}

function publicFromRaw(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_X25519, raw]), format: 'der', type: 'spki' });
}

/** The public key stored with the request. */
export function waitPublicKey(handle: Buffer): Buffer {
  return rawPublic(privateFromHandle(handle));
}

const aad = (requestId: string) => Buffer.from(`cairn-oauth-code\0${requestId}`, 'utf8');

export function sealToWait(publicKey: Buffer, requestId: string, code: Buffer): Buffer {
  const eph = generateKeyPairSync('x25519');
  const shared = diffieHellman({ privateKey: eph.privateKey, publicKey: publicFromRaw(publicKey) });
  const epub = rawPublic(eph.privateKey);
  const key = hkdf(shared, Buffer.concat([Buffer.from('cairn oauth code box v1'), epub, publicKey]));
  return Buffer.concat([epub, seal(key, aad(requestId), code)]);
}

/** Throws SealError when the handle is not the one the code was sealed to. */
export function openWithHandle(handle: Buffer, requestId: string, box: Buffer): Buffer {
  const priv = privateFromHandle(handle);
  const epub = box.subarray(0, 32);
  const shared = diffieHellman({ privateKey: priv, publicKey: publicFromRaw(epub) });
  const key = hkdf(shared, Buffer.concat([Buffer.from('cairn oauth code box v1'), epub, rawPublic(priv)]));
  return open(key, aad(requestId), box.subarray(32));
}

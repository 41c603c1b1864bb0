// core/crypto/secrets.ts computes HKDF-SHA256 with two HMACs instead of hkdfSync: it must give
// exactly what hkdfSync and RFC 5869 give, or every wrapped data key would stop opening.
import { hkdfSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hkdf } from '../../core/crypto/secrets.js';

describe('hkdf', () => {
  it('matches RFC 5869 test cases 1 and 3 (first 32 bytes of the OKM)', () => {
    const tc1 = hkdf(Buffer.alloc(22, 0x0b), Buffer.from('f0f1f2f3f4f5f6f7f8f9', 'hex'), Buffer.from('000102030405060708090a0b0c', 'hex'));
    expect(tc1.toString('hex')).toBe('3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf');
    const tc3 = hkdf(Buffer.alloc(22, 0x0b), '');
    expect(tc3.toString('hex')).toBe('8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d');
  });

  it('equals hkdfSync for random secrets, salts and purposes', () => {
    for (let i = 0; i < 200; i++) {
      const ikm = randomBytes(1 + (i % 64));
      const salt = i % 3 === 0 ? '' : randomBytes(i % 80);
      const info = `cairn purpose ${i} ${randomBytes(8).toString('hex')} é`;
      expect(hkdf(ikm, info, salt).equals(Buffer.from(hkdfSync('sha256', ikm, salt, info, 32)))).toBe(true);
    }
  });
});

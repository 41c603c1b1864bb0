// docs/security.md "The outbound door": the address classification and URL vetting on their own
// (no sockets; the connecting cases run in a namespace, test/net/door.test.ts).
import { describe, expect, it } from 'vitest';
import { checkUrl, ipLiteral, OutboundError, outboundFetch, refusalOf } from '../../core/net/index.js';

const strict = { allowLoopback: false };
const loose = { allowLoopback: true };

describe('refusalOf: public unicast only', () => {
  it.each([
    '127.0.0.1', '127.255.255.254', '::1', '10.1.2.3', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '100.127.255.255',
    '0.0.0.0', '0.255.255.255', '::', '192.0.0.8', '192.0.2.55', '198.51.100.1', '203.0.113.9', '198.18.0.1', '198.19.255.255', '240.0.0.1',
    '255.255.255.255', '224.0.0.251', '239.255.255.250', '192.88.99.1', '::ffff:127.0.0.1', '::ffff:8.8.8.8', '::127.0.0.1', '::8.8.8.8',
    '64:ff9b::808:808', '64:ff9b:1::a00:1', '2002:0808:0808::1', '2002:7f00:1::', '2001:0:4136:e378:8000:63bf:f5ff:fffe', '2001:db8::1',
    '2001:2::1', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'fec0::1', 'ff02::1', '100::1', '3fff::1', '4000::1', 'not-an-ip',
  ])('refuses %s', (address) => {
    expect(refusalOf(address, strict)).not.toBeNull();
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '100.128.0.1', '172.32.0.1', '2606:4700:4700::1111', '2a00:1450:4001::1'])('allows %s', (address) => {
    expect(refusalOf(address, strict)).toBeNull();
  });

  it('CAIRN_UNSAFE_ALLOW_LOOPBACK lets 127.0.0.0/8 and ::1 through and nothing else', () => {
    expect(refusalOf('127.0.0.1', loose)).toBeNull();
    expect(refusalOf('127.9.9.9', loose)).toBeNull();
    expect(refusalOf('::1', loose)).toBeNull();
    for (const a of ['::ffff:127.0.0.1', '::127.0.0.1', '10.0.0.1', '192.168.1.1', '169.254.169.254', 'fd00::1', 'fe80::1', '0.0.0.0', '::']) {
      expect(refusalOf(a, loose), a).not.toBeNull();
    }
  });
});

describe('checkUrl: WHATWG parsing first, then the checks', () => {
  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['http://[0:0:0:0:0:0:0:1]/', '::1'],
    ['HTTP://LOCALHOST./', null],
  ])('%s normalises to the literal %s before the check', (input, literal) => {
    const url = checkUrl(input);
    expect(ipLiteral(url.hostname)).toBe(literal);
    if (literal) expect(refusalOf(literal, strict)).not.toBeNull();
  });

  it.each(['ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)', 'data:text/html,hi', 'https://user@example.com/', 'https://:pw@example.com/', 'https://u:p@example.com/', 'not a url', '//example.com/'])(
    'refuses %s as invalid_url',
    (input) => {
      expect(() => checkUrl(input)).toThrowError(OutboundError);
      try {
        checkUrl(input);
      } catch (e) {
        expect((e as OutboundError).reason).toBe('invalid_url');
      }
    },
  );

  it('allows any port: the address decides', () => {
    expect(checkUrl('https://example.com:22/').port).toBe('22');
    expect(checkUrl('http://example.com:6379/').port).toBe('6379');
  });

  it('outboundFetch refuses a literal before any resolver or socket is involved', async () => {
    const asked: string[] = [];
    const err = await outboundFetch('http://[::ffff:169.254.169.254]/', {
      deadlineMs: 1_000,
      maxBytes: 1024,
      allowLoopback: true,
      resolver: async (n) => (asked.push(n), []),
      onConnect: (a) => asked.push(a.address),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundError);
    expect((err as OutboundError).reason).toBe('refused_address');
    expect(asked).toEqual([]);
  });
});

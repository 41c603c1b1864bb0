// Where and when an authorization request started (issue 28 item 1; docs/oauth.md "Approval
// phishing"): the client address and user agent seen at GET /oauth/authorize, sealed with the
// request (a server key, bound to the request id), shown on the approval screens, and compared with
// the approving request's network. Device-style approval cannot stop a user from approving a code a
// stranger gave them (RFC 8628 §5.4); this context and the other-network confirmation make it
// harder to do without noticing.
import { isIPv4, isIPv6 } from 'node:net';
import { hkdf } from '../../core/crypto/secrets.js';
import { open, seal } from '../../core/crypto/seal.js';

/** The stored user agent is cut to this many characters (it is shown, never logged). */
export const USER_AGENT_MAX = 200;

export type StartContext = { ip: string; userAgent: string | null };

// ---- Networks -----------------------------------------------------------------------------------

/**
 * The network an address belongs to, as the screens show it and as "same network" compares it:
 * IPv4 by /24 (`203.0.113.0/24`), IPv6 by /64 (`2001:db8:1:2::/64`), an IPv4-mapped IPv6 address
 * as its IPv4, every loopback address (127.0.0.0/8, ::1) as `loopback`, anything unreadable (no
 * address) as `unknown`, which matches nothing, not even itself.
 */
export function networkOf(ip: string | null | undefined): string {
  const v4 = ipv4Of(ip ?? '');
  if (v4) return v4[0] === 127 ? 'loopback' : `${v4[0]}.${v4[1]}.${v4[2]}.0/24`;
  const g = ipv6Groups(ip ?? '');
  if (!g) return 'unknown';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'loopback';
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

export function sameNetwork(a: string, b: string): boolean {
  return a === b && a !== 'unknown';
}

/** The address as shown: an IPv4-mapped IPv6 address in its dotted form, a zone id dropped. */
export function displayAddress(ip: string): string | null {
  const v4 = ipv4Of(ip);
  if (v4) return v4.join('.');
  return ipv6Groups(ip) ? ip.split('%')[0]!.toLowerCase() : null;
}

function ipv4Of(raw: string): number[] | null {
  if (isIPv4(raw)) return raw.split('.').map(Number);
  const g = ipv6Groups(raw);
  // ::ffff:a.b.c.d (how a dual-stack socket reports an IPv4 client).
  if (g && g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255];
  return null;
}

function ipv6Groups(raw: string): number[] | null {
  const ip = raw.split('%')[0]!;
  if (!isIPv6(ip)) return null;
  // A dotted IPv4 tail becomes two groups.
  const text = ip.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) => `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`);
  const [left, right] = text.split('::') as [string, string | undefined];
  const parse = (s: string) => (s ? s.split(':').map((h) => parseInt(h, 16)) : []);
  const l = parse(left);
  const r = right === undefined ? [] : parse(right);
  const groups = right === undefined ? l : [...l, ...Array<number>(8 - l.length - r.length).fill(0), ...r];
  return groups.length === 8 && groups.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffff) ? groups : null;
}

// ---- User agents --------------------------------------------------------------------------------

/** The header as stored: control characters out, whitespace collapsed, at most USER_AGENT_MAX. */
export function boundUserAgent(raw: string | string[] | undefined): string | null {
  const s = (Array.isArray(raw) ? raw.join(' ') : (raw ?? '')).replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').replace(/\s+/g, ' ').trim();
  if (!s) return null;
  return s.length > USER_AGENT_MAX ? s.slice(0, USER_AGENT_MAX - 1) + '…' : s;
}

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bHeadlessChrome\//, 'headless Chrome (an automated browser)'],
  [/\bChrom(?:e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/^curl\//i, 'curl'],
  [/^node$|\bundici\b|\bnode-fetch\b|\baxios\b/i, 'a Node.js program'],
  [/python/i, 'a Python program'],
  [/^Go-http-client\//, 'a Go program'],
];
const SYSTEMS: [RegExp, string][] = [
  [/\bWindows\b/, 'Windows'],
  [/\biPhone|\biPad|\biPod/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

/** "Firefox on Linux": a rough reading of a self-reported header, for people, never for decisions. */
export function describeUserAgent(ua: string | null): string {
  if (!ua) return 'an unknown program (no user agent sent)';
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1] ?? 'an unrecognised program';
  const system = SYSTEMS.find(([re]) => re.test(ua))?.[1];
  return system ? `${browser} on ${system}` : browser;
}

// ---- Sealing --------------------------------------------------------------------------------------

const contextKey = (unattended: Buffer) => hkdf(unattended, 'cairn oauth request context v1');
const aad = (requestId: string) => Buffer.from(`cairn-oauth-request-context\0${requestId}`, 'utf8');

export function sealContext(unattended: Buffer, requestId: string, c: StartContext): Buffer {
  return seal(contextKey(unattended), aad(requestId), Buffer.from(JSON.stringify({ ip: c.ip, userAgent: c.userAgent }), 'utf8'));
}

/** Null when absent or unreadable (a row from before the column, or another master key). */
export function openContext(unattended: Buffer, requestId: string, blob: Buffer | null): StartContext | null {
  if (!blob) return null;
  try {
    const v = JSON.parse(open(contextKey(unattended), aad(requestId), blob).toString('utf8')) as StartContext;
    return { ip: typeof v.ip === 'string' ? v.ip : '', userAgent: typeof v.userAgent === 'string' ? v.userAgent : null };
  } catch {
    return null;
  }
}

// ---- What the screens say ----------------------------------------------------------------------

/** Shown by every approval screen (console, CLI, the web app), word for word. */
export const PHISHING_WARNING =
  'Never approve a code someone else gave you. Approve only a request you started yourself, just now, on a device in front of you. ' +
  'Whoever started the request gets the access, whatever the app is called and wherever its page says it returns to.';

export function ageWords(seconds: number): string {
  if (seconds < 90) return `${seconds} s ago`;
  return `${Math.round(seconds / 60)} min ago`;
}

// Which addresses the outbound door may connect to (docs/security.md "The outbound door"): public
// unicast only, classified by ipaddr.js (its IANA special-purpose ranges), never by our own parsing.
import ipaddr from 'ipaddr.js';

/** Why an address is refused, or null when it is public unicast (or allowed loopback). */
export type Refusal = string;

// 2000::/3 is the only IPv6 space IANA allocates as global unicast; everything outside it
// (::/96 IPv4-compatible, 100::/64 discard, fc00::/7, fe80::/10, ff00::/8, unassigned) is refused.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Classifies one IP address (dotted IPv4 or IPv6 text, without brackets). Only ipaddr.js's
 * `unicast` range passes; with `allowLoopback` (CAIRN_UNSAFE_ALLOW_LOOPBACK=1, tests) also
 * 127.0.0.0/8 and ::1, and nothing else: not other private ranges, not ::ffff:127.0.0.1.
 */
export function refusalOf(address: string, opts: { allowLoopback: boolean }): Refusal | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const addr = ipaddr.parse(address);
  const range = addr.range();
  if (range === 'loopback' && opts.allowLoopback) return null;
  if (addr.kind() === 'ipv6') {
    // IPv4-mapped (::ffff:0:0/96) and every other IPv4-embedding form is refused whatever the
    // embedded IPv4 (ipaddr's ranges: ipv4Mapped, rfc6145, rfc6052 NAT64, 6to4, teredo).
    if (range !== 'unicast') return `IPv6 ${range}`;
    if (!addr.match(GLOBAL_UNICAST_V6)) return 'IPv6 outside 2000::/3';
    return null;
  }
  if (range !== 'unicast') return `IPv4 ${range}`;
  return null;
}

/** A URL hostname that is an IP literal, without the IPv6 brackets; null for a name. */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.isValid(bare) && (bare.includes(':') || ipaddr.IPv4.isValidFourPartDecimal(bare)) ? bare : null;
}

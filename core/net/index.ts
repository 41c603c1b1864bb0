// core/net: the one SSRF-safe outbound door (docs/security.md "The outbound door").
export { outboundFetch, checkUrl, checkTarget, OutboundError, MAX_REDIRECTS } from './fetch.js';
export type { OutboundOptions, OutboundResponse, OutboundHead, OutboundReason, Resolver, ConnectAttempt } from './fetch.js';
export { refusalOf, ipLiteral } from './address.js';

import type { OutboundOptions } from './fetch.js';
/** What tests may inject into the door (Deps.outbound). */
export type OutboundTestHooks = Pick<OutboundOptions, 'resolver' | 'ca' | 'onConnect'>;

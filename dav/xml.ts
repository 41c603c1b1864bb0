// XML of the CalDAV door (RFC 4918, 4791, 6578): reading request bodies with a namespace-aware
// parser (@xmldom/xmldom), and writing answers. Reading refuses a DOCTYPE (no entity expansion, no
// external entities: docs/caldav.md "Limits"), a body past LIMITS.dav.bodyBytes (the door caps it
// while reading) and more than LIMITS.dav.xmlElements elements. Writing escapes every text and
// attribute value; names come from the fixed tables here or from parsed elements (namespace URI
// and local name, both checked against XML's name rules before they are written back).
import { DOMParser, type Element as XmlElement, type Node as XmlNode } from '@xmldom/xmldom';
import { LIMITS } from '../core/config.js';
import { DavError } from './dav-error.js';
import { NS, type QName } from './names.js';

export { NS, type QName };

/** The prefixes every answer declares on its root element. */
const PREFIX_OF: Record<string, string> = { [NS.D]: 'D', [NS.C]: 'C', [NS.CS]: 'CS', [NS.A]: 'A' };
export const NS_DECLS = `xmlns:D="DAV:" xmlns:C="${NS.C}" xmlns:CS="${NS.CS}" xmlns:A="${NS.A}"`;

export type { XmlElement };

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_NODE = 4;

/** Parses a request body; null for an empty one. A body that is no well-formed XML is 400. */
export function parseXml(body: string): XmlElement | null {
  if (!body.trim()) return null;
  if (/<!DOCTYPE/i.test(body)) throw new DavError(400, 'A DOCTYPE is not accepted in a request body.');
  let failed: string | null = null;
  const doc = new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') failed ??= message;
    },
  }).parseFromString(body, 'application/xml');
  if (failed) throw new DavError(400, 'The request body is not well-formed XML.');
  const root = doc.documentElement;
  if (!root) throw new DavError(400, 'The request body is not well-formed XML.');
  let count = 0;
  const walk = (n: XmlNode) => {
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.nodeType !== ELEMENT_NODE) continue;
      if (++count > LIMITS.dav.xmlElements) throw new DavError(413, `A request body holds at most ${LIMITS.dav.xmlElements} XML elements.`);
      walk(c);
    }
  };
  walk(root);
  return root as unknown as XmlElement;
}

export function is(el: XmlElement | null | undefined, ns: string, name: string): boolean {
  return !!el && el.namespaceURI === ns && el.localName === name;
}

/** Child elements, optionally only those of one name. */
export function children(el: XmlElement, ns?: string, name?: string): XmlElement[] {
  const out: XmlElement[] = [];
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType !== ELEMENT_NODE) continue;
    const e = c as unknown as XmlElement;
    if (ns === undefined || is(e, ns, name!)) out.push(e);
  }
  return out;
}

export function child(el: XmlElement, ns: string, name: string): XmlElement | undefined {
  return children(el, ns, name)[0];
}

export function textOf(el: XmlElement): string {
  let s = '';
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === TEXT_NODE || c.nodeType === CDATA_NODE) s += c.nodeValue ?? '';
    else if (c.nodeType === ELEMENT_NODE) s += textOf(c as unknown as XmlElement);
  }
  return s;
}

export function qnameOf(el: XmlElement): QName {
  return { ns: el.namespaceURI ?? '', name: el.localName ?? '' };
}

export const key = (q: QName) => `{${q.ns}}${q.name}`;

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

const NAME = /^[A-Za-z_][A-Za-z0-9._-]*$/;

/**
 * An empty element for a property name: a known namespace by its prefix, any other (a client's own
 * property, answered 404) declared on the element itself.
 */
export function emptyElement(q: QName): string {
  if (!NAME.test(q.name)) return '';
  const prefix = PREFIX_OF[q.ns];
  if (prefix) return `<${prefix}:${q.name}/>`;
  return q.ns ? `<X:${q.name} xmlns:X="${escapeXml(q.ns)}"/>` : `<${q.name} xmlns=""/>`;
}

/** An element with already-written XML content. */
export function element(q: QName, inner: string): string {
  const prefix = PREFIX_OF[q.ns];
  if (!prefix || !NAME.test(q.name)) return emptyElement(q);
  return inner === '' ? `<${prefix}:${q.name}/>` : `<${prefix}:${q.name}>${inner}</${prefix}:${q.name}>`;
}

/** One `<D:response>`: found properties in a 200 propstat, missing ones in a 404 propstat. */
export function propResponse(href: string, found: [QName, string][], missing: QName[]): string {
  let s = `<D:response><D:href>${escapeXml(href)}</D:href>`;
  if (found.length) s += `<D:propstat><D:prop>${found.map(([q, v]) => element(q, v)).join('')}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>`;
  if (missing.length) s += `<D:propstat><D:prop>${missing.map(emptyElement).join('')}</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>`;
  if (!found.length && !missing.length) s += `<D:propstat><D:prop/><D:status>HTTP/1.1 200 OK</D:status></D:propstat>`;
  return s + '</D:response>';
}

export function statusResponse(href: string, status: string): string {
  return `<D:response><D:href>${escapeXml(href)}</D:href><D:status>HTTP/1.1 ${status}</D:status></D:response>`;
}

export const XML_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n';
export const MULTISTATUS_OPEN = `${XML_HEAD}<D:multistatus ${NS_DECLS}>`;
export const MULTISTATUS_CLOSE = '</D:multistatus>';

/** A `<D:error>` body naming one precondition (RFC 4918 §16). */
export function errorBody(condition: QName): string {
  return `${XML_HEAD}<D:error ${NS_DECLS}>${emptyElement(condition)}</D:error>`;
}

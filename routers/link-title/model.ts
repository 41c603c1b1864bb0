// Link titles (spec §2.11, §4.16; docs/api.md "Link titles"): one fetch through the outbound door
// (core/net), https only, at most 5 redirects, 8 s, 256 KB, text/html only; the page's og:title,
// else its <title>, read with a streaming HTML parser. Whatever goes wrong, the answer is a null
// title, never an error. Nothing is stored, cached or logged: neither the URL nor the page.
// `readLinkTitle` also says why a fetch gave no title (a class, never the URL or the page), for
// the inbox's title task to log at debug level (issue 28 item 14); /v1/link-title logs nothing.
import { TextDecoder } from 'node:util';
import { Parser } from 'htmlparser2';
import type { Deps } from '../deps.js';
import { LIMITS } from '../../core/config.js';
import { outboundFetch, OutboundError, type OutboundReason } from '../../core/net/index.js';

export type LinkTitle = { title: string | null; host: string };

/**
 * Why a fetch gave no title: the outbound door's refusal (`refused_address`, `timeout`,
 * `too_large`, `dns`, `tls`, …), an answer that is not a page (`http_3xx`/`http_4xx`/`http_5xx`,
 * or `http_2xx` for a 2xx other than 200, `not_html`, `encoded`), a page without a title
 * (`no_title`), or anything else (`error`).
 */
export type TitleFailure = OutboundReason | `http_${1 | 2 | 3 | 4 | 5}xx` | 'not_html' | 'encoded' | 'no_title' | 'error';

export type LinkTitleRead = LinkTitle & { failure: TitleFailure | null };

/** Whitespace collapsed to single spaces, trimmed, cut to 512 characters (code points); empty → null. */
export function cleanTitle(raw: string | null): string | null {
  if (raw === null) return null;
  const collapsed = raw.replace(/\s+/g, ' ').trim();
  if (!collapsed) return null;
  const chars = Array.from(collapsed);
  return chars.length > LIMITS.linkTitle.titleMax ? chars.slice(0, LIMITS.linkTitle.titleMax).join('').trimEnd() : collapsed;
}

/**
 * Reads a page as it streams in and keeps what it needs: `og:title` (a meta with
 * property="og:title", or name="og:title" as some sites write it) and the first <title>. Entities
 * are decoded by the parser, in text and attribute values alike.
 */
class TitleReader {
  og: string | null = null;
  title: string | null = null;
  /** No more head metadata will come (og:title found, </head> or <body> seen). */
  done = false;
  private inTitle = false;
  private titleText = '';
  private readonly parser: Parser;
  private readonly decoder: TextDecoder;

  constructor(charset: string) {
    let decoder: TextDecoder;
    try {
      decoder = new TextDecoder(charset);
    } catch {
      decoder = new TextDecoder('utf-8');
    }
    this.decoder = decoder;
    this.parser = new Parser(
      {
        onopentag: (name, attrs) => {
          if (name === 'title' && this.title === null) {
            this.inTitle = true;
            this.titleText = '';
          } else if (name === 'meta' && this.og === null) {
            const key = (attrs.property ?? attrs.name ?? '').trim().toLowerCase();
            if (key === 'og:title' && attrs.content !== undefined && cleanTitle(attrs.content) !== null) {
              this.og = attrs.content;
              this.done = true;
            }
          } else if (name === 'body') this.done = true;
        },
        ontext: (text) => {
          if (this.inTitle) this.titleText += text;
        },
        onclosetag: (name) => {
          if (name === 'title' && this.inTitle) {
            this.inTitle = false;
            this.title = this.titleText;
          } else if (name === 'head') this.done = true;
        },
      },
      { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
    );
  }

  write(chunk: Buffer): void {
    this.parser.write(this.decoder.decode(chunk, { stream: true }));
  }

  end(): void {
    this.parser.write(this.decoder.decode());
    this.parser.end();
  }

  /** og:title, else <title>; a <title> cut off by the end of what was read does not count. */
  best(): string | null {
    return cleanTitle(this.og) ?? cleanTitle(this.title);
  }
}

/** The media type and charset of a Content-Type header (RFC 9110 §8.3), lower-cased. */
function mediaType(header: string | undefined): { type: string; charset: string } {
  const [type = '', ...params] = (header ?? '').split(';');
  let charset = 'utf-8';
  for (const p of params) {
    const [k, v] = p.split('=');
    if (k?.trim().toLowerCase() === 'charset' && v) charset = v.trim().replace(/^"|"$/g, '').toLowerCase();
  }
  return { type: type.trim().toLowerCase(), charset };
}

const statusClass = (status: number): TitleFailure => `http_${Math.min(5, Math.max(1, Math.floor(status / 100))) as 1 | 2 | 3 | 4 | 5}xx`;

/** POST /v1/link-title (spec §4.16): the title and host, and nothing else. */
export async function fetchLinkTitle(deps: Deps, url: string): Promise<LinkTitle> {
  const { title, host } = await readLinkTitle(deps, url);
  return { title, host };
}

/** The title of the page at `url`, or null with the class of what went wrong. */
export async function readLinkTitle(deps: Deps, url: string): Promise<LinkTitleRead> {
  // Spec §2.11: the host of the URL sent (before the https rewrite).
  const host = new URL(url).host;
  const limits = LIMITS.linkTitle;
  let reader: TitleReader | null = null;
  let skipped: TitleFailure = 'error';
  const read = (title: string | null): LinkTitleRead => ({ title, host, failure: title === null ? 'no_title' : null });
  try {
    const res = await outboundFetch(url, {
      method: 'GET',
      headers: { accept: 'text/html' },
      redirects: limits.redirects,
      deadlineMs: deps.config.linkTitleDeadlineMs ?? limits.deadlineMs,
      maxBytes: limits.maxBytes,
      allowLoopback: deps.config.unsafeAllowLoopback,
      httpsOnly: true,
      ...deps.outbound,
      wantBody: (head) => {
        const ct = head.headers['content-type'];
        const { type, charset } = mediaType(Array.isArray(ct) ? ct[0] : ct);
        const encoding = String(head.headers['content-encoding'] ?? 'identity').toLowerCase();
        const refusal = head.status !== 200 ? statusClass(head.status) : type !== 'text/html' ? 'not_html' : encoding !== 'identity' ? 'encoded' : null;
        if (refusal) {
          skipped = refusal;
          return false;
        }
        reader = new TitleReader(charset);
        return true;
      },
      onChunk: (chunk) => {
        reader!.write(chunk);
        return reader!.done;
      },
    });
    const r = reader as TitleReader | null;
    if (!r) return { title: null, host, failure: skipped };
    if (res.complete) r.end();
    return read(r.best());
  } catch (err) {
    // Past the byte cap, a title already read still counts; every other failure is a null title.
    const r = reader as TitleReader | null;
    if (err instanceof OutboundError && err.reason === 'too_large' && r) {
      const title = r.best();
      return title === null ? { title, host, failure: 'too_large' } : read(title);
    }
    return { title: null, host, failure: err instanceof OutboundError ? err.reason : 'error' };
  }
}

// Checks that run before the adapter (REST-FACADE "order of checks"): media type, body size and
// JSON syntax are judged before the credential, so a bad body gets its own problem whatever the
// token. They are cheap and reveal nothing about the account.
import express, { type NextFunction, type Request, type Response } from 'express';
import { LIMITS } from '../core/config.js';
import { AppError } from '../core/errors.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(req: Request): boolean {
  const len = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (len !== undefined && len !== '0');
}

function isJsonType(ct: string | undefined): boolean {
  if (!ct) return false;
  const [type, ...params] = ct.split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json') return false;
  const charset = params.find((p) => p.startsWith('charset='));
  return !charset || /^charset="?utf-8"?$/.test(charset);
}

/** 415 for a body that is not JSON; an empty body on POST/PATCH reads as {}. */
export function mediaTypeGuard(req: Request, _res: Response, next: NextFunction): void {
  if (!BODY_METHODS.has(req.method)) return next();
  if (!hasBody(req)) {
    req.headers['content-type'] = 'application/json';
    req.body = {};
    return next();
  }
  if (!isJsonType(req.headers['content-type'])) {
    return next(new AppError('unsupported_media_type', 'Request bodies must be application/json (UTF-8).'));
  }
  next();
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Issue 11.10: the depth of the deepest array/object in JSON text, counted with a scan of the raw
 * characters (brackets inside strings do not count), so nesting is refused before anything (the
 * parser's reviver, superjson, the idempotency fingerprint, the logger) walks it recursively.
 * Stops counting at `max + 1`.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * The checks on a JSON body's raw bytes, for /v1 and /trpc alike (docs/api.md "Wire conventions"):
 * the bytes must be UTF-8 (issue 11.12: invalid sequences are refused, not stored as U+FFFD) and
 * the nesting at most LIMITS.jsonDepth deep. Returns the decoded text.
 */
export function checkJsonBytes(buf: Uint8Array): string {
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    throw new AppError('validation_failed', 'The body is not valid JSON: it is not valid UTF-8.', { pointer: '' });
  }
  if (jsonDepthExceeds(text, LIMITS.jsonDepth)) {
    throw new AppError('validation_failed', `The body is not accepted: JSON nested deeper than ${LIMITS.jsonDepth} levels.`, { pointer: '' });
  }
  return text;
}

const jsonParser = express.json({
  limit: LIMITS.jsonBodyBytes,
  strict: false,
  type: () => true,
  // Runs on the raw bytes before JSON.parse. body-parser decorates what it throws (sets `status`,
  // which AppError only reads), so the refusal travels wrapped and is unwrapped in jsonBody.
  verify: (_req, _res, buf) => {
    try {
      checkJsonBytes(buf);
    } catch (refusal) {
      throw Object.assign(new Error('refused body'), { refusal });
    }
  },
});

/** Parses the JSON body; maps the parser's failures to problems; a body must be an object. */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  if (!BODY_METHODS.has(req.method) || req.body !== undefined) return next();
  jsonParser(req, res, (err?: unknown) => {
    if (err) {
      const refusal = (err as { refusal?: unknown }).refusal;
      if (refusal instanceof AppError) return next(refusal);
      const e = err as { type?: string; status?: number };
      if (e.type === 'entity.too.large' || e.status === 413) {
        return next(new AppError('payload_too_large', `The body exceeds ${LIMITS.jsonBodyBytes} bytes.`));
      }
      if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
        return next(new AppError('unsupported_media_type', 'Request bodies must be UTF-8 JSON.'));
      }
      return next(new AppError('validation_failed', 'The body is not valid JSON.', { pointer: '' }));
    }
    const body = req.body as unknown;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return next(new AppError('validation_failed', 'The body must be a JSON object.', { pointer: '' }));
    }
    next();
  });
}

const rawParser = express.raw({ limit: LIMITS.jsonBodyBytes, type: () => true });

/**
 * /trpc bodies: tRPC parses them itself, so the raw bytes are read here first and given the same
 * checks as /v1 (UTF-8, depth, size); the checked text is handed on as `req.body`, which tRPC's
 * adapter uses instead of reading the stream. A refusal is passed to `refuse`, which turns it into
 * a tRPC error answer (server/app.ts: the context factory throws it). A query's `input` parameter
 * gets the depth check too.
 */
export function trpcBody(req: Request, res: Response, refuse: (e: AppError) => void, next: () => void): void {
  // Already read and checked (rest/trpc.ts read it before handing the request to tRPC's adapter).
  if (typeof req.body === 'string') return next();
  const q = req.url.indexOf('?');
  const input = req.method === 'GET' && q !== -1 ? new URLSearchParams(req.url.slice(q + 1)).get('input') : null;
  if (input !== null && jsonDepthExceeds(input, LIMITS.jsonDepth)) {
    refuse(new AppError('validation_failed', `The input is not accepted: JSON nested deeper than ${LIMITS.jsonDepth} levels.`, { pointer: '' }));
    return next();
  }
  if (!BODY_METHODS.has(req.method) || !hasBody(req)) return next();
  rawParser(req, res, (err?: unknown) => {
    if (err) {
      const e = err as { type?: string; status?: number };
      refuse(
        e.type === 'entity.too.large' || e.status === 413
          ? new AppError('payload_too_large', `The body exceeds ${LIMITS.jsonBodyBytes} bytes.`)
          : new AppError('validation_failed', 'The body could not be read.', { pointer: '' }),
      );
      req.body = '';
      return next();
    }
    try {
      req.body = Buffer.isBuffer(req.body) ? checkJsonBytes(req.body) : '';
    } catch (e) {
      refuse(e as AppError);
      req.body = '';
    }
    next();
  });
}

// Checks that run before the adapter (REST-FACADE "order of checks"): media type, body size and
// JSON syntax are judged before the credential, so a bad body gets its own problem whatever the
// token. They are cheap and reveal nothing about the account.
import express, { type NextFunction, type Request, type Response } from 'express';
import { LIMITS } from '../server/config.js';
import { AppError } from '../server/errors.js';

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

const jsonParser = express.json({ limit: LIMITS.jsonBodyBytes, strict: false, type: () => true });

/** Parses the JSON body; maps the parser's failures to problems; a body must be an object. */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  if (!BODY_METHODS.has(req.method) || req.body !== undefined) return next();
  jsonParser(req, res, (err?: unknown) => {
    if (err) {
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

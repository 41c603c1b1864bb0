// The two plain (non-JSON) attachment routes (spec §4.9, DECISIONS §6; docs/api.md "Attachment
// files"), mounted on the Express app (server/app.ts): rest/v1.ts names no procedure at these
// paths, so they fall through to it. Each runs what an authenticated procedure runs, in the same
// order and against the same buckets: the per-credential bucket, the credential, the scopes, the
// per-credential write bucket for the upload. Errors are problems (the app's error handler).
//
// POST /v1/attachments/files?parentType=&parentId=&title= takes the raw body, any Content-Type,
// and streams it into sealed chunks (routers/attachments/files.ts): a body past
// CAIRN_MAX_UPLOAD_BYTES is refused with 413 as soon as the count passes the limit, whatever
// Content-Length says (a declared length over the limit is refused before a byte is read).
// GET /v1/attachments/{id}/file streams the bytes back, one chunk opened at a time.
import { Readable, pipeline } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { Deps } from '../routers/deps.js';
import { type Principal } from '../routers/auth/credentials.js';
import { AppError } from '../core/errors.js';
import { IdRef } from '../core/ids.js';
import { ATTACHMENT_PARENTS } from '../db/schema/attachments.js';
import { invalidDetail, zodFieldErrors } from '../routers/middleware/problems.js';
import { AttachmentTitle } from '../routers/attachments/schema.js';
import { PathId } from '../routers/common.js';
import { openFile, startUpload, type Upload } from '../routers/attachments/files.js';
import type { AttachmentOut } from '../routers/attachments/schema.js';
import { FileCaptureQuery } from '../routers/inbox/schema.js';
import { fileCaptureParent } from '../routers/inbox/model.js';
import { newId } from '../core/ids.js';
import { requestState } from './state.js';
import { plainPrincipal } from './plain-auth.js';

/**
 * Issue 28 item 11: the raw upload paths (POST /v1/attachments/files, POST /v1/inbox/files) take
 * POST only. Their last segment would otherwise be read as the `{id}` of the routes beside them
 * (GET /v1/attachments/{id}, PATCH /v1/inbox/{id}, …) and answer 422 at `/id`; rest/v1.ts answers
 * every other method here 405 with `Allow: POST` before matching a route.
 */
export const POST_ONLY_PATHS = /^\/v1\/(?:attachments|inbox)\/files$/i;

/** The authentication and buckets of an authenticated procedure, for a plain route (rest/plain-auth.ts). */
function principalFor(deps: Deps, req: Request, scopes: ('attachments:read' | 'attachments:write' | 'inbox:write')[], write: boolean): Promise<Principal> {
  return plainPrincipal(deps, req, { scopes }, write);
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const errors = zodFieldErrors(r.error.issues);
  throw new AppError('validation_failed', invalidDetail(errors), { errors });
}

const UploadQuery = z
  .object({
    parentType: z.enum(ATTACHMENT_PARENTS),
    parentId: IdRef,
    title: AttachmentTitle.optional(),
  })
  .strict();

/** The query as single values; an empty value is left out (as on every /v1 route); a repeated name is refused. */
function queryOf(req: Request): Record<string, string> {
  const q = req.url.indexOf('?');
  const out: Record<string, string> = {};
  if (q === -1) return out;
  for (const [k, v] of new URLSearchParams(req.url.slice(q + 1))) {
    if (v === '') continue;
    if (k in out) throw new AppError('validation_failed', `The query names ${k} more than once.`, { pointer: `/${k}` });
    out[k] = v;
  }
  return out;
}

/** A media type as stored: `type/subtype` and parameters in printable ASCII, else octet-stream. */
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;\s*[a-z0-9!#$&^_.+-]+=("[\x20-\x7e]*"|[\x21-\x7e]+))*$/i;
const MAX_CONTENT_TYPE = 255;

function contentTypeOf(req: Request): string {
  const raw = (req.headers['content-type'] ?? '').trim();
  if (!raw) return 'application/octet-stream';
  if (raw.length > MAX_CONTENT_TYPE || !MEDIA_TYPE.test(raw)) {
    throw new AppError('validation_failed', 'Content-Type must be a media type (type/subtype, optional parameters), at most 255 characters.', { pointer: '' });
  }
  return raw;
}

/**
 * Types a browser shows without running anything: served as uploaded. Everything else (HTML,
 * SVG, XML, JavaScript, and any type not listed) is served as application/octet-stream with
 * Content-Disposition: attachment, so no uploaded file runs as a page of this origin.
 */
const PASSIVE = /^(image\/(png|jpeg|gif|webp|avif|bmp|heic|heif)|audio\/[a-z0-9.+-]+|video\/[a-z0-9.+-]+|text\/plain|text\/csv|application\/(pdf|json|zip|gzip|octet-stream))$/i;
const ACTIVE = /html|xml|svg|javascript|ecmascript|xsl|x-shockwave-flash|multipart|cache-manifest/i;

export function servedType(stored: string): { contentType: string; attachment: boolean } {
  const essence = stored.split(';')[0]!.trim().toLowerCase();
  if (PASSIVE.test(essence) && !ACTIVE.test(stored)) return { contentType: stored, attachment: essence === 'application/octet-stream' };
  return { contentType: 'application/octet-stream', attachment: true };
}

/**
 * Feeds the body to `take` one piece at a time, synchronously in each 'data' event, so nothing
 * queues up in memory (each full chunk is sealed and stored before the next piece is read). When
 * `take` throws (the limit) reading stops at once and the request is left unread, not destroyed,
 * so the problem answer can still go out. A client that goes away rejects with `aborted`.
 */
function readBody(req: Request, take: (piece: Buffer) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      req.pause();
    };
    const onData = (piece: Buffer) => {
      try {
        take(piece);
      } catch (e) {
        stop();
        reject(e);
      }
    };
    const onEnd = () => {
      stop();
      resolve();
    };
    const onError = (e: unknown) => {
      stop();
      reject(e);
    };
    const onClose = () => {
      if (req.complete) return;
      stop();
      reject(new Error('aborted'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** How long a refused upload's remaining body is read and discarded before the connection closes. */
const LINGER_MS = 2000;

/**
 * The raw-body upload both file routes share: authenticate, read the query, stage the chunks while
 * the body streams, finish in one transaction. `begin` checks the query and starts the upload;
 * `answer` makes the 201 body from what `finish` returned.
 */
function rawUpload<P>(
  deps: Deps,
  scope: 'attachments:write' | 'inbox:write',
  begin: (p: Principal, query: Record<string, string>, contentType: string) => Upload<P>,
  answer: (out: AttachmentOut & { parent: P }) => unknown,
) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    let upload: Upload<P> | undefined;
    try {
      const p = await principalFor(deps, req, [scope], true);
      const query = queryOf(req);
      const contentType = contentTypeOf(req);
      const max = deps.config.maxUploadBytes;
      const tooLarge = () => new AppError('payload_too_large', `The file is larger than this server's limit of ${max} bytes (CAIRN_MAX_UPLOAD_BYTES).`);
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > max) throw tooLarge();
      const staged = begin(p, query, contentType);
      upload = staged;
      await readBody(req, (piece) => {
        if (staged.size + piece.length > max) throw tooLarge();
        staged.write(piece);
      });
      res.status(201).json(answer(staged.finish()));
    } catch (e) {
      upload?.abort();
      if (!req.complete) {
        // A client that went away gets nothing.
        if (req.destroyed || req.socket?.destroyed) {
          deps.log.info({ requestId: requestState(req).requestId }, 'upload aborted by the client; staged chunks removed');
          return;
        }
        // Refused mid-body (413, or a fault): the answer goes out now. Closing at once would make
        // the kernel reset the connection while the client still sends, and the client could lose
        // the answer; so once it is sent, the rest of the body is discarded (never stored) for at
        // most LINGER_MS, then the connection is closed.
        // (No `Connection: close`: Node would then close as soon as the answer is written.)
        res.on('finish', () => {
          req.resume();
          const timer = setTimeout(() => req.socket?.destroy(), LINGER_MS);
          timer.unref();
          req.once('end', () => clearTimeout(timer));
        });
      }
      next(e);
    }
  };
}

export function uploadFile(deps: Deps) {
  return rawUpload(
    deps,
    'attachments:write',
    (p, query, contentType) => startUpload(deps, p, parse(UploadQuery, query), contentType),
    ({ parent: _parent, ...attachment }) => attachment,
  );
}

/**
 * POST /v1/inbox/files?title=&whenDate= (spec §4.11; docs/api.md "Inbox"): a file or image
 * capture. The body is stored exactly as an attachment file is, as the attachment of a new inbox
 * item (kind `image` for an `image/*` Content-Type, else `file`); item and attachment appear
 * together once the whole body is stored. Answers 201 with the inbox item.
 */
export function captureInboxFile(deps: Deps) {
  return rawUpload(
    deps,
    'inbox:write',
    (p, query, contentType) => {
      const q = parse(FileCaptureQuery, query);
      const kind = contentType.toLowerCase().startsWith('image/') ? 'image' : 'file';
      const itemId = newId();
      return startUpload(deps, p, { parentType: 'inbox', parentId: itemId, title: null }, contentType, fileCaptureParent(deps, p, itemId, { kind, title: q.title, whenDate: q.whenDate }));
    },
    (out) => out.parent,
  );
}

export function downloadFile(deps: Deps) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    let file: ReturnType<typeof openFile>;
    let p: Principal;
    try {
      p = await principalFor(deps, req, ['attachments:read'], false);
      const { id } = parse(z.object({ id: PathId }), { id: String(req.params.id) });
      file = openFile(deps, p, id);
    } catch (e) {
      return next(e);
    }
    const served = servedType(file.contentType);
    res.status(200);
    res.setHeader('Content-Type', served.contentType);
    res.setHeader('Content-Length', String(file.size));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    res.setHeader('Cache-Control', 'private, no-store');
    if (served.attachment) res.setHeader('Content-Disposition', 'attachment');
    // One chunk read ahead at most (Readable.from would otherwise buffer 16).
    pipeline(Readable.from(file.chunks(), { highWaterMark: 1 }), res, (err) => {
      if (!err) return;
      // Headers are gone: the only honest answer left is to cut the connection.
      deps.log.error({ requestId: requestState(req).requestId, err }, 'attachment file failed while streaming; connection destroyed');
      res.destroy();
    });
  };
}

// Who a request is (a resolved credential) and how a refused credential is answered: shared by the
// credential module (sessions and personal tokens) and the OAuth token module, which both resolve
// bearer secrets, so neither has to import the other for it.
import type { Deps } from '../deps.js';
import { AppError } from '../../core/errors.js';
import type { Scope } from '../../core/scopes.js';

export type CredentialKind = 'session' | 'pat' | 'oauth';

/**
 * The doors a credential may open (DECISIONS §8: one credential, one door): `rest` is /v1 and
 * /trpc, `dav` is /dav (CalDAV app passwords), `mcp` is /mcp.
 */
export const DOORS = ['rest', 'dav', 'mcp'] as const;
export type Door = (typeof DOORS)[number];

export type Principal = {
  userId: string;
  credentialId: string;
  kind: CredentialKind;
  /** The scope list as granted (what /v1/me reports). */
  granted: string[];
  /** Everything the granted list allows (implications and umbrellas applied). */
  scopes: ReadonlySet<Scope>;
  dek: Buffer;
  expiresAt: number;
  /** OAuth access tokens: the grant they were minted under. */
  grantId?: string;
};

/** Personal access tokens are prefixed so scanners and users can recognise them. */
export const PAT_PREFIX = 'cairn_pat_';
/** OAuth access and refresh tokens (routers/oauth/). */
export const OAUTH_ACCESS_PREFIX = 'cairn_oat_';
export const OAUTH_REFRESH_PREFIX = 'cairn_ort_';

export function unauthorized(deps: Deps, detail: string, tokenPresented: boolean): AppError {
  const meta = `${deps.config.publicUrl}/.well-known/oauth-protected-resource`;
  const challenge = tokenPresented
    ? `Bearer resource_metadata="${meta}", error="invalid_token", error_description="${detail}"`
    : `Bearer resource_metadata="${meta}"`;
  return new AppError('unauthorized', detail, { headers: { 'WWW-Authenticate': challenge } });
}

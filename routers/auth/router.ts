import { z } from 'zod';
import { authedProcedure, publicProcedure, router } from '../trpc.js';
import { atomic, ERASES } from '../middleware/atomic.js';
import { EmptyBody } from '../common.js';
import * as m from './model.js';
import { limitFailures, type RateContext } from '../middleware/rate-limit.js';
import { AppError } from '../../core/errors.js';
import { PasswordBusyError } from '../../core/crypto/password.js';

/**
 * Issue 11.1: password work is throttled. Every call counts per IP (meta `passwordIp`); wrong
 * passwords count per account (`passwordFailures`, checked before any hashing); a saturated hash
 * queue answers 429.
 */
async function passwordWork<T>(ctx: RateContext, account: string | null, work: () => Promise<T>): Promise<T> {
  const run = async () => {
    try {
      return await work();
    } catch (e) {
      if (e instanceof PasswordBusyError) throw new AppError('rate_limited', 'Too many password checks are running; retry in a moment.', { headers: { 'Retry-After': '1' } });
      throw e;
    }
  };
  if (account === null) return run();
  // A wrong password answers 401 (login) or 422 at the password field (the others).
  const wrong = (e: unknown) => e instanceof AppError && (e.problemCode === 'unauthorized' || (e.problemCode === 'validation_failed' && /password is wrong/.test(e.detail)));
  return limitFailures(ctx, 'passwordFailures', account, run, wrong);
}
import { ChangePasswordInput, LoginInput, Registered, RegisterInput, RotateKeyInput, SessionToken } from './schema.js';

const tags = ['auth'];

export const authRouter = router({
  register: publicProcedure
    .meta({ secretInAnswer: true, public: true, successStatus: 201, rateLimits: ['passwordIp'], openapi: { method: 'POST', path: '/v1/auth/register', protect: false, tags, summary: 'Create an account and a first-party session' } })
    .input(RegisterInput)
    .output(Registered)
    .mutation(({ ctx, input }) => passwordWork(ctx, null, () => m.register(ctx.deps, input))),

  login: publicProcedure
    .meta({ secretInAnswer: true, public: true, rateLimits: ['passwordIp'], openapi: { method: 'POST', path: '/v1/auth/login', protect: false, tags, summary: 'Start a first-party session', description: 'A wrong email or password answers 401 `unauthorized`, the same for both.' } })
    .input(LoginInput)
    .output(SessionToken)
    .mutation(({ ctx, input }) => passwordWork(ctx, m.accountKeyForEmail(ctx.deps, input.email), () => m.login(ctx.deps, input))),

  logout: authedProcedure
    .meta({ firstPartyOnly: true, successStatus: 204, openapi: { method: 'POST', path: '/v1/auth/logout', tags, summary: 'End this session' } })
    .input(EmptyBody.optional())
    .output(z.void())
    .mutation(atomic(({ ctx }) => m.logout(ctx.deps, ctx.principal), ERASES)),

  changePassword: authedProcedure
    .meta({ secretInAnswer: true, firstPartyOnly: true, rateLimits: ['passwordIp'], openapi: { method: 'POST', path: '/v1/auth/password', tags, summary: 'Change the password; disconnects every other credential', description: 'Every other session, token and OAuth grant of the account ends; the answer is a fresh session for this device (docs/security.md "Everything ends at once").' } })
    .input(ChangePasswordInput)
    .output(SessionToken)
    .mutation(({ ctx, input }) => passwordWork(ctx, m.accountKeyForUser(ctx.deps, ctx.principal.userId), () => m.changePassword(ctx.deps, ctx.principal, input))),

  rotateKey: authedProcedure
    .meta({ secretInAnswer: true, firstPartyOnly: true, rateLimits: ['passwordIp'], openapi: { method: 'POST', path: '/v1/auth/rotate-key', tags, summary: 'Re-seal everything under a new data key; disconnects every other credential', description: 'Every row is re-sealed in one transaction and every other session, token and OAuth grant ends; the answer is a fresh session for this device (docs/security.md "Everything ends at once").' } })
    .input(RotateKeyInput)
    .output(SessionToken)
    .mutation(({ ctx, input }) => passwordWork(ctx, m.accountKeyForUser(ctx.deps, ctx.principal.userId), () => m.rotateKey(ctx.deps, ctx.principal, input))),

  revokeAll: authedProcedure
    .meta({ firstPartyOnly: true, successStatus: 204, openapi: { method: 'POST', path: '/v1/auth/revoke-all', tags, summary: 'Disconnect every token, key, session and grant, this one included', description: 'Ends every session, personal token and OAuth grant of the account, the calling session too (docs/security.md "Everything ends at once").' } })
    .input(EmptyBody.optional())
    .output(z.void())
    .mutation(atomic(({ ctx }) => m.revokeAll(ctx.deps, ctx.principal), ERASES)),
});

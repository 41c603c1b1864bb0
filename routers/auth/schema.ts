import { z } from 'zod';
import { LIMITS } from '../../core/config.js';
import { Timestamp } from '../common.js';

const Email = z.email().max(LIMITS.email);
const Password = z.string().min(LIMITS.password.min).max(LIMITS.password.max);

export const RegisterInput = z.object({ email: Email, password: Password }).strict();
export const LoginInput = z.object({ email: z.string().max(LIMITS.email), password: z.string().max(LIMITS.password.max) }).strict();
export const ChangePasswordInput = z
  .object({ currentPassword: z.string().max(LIMITS.password.max), newPassword: Password })
  .strict();
export const RotateKeyInput = z.object({ password: z.string().max(LIMITS.password.max) }).strict();

export const SessionToken = z.object({ token: z.string(), expiresAt: Timestamp });
export const Registered = z.object({
  user: z.object({ id: z.string(), email: z.string() }),
  token: z.string(),
  expiresAt: Timestamp,
});

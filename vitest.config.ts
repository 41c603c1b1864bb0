import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    env: { CAIRN_SCRYPT_LOG_N: '14', LOG_LEVEL: 'silent' },
  },
});

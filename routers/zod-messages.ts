// Issue 13.7 (docs/api.md "Errors"): validation messages a person understands, set once for every
// schema (zod's global error map; a schema's own message still wins). A missing field says
// "required", not "expected string, received undefined".
import { z } from 'zod';

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
  date: 'a date',
  bigint: 'an integer',
};

const plural = (n: number | bigint, word: string) => `${n} ${word}${Number(n) === 1 ? '' : 's'}`;

type Issue = {
  code?: string;
  input?: unknown;
  expected?: string;
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  values?: readonly unknown[];
  format?: string;
};

export function humanMessage(iss: Issue): string | undefined {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'required';
      return `must be ${TYPE_NAMES[iss.expected ?? ''] ?? iss.expected}`;
    case 'invalid_value':
      if (iss.input === undefined) return 'required';
      return iss.values?.length === 1 ? `must be ${JSON.stringify(iss.values[0])}` : `must be one of ${(iss.values ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small': {
      const min = iss.minimum ?? 0;
      if (iss.origin === 'string') return Number(min) === 1 ? 'must not be empty' : `must be at least ${plural(min, 'character')}`;
      if (iss.origin === 'array' || iss.origin === 'set') return `must have at least ${plural(min, 'item')}`;
      return iss.inclusive === false ? `must be greater than ${min}` : `must be at least ${min}`;
    }
    case 'too_big': {
      const max = iss.maximum ?? 0;
      if (iss.origin === 'string') return `must be at most ${plural(max, 'character')}`;
      if (iss.origin === 'array' || iss.origin === 'set') return `must have at most ${plural(max, 'item')}`;
      return iss.inclusive === false ? `must be less than ${max}` : `must be at most ${max}`;
    }
    case 'invalid_format':
      if (iss.format === 'email') return 'must be an email address';
      if (iss.format === 'url') return 'must be a URL';
      if (iss.format === 'regex') return 'has the wrong format';
      return `must be a valid ${iss.format}`;
    case 'not_multiple_of':
      return 'is not an allowed step';
    default:
      return undefined;
  }
}

z.config({ customError: (iss) => humanMessage(iss as Issue) });

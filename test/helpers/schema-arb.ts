// fast-check arbitraries from the JSON Schemas of /openapi.json (the subset zod-openapi emits:
// type / enum / const / anyOf / oneOf / object properties+required / array items / string
// length, pattern and format / number bounds). Valid values only; test/reliability/fuzz.test.ts
// mutates them.
import fc from 'fast-check';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export type ArbOptions = {
  /** Values for string properties that hold ids (`id`, `*Id`, `after`, `before`). */
  ids?: fc.Arbitrary<string>;
  /** Depth guard. */
  depth?: number;
};

const ID_PROP = /(^id$|Id$|_id$|^after$|^before$)/;

function dateArb(): fc.Arbitrary<string> {
  return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
}

function stringArb(s: Any): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 40, 40);
  if (s.format === 'date-time') return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format === 'date') return dateArb();
  if (s.format === 'email') return fc.emailAddress();
  if (s.format === 'uri' || s.format === 'url') return fc.webUrl();
  if (s.pattern) {
    if (s.pattern === '^\\d{4}-\\d{2}-\\d{2}$') return dateArb();
    return fc.stringMatching(new RegExp(s.pattern)).filter((x) => x.length >= min && x.length <= (s.maxLength ?? Infinity));
  }
  return fc.string({ minLength: Math.max(min, 0), maxLength: Math.max(max, min) });
}

/** An arbitrary of values valid against `schema`. */
export function arbFromSchema(schema: Any, opts: ArbOptions = {}, prop = ''): fc.Arbitrary<unknown> {
  const depth = opts.depth ?? 0;
  if (!schema || depth > 6) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  const alts = schema.anyOf ?? schema.oneOf;
  if (alts) return fc.oneof(...alts.map((a: Any) => arbFromSchema({ ...a, description: undefined }, opts, prop)));
  if (schema.allOf) return arbFromSchema(Object.assign({}, ...schema.allOf), opts, prop);
  const type = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (type.length > 1) return fc.oneof(...type.map((t: string) => arbFromSchema({ ...schema, type: t }, opts, prop)));
  switch (type[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1000), max: schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1000) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true, noDefaultInfinity: true });
    case 'string':
      if (opts.ids && ID_PROP.test(prop) && !schema.pattern) return opts.ids;
      // URLs (webhook targets, inbox captures): host names, which the tests' outbound resolver
      // never resolves, or loopback; never a public address (the fuzzer must not reach out).
      if (prop === 'url') return fc.oneof(fc.webUrl(), fc.webPath().map((p) => `https://127.0.0.1:9${p}`), fc.webPath().map((p) => `https://[::1]:9${p}`));
      return stringArb(schema);
    case 'array': {
      const item = arbFromSchema(schema.items ?? {}, { ...opts, depth: depth + 1 }, prop);
      return fc.array(item, { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) });
    }
    case 'object':
    default: {
      if (!schema.properties) return type[0] === 'object' ? fc.constant({}) : fc.anything({ maxDepth: 1 });
      const required: string[] = schema.required ?? [];
      const props: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries<Any>(schema.properties)) props[k] = arbFromSchema(v, { ...opts, depth: depth + 1 }, k);
      return fc.record(props, { requiredKeys: required });
    }
  }
}

/** One valid value of `schema`, reproducible (seeded). */
export function sampleOf(schema: Any, seed = 1): unknown {
  return fc.sample(arbFromSchema(schema), { numRuns: 1, seed })[0];
}

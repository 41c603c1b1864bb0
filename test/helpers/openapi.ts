// The served /openapi.json as a list of operations, with ajv validators for the documented
// success answers (issue 18: the reliability suite is driven by the contract, so a new route is
// covered without edits).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export type Param = { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: Any };
export type Operation = {
  method: string;
  path: string;
  operationId: string;
  secured: boolean;
  params: Param[];
  /** The JSON body schema, when the body is JSON. */
  jsonBody?: Any;
  /** Another body media type (`*\/*` for raw uploads). */
  rawBody?: string;
  bodyRequired: boolean;
  /** Documented statuses. */
  statuses: number[];
  op: Any;
};

export async function loadOpenApi(url: string): Promise<Any> {
  const r = await fetch(url + '/openapi.json');
  if (r.status !== 200) throw new Error(`/openapi.json: ${r.status}`);
  return r.json();
}

/** Resolves a local `$ref` (`#/components/...`). */
export function deref(doc: Any, x: Any): Any {
  let cur = x;
  while (cur && typeof cur === 'object' && typeof cur.$ref === 'string' && cur.$ref.startsWith('#/')) {
    cur = cur.$ref
      .slice(2)
      .split('/')
      .reduce((o: Any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return cur;
}

export function operations(doc: Any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Any>(doc.paths)) {
    for (const [method, op] of Object.entries<Any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: Any) => deref(doc, p)) as Param[];
      const body = deref(doc, op.requestBody);
      const content = body?.content ?? {};
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        secured: (op.security ?? doc.security ?? []).length > 0,
        params,
        ...(content['application/json'] ? { jsonBody: deref(doc, content['application/json'].schema) } : {}),
        ...(!content['application/json'] && Object.keys(content).length ? { rawBody: Object.keys(content)[0]! } : {}),
        bodyRequired: !!body?.required,
        statuses: Object.keys(op.responses).map(Number),
        op,
      });
    }
  }
  return out;
}

/** An ajv validator for a request body schema (cached by schema object). */
export function schemaValidator(): (schema: Any) => ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
  (addFormatsModule as unknown as { default: (a: Ajv) => void }).default?.(ajv) ?? (addFormatsModule as unknown as (a: Ajv) => void)(ajv);
  ajv.addFormat('binary', true);
  const cache = new Map<Any, ValidateFunction>();
  return (schema) => {
    let v = cache.get(schema);
    if (!v) cache.set(schema, (v = ajv.compile(schema)));
    return v;
  };
}

/** Validators for each operation's documented answers, keyed `operationId status`. */
export function responseValidators(doc: Any): (operationId: string, status: number) => ValidateFunction | null | undefined {
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
  (addFormatsModule as unknown as { default: (a: Ajv) => void }).default?.(ajv) ?? (addFormatsModule as unknown as (a: Ajv) => void)(ajv);
  ajv.addFormat('binary', true);
  ajv.addSchema({ ...doc, $id: 'openapi' }, 'openapi');
  const cache = new Map<string, ValidateFunction | null>();
  const byId = new Map(operations(doc).map((o) => [o.operationId, o]));
  return (operationId, status) => {
    const key = `${operationId} ${status}`;
    if (cache.has(key)) return cache.get(key);
    const o = byId.get(operationId);
    if (!o) return undefined;
    const res = deref(doc, o.op.responses[String(status)]);
    if (!res) return undefined; // undocumented status
    const json = res.content?.['application/json'] ?? res.content?.['application/problem+json'];
    const v = json?.schema ? ajv.compile(deref(doc, json.schema)) : null;
    cache.set(key, v);
    return v;
  };
}

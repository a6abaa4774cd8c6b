import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { SerializerSelector, type RouteDefinition, type Serializer } from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { withSimpleUnions } from './serializer-schema.js';

// ajv-formats ships CommonJS with a default export that NodeNext sees one level down.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function compiler(options: Options): Ajv {
  const ajv = new Ajv({ useDefaults: true, removeAdditional: false, allErrors: false, strict: false, ...options });
  addFormats(ajv);
  return ajv;
}

/** What Fastify calls to validate: the answer, and the errors read from the function after a false one. */
type Validate = ((data: unknown) => boolean) & { errors?: ValidateFunction['errors'] };

/**
 * A route's validator compiled when its first request comes, not when the server starts:
 * compiling every route's schemas took most of a second of a new console's first launch, before
 * its user could sign in. A schema that does not compile fails that route's requests (500), as
 * the route tests would show.
 */
function compiledOnFirstUse(ajv: Ajv, schema: object, later: Deferred[]): Validate {
  let compiled: ValidateFunction | null = null;
  const compile = () => (compiled ??= ajv.compile(schema));
  later.push(compile);
  const validate: Validate = (data) => {
    const check = compile();
    const valid = check(data);
    validate.errors = check.errors;
    return valid;
  };
  return validate;
}

/**
 * Fastify's own response serializer (fast-json-stringify), built on the route's first answer of
 * that status, once per schema: the routes' 285 answers (their errors, HEAD beside GET) have 41
 * schemas between them, and building each apart took ~1.1 s of the ~1.4 s all compiling took.
 * A serializer is a function of its schema alone (no shared schemas are registered).
 */
function serializedOnFirstUse(
  build: (route: RouteDefinition) => Serializer,
  route: RouteDefinition,
  later: Deferred[],
  built: WeakMap<object, Serializer>,
): Serializer {
  let compiled: Serializer | null = null;
  const compile = () => {
    if (compiled) return compiled;
    const schema = route.schema as object;
    compiled = built.get(schema) ?? build({ ...route, schema: withSimpleUnions(schema) });
    built.set(schema, compiled);
    return compiled;
  };
  later.push(compile);
  return (data) => compile()(data);
}

/** A compilation put off until first use; run at most once, whoever asks first. */
type Deferred = () => unknown;

/** Each server's compilations still put off, in the order its routes were made. */
const deferredOf = new WeakMap<FastifyInstance, Deferred[]>();

/**
 * Does, once the server listens, the compilations its routes put off, one per turn of the event
 * loop (a request waits at most for one schema), so that the first person to sign in does not pay
 * for them: a console's first sign-in at ten million rows spent ~580 ms of the event loop
 * compiling the schemas of its first dozen requests. Stops when `stopped` says so; a schema that
 * does not compile is left to fail its route's requests. Returns how many it went through (those
 * a request compiled first among them).
 */
export async function compileAhead(app: FastifyInstance, stopped: () => boolean): Promise<number> {
  const later = deferredOf.get(app) ?? [];
  let compiled = 0;
  while (later.length > 0 && !stopped()) {
    await new Promise((resolve) => setImmediate(resolve));
    try {
      later.shift()!();
      compiled++;
    } catch {
      // The route's own requests fail with it (500), as its tests would show.
    }
  }
  return compiled;
}

/**
 * JSON bodies are validated strictly (a string is not an integer), while query strings,
 * path parameters and headers, which are text by nature, are coerced to their types.
 */
export const validationPlugin = fp(async (app: FastifyInstance) => {
  const strict = compiler({ coerceTypes: false });
  const coercing = compiler({ coerceTypes: 'array' });
  const later: Deferred[] = [];
  deferredOf.set(app, later);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    compiledOnFirstUse(httpPart === 'body' ? strict : coercing, schema, later),
  );
  // The same for answers: Fastify's default serializers, no shared schemas, each built when first
  // used, with the validators of its unions (which fast-json-stringify otherwise compiles at the
  // first answer that reaches one), so that `compileAhead` leaves no compiling to a request.
  const serializer = SerializerSelector()(undefined, { compileValidators: true });
  const built = new WeakMap<object, Serializer>();
  app.setSerializerCompiler((route) =>
    serializedOnFirstUse(serializer, { ...route, httpStatus: route.httpStatus ?? '' }, later, built),
  );

  // A blank query parameter (`project_id=`) means the parameter was not given.
  app.addHook('preValidation', (request, _reply, done) => {
    const query = request.query as Record<string, unknown> | undefined;
    if (query && typeof query === 'object') {
      for (const name in query) {
        const value = query[name];
        if (value === '' || (Array.isArray(value) && value.every((v) => v === ''))) delete query[name];
      }
    }
    done();
  });

  // JSON is the only body accepted (anything else is 415); bodiless POSTs such as
  // refresh and logout may still carry a JSON content type.
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else void json(request, body as string, done);
  });
});

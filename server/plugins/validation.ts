import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { SerializerSelector, type RouteDefinition, type Serializer } from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

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
function compiledOnFirstUse(ajv: Ajv, schema: object): Validate {
  let compiled: ValidateFunction | null = null;
  const validate: Validate = (data) => {
    compiled ??= ajv.compile(schema);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  return validate;
}

/** Fastify's own response serializer (fast-json-stringify), built on the route's first answer of that status. */
function serializedOnFirstUse(build: (route: RouteDefinition) => Serializer, route: RouteDefinition): Serializer {
  let compiled: Serializer | null = null;
  return (data) => (compiled ??= build(route))(data);
}

/**
 * JSON bodies are validated strictly (a string is not an integer), while query strings,
 * path parameters and headers, which are text by nature, are coerced to their types.
 */
export const validationPlugin = fp(async (app: FastifyInstance) => {
  const strict = compiler({ coerceTypes: false });
  const coercing = compiler({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    compiledOnFirstUse(httpPart === 'body' ? strict : coercing, schema),
  );
  // The same for answers: Fastify's default serializers, no shared schemas, each built when first used.
  const serializer = SerializerSelector()();
  app.setSerializerCompiler((route) =>
    serializedOnFirstUse(serializer, { ...route, httpStatus: route.httpStatus ?? '' }),
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

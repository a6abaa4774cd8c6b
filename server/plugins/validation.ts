import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

// ajv-formats ships CommonJS with a default export that NodeNext sees one level down.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function compiler(options: Options): Ajv {
  const ajv = new Ajv({ useDefaults: true, removeAdditional: false, allErrors: false, strict: false, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * JSON bodies are validated strictly (a string is not an integer), while query strings,
 * path parameters and headers, which are text by nature, are coerced to their types.
 */
export const validationPlugin = fp(async (app: FastifyInstance) => {
  const strict = compiler({ coerceTypes: false });
  const coercing = compiler({ coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));

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

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { BYOK_SERVICE_SHARE } from '../domain/route-catalogue.js';
import { modelsOf } from '../domain/route-models.js';
import { errors } from '../schemas/common.js';
import { ModelList, ModelPrices } from '../schemas/models.js';

/** The routes of the routes document's newest version: an extension beyond the specification, so clients can offer choices. */
export async function modelRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/models', { schema: { tags: ['models'], response: { 200: ModelList, ...errors(401) } } }, async () => ({
    models: [...modelsOf((await app.control.routes.current()).document)],
  }));

  // The prices the gateway settles requests at: every route has one, active or not (old requests used them).
  app.get(
    '/models/prices',
    { schema: { tags: ['models'], response: { 200: ModelPrices, ...errors(401) } } },
    async () => {
      const { document } = await app.control.routes.current();
      return {
        prices: modelsOf(document).map(({ id }) => {
          const { price } = document.routes[id]!;
          return {
            model: id,
            input: price.input,
            output: price.output,
            cache_write: price.cache_write,
            cache_read: price.cache_read,
          };
        }),
        byok_service_share: BYOK_SERVICE_SHARE,
      };
    },
  );
}

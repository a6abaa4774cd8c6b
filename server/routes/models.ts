import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { BYOK_SERVICE_SHARE, routeFacts } from '../domain/route-catalogue.js';
import { errors } from '../schemas/common.js';
import { ModelList, ModelPrices } from '../schemas/models.js';

/** The route catalogue: an extension beyond the specification, so clients can offer choices. */
export async function modelRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/models', { schema: { tags: ['models'], response: { 200: ModelList, ...errors(401) } } }, async () => ({
    models: await app.control.models.list(),
  }));

  // The prices the gateway settles requests at, for the routes of the catalogue that have one.
  app.get(
    '/models/prices',
    { schema: { tags: ['models'], response: { 200: ModelPrices, ...errors(401) } } },
    async () => ({
      prices: (await app.control.models.list()).flatMap(({ id }) => {
        const price = routeFacts(id)?.price;
        return price
          ? [
              {
                model: id,
                input: price.input,
                output: price.output,
                cache_write: price.cacheWrite,
                cache_read: price.cacheRead,
              },
            ]
          : [];
      }),
      byok_service_share: BYOK_SERVICE_SHARE,
    }),
  );
}

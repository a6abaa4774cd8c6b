import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { removeProviderKey, storeProviderKey } from '../domain/vault.js';
import { notFound } from '../http-errors.js';
import { sourceIp } from '../plugins/guards.js';
import { authOf } from '../plugins/session.js';
import { MessageBody, errors, isoTime } from '../schemas/common.js';
import { PROVIDER_PATTERN, ProviderParams, StoreVaultKeyBody, VaultKey, VaultKeyList } from '../schemas/vault.js';
import type { VaultKeyRow } from '../stores/control/vault.js';

const tags = ['vault'];
const providerName = new RegExp(PROVIDER_PATTERN);

const toVaultKey = (row: VaultKeyRow) => ({
  provider: row.provider,
  key_hint: row.key_hint,
  created_at: isoTime(row.created_at),
  updated_at: isoTime(row.updated_at),
});

export async function vaultRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config } = app;

  app.post(
    '/vault/keys',
    { schema: { tags, body: StoreVaultKeyBody, response: { 200: VaultKey, ...errors(401, 415, 422) } } },
    async (request) => {
      const auth = authOf(request);
      const row = await storeProviderKey(control, app.secrets.vaultMasterKey, {
        orgId: auth.orgId,
        actorId: auth.accountId,
        provider: request.body.provider,
        apiKey: request.body.api_key,
        sourceIp: sourceIp(request),
        now: config.now(),
      });
      return toVaultKey(row);
    },
  );

  app.get('/vault/keys', { schema: { tags, response: { 200: VaultKeyList, ...errors(401) } } }, async (request) => ({
    keys: (await control.vault.list(authOf(request).orgId)).map(toVaultKey),
  }));

  app.delete(
    '/vault/keys/:provider',
    { schema: { tags, params: ProviderParams, response: { 200: MessageBody, ...errors(401, 404) } } },
    async (request) => {
      const auth = authOf(request);
      const { provider } = request.params;
      if (!providerName.test(provider)) throw notFound('no key is stored for this provider', { field: 'provider' });
      await removeProviderKey(control, {
        orgId: auth.orgId,
        actorId: auth.accountId,
        provider,
        sourceIp: sourceIp(request),
        now: config.now(),
      });
      return { message: 'provider key removed' };
    },
  );
}

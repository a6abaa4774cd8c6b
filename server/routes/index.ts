import type { FastifyInstance } from 'fastify';
import { requireSession } from '../plugins/session.js';
import { activityRoutes } from './activity.js';
import { analyticsRoutes } from './analytics.js';
import { authRoutes } from './auth.js';
import { googleRoutes } from './auth-google.js';
import { gatewayRoutesRoutes } from './gateway-routes.js';
import { healthRoutes } from './health.js';
import { keyRoutes } from './keys.js';
import { keySafetyRoutes } from './key-safety.js';
import { modelRoutes } from './models.js';
import { organizationRoutes } from './organization.js';
import { reconcileRoutes } from './reconcile.js';
import { spendRoutes } from './spend.js';
import { vaultRoutes } from './vault.js';

/** Everything under `/api`. Auth routes pick their own guard; the rest need a session. */
export async function apiRoutes(api: FastifyInstance): Promise<void> {
  await api.register(authRoutes);
  await api.register(googleRoutes);
  await api.register(async (secured) => {
    secured.addHook('onRequest', requireSession);
    await secured.register(organizationRoutes);
    await secured.register(keyRoutes);
    await secured.register(keySafetyRoutes);
    await secured.register(vaultRoutes);
    await secured.register(activityRoutes);
    await secured.register(modelRoutes);
    await secured.register(analyticsRoutes);
    await secured.register(healthRoutes);
    await secured.register(gatewayRoutesRoutes);
    await secured.register(spendRoutes);
    await secured.register(reconcileRoutes);
  });
}

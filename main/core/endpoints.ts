import { Type, type Static, type TSchema } from '@sinclair/typebox';
import * as analytics from '#server/schemas/analytics.js';
import * as auth from '#server/schemas/auth.js';
import * as compare from '#server/schemas/compare.js';
import * as dashboard from '#server/schemas/dashboard.js';
import * as gatewayRoutes from '#server/schemas/gateway-routes.js';
import * as health from '#server/schemas/health.js';
import * as activity from '#server/schemas/activity.js';
import { MessageBody } from '#server/schemas/common.js';
import * as keys from '#server/schemas/keys.js';
import * as models from '#server/schemas/models.js';
import * as organization from '#server/schemas/organization.js';
import * as reconcile from '#server/schemas/reconcile.js';
import * as spend from '#server/schemas/spend.js';
import * as top from '#server/schemas/top.js';
import * as vault from '#server/schemas/vault.js';

/**
 * Every endpoint of the control plane, described by the server's own schemas: a change
 * of shape on one side breaks the build of the other.
 */
interface Endpoint {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** Path parameters, substituted into `{name}` placeholders. */
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  response: TSchema;
  /** Sign-in and refresh carry no access cookie and must not trigger a refresh. */
  anonymous?: boolean;
}

const endpoint = <E extends Endpoint>(e: E) => e;

export const endpoints = {
  register: endpoint({
    method: 'POST',
    path: '/auth/register',
    body: auth.RegisterBody,
    response: auth.SignedIn,
    anonymous: true,
  }),
  login: endpoint({
    method: 'POST',
    path: '/auth/login',
    body: auth.LoginBody,
    response: auth.SignedIn,
    anonymous: true,
  }),
  google: endpoint({
    method: 'POST',
    path: '/auth/google',
    body: auth.GoogleBody,
    response: auth.SignedIn,
    anonymous: true,
  }),
  refresh: endpoint({ method: 'POST', path: '/auth/refresh', response: MessageBody, anonymous: true }),
  logout: endpoint({ method: 'POST', path: '/auth/logout', response: MessageBody }),
  me: endpoint({ method: 'GET', path: '/auth/me', response: auth.Me }),
  renameOrganization: endpoint({
    method: 'PATCH',
    path: '/organization',
    body: organization.RenameBody,
    response: organization.Organization,
  }),
  members: endpoint({ method: 'GET', path: '/members', response: organization.MemberList }),
  projects: endpoint({ method: 'GET', path: '/projects', response: organization.ProjectList }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  joinPolicy: endpoint({ method: 'GET', path: '/organization/join-policy', response: organization.JoinPolicy }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  reportingZone: endpoint({
    method: 'GET',
    path: '/organization/reporting-zone',
    response: organization.ReportingZone,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  setReportingZone: endpoint({
    method: 'PUT',
    path: '/organization/reporting-zone',
    body: organization.ReportingZoneBody,
    response: organization.ReportingZone,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  retention: endpoint({ method: 'GET', path: '/organization/retention', response: organization.Retention }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  setRetention: endpoint({
    method: 'PUT',
    path: '/organization/retention',
    body: organization.RetentionBody,
    response: organization.Retention,
  }),
  models: endpoint({ method: 'GET', path: '/models', response: models.ModelList }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  modelPrices: endpoint({ method: 'GET', path: '/models/prices', response: models.ModelPrices }),
  createKey: endpoint({ method: 'POST', path: '/keys', body: keys.CreateKeyBody, response: keys.CreatedKey }),
  listKeys: endpoint({ method: 'GET', path: '/keys', response: keys.KeyList }),
  updateKey: endpoint({
    method: 'PATCH',
    path: '/keys/{key_id}',
    params: keys.KeyIdParams,
    body: keys.UpdateKeyBody,
    response: keys.UpdatedKey,
  }),
  revokeKey: endpoint({ method: 'DELETE', path: '/keys/{key_id}', params: keys.KeyIdParams, response: MessageBody }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  keyImpact: endpoint({
    method: 'GET',
    path: '/keys/{key_id}/impact',
    params: keys.KeyIdParams,
    response: keys.KeyImpact,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  rotateKey: endpoint({
    method: 'POST',
    path: '/keys/{key_id}/rotate',
    params: keys.KeyIdParams,
    response: keys.RotatedKey,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  bulkKeys: endpoint({ method: 'POST', path: '/keys/bulk', body: keys.BulkKeysBody, response: keys.BulkKeysResult }),
  storeVaultKey: endpoint({
    method: 'POST',
    path: '/vault/keys',
    body: vault.StoreVaultKeyBody,
    response: vault.VaultKey,
  }),
  listVaultKeys: endpoint({ method: 'GET', path: '/vault/keys', response: vault.VaultKeyList }),
  removeVaultKey: endpoint({
    method: 'DELETE',
    path: '/vault/keys/{provider}',
    params: vault.ProviderParams,
    response: MessageBody,
  }),
  summary: endpoint({
    method: 'GET',
    path: '/analytics/summary',
    query: analytics.SummaryQuery,
    response: analytics.Summary,
  }),
  timeseries: endpoint({
    method: 'GET',
    path: '/analytics/timeseries',
    query: analytics.TimeseriesQuery,
    response: analytics.Timeseries,
  }),
  requests: endpoint({
    method: 'GET',
    path: '/analytics/requests',
    query: analytics.RequestsQuery,
    response: analytics.RequestPage,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404 (without a field). */
  request: endpoint({
    method: 'GET',
    path: '/analytics/requests/{req_id}',
    params: analytics.RequestIdParams,
    response: analytics.RequestLogRow,
  }),
  usageThrottling: endpoint({
    method: 'GET',
    path: '/admin/usage-throttling',
    query: analytics.ThrottlingQuery,
    response: analytics.UsageThrottling,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  compare: endpoint({
    method: 'GET',
    path: '/analytics/compare',
    query: compare.CompareQuery,
    response: compare.Compare,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  dashboard: endpoint({
    method: 'GET',
    path: '/analytics/dashboard',
    query: dashboard.DashboardQuery,
    response: dashboard.Dashboard,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  health: endpoint({ method: 'GET', path: '/analytics/health', query: health.HealthQuery, response: health.Health }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  routes: endpoint({ method: 'GET', path: '/routes', response: gatewayRoutes.RoutesView }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  reconcile: endpoint({
    method: 'GET',
    path: '/reconcile',
    query: reconcile.ReconcileQuery,
    response: reconcile.Reconcile,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  top: endpoint({ method: 'GET', path: '/analytics/top', query: top.TopQuery, response: top.Top }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  spend: endpoint({ method: 'GET', path: '/analytics/spend', query: spend.SpendQuery, response: spend.SpendReport }),
  activity: endpoint({
    method: 'GET',
    path: '/activity',
    query: activity.ActivityQuery,
    response: activity.ActivityPage,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  activityEntries: endpoint({
    method: 'GET',
    path: '/activity/entries',
    query: activity.ActivityEntriesQuery,
    response: activity.ActivityEntries,
  }),
  /** Beyond the contract: a control plane with only the contract's endpoints answers 404. */
  verifyActivity: endpoint({
    method: 'GET',
    path: '/activity/verify',
    query: activity.ActivityVerifyQuery,
    response: activity.ActivityVerification,
  }),
} satisfies Record<string, Endpoint>;

export type EndpointName = keyof typeof endpoints;
type Def<N extends EndpointName> = (typeof endpoints)[N];

type Part<E, K extends string> = E extends Record<K, infer S extends TSchema> ? Static<S> : undefined;

/** What a call to endpoint N takes: its path parameters, query and body, each only when it has one. */
export type EndpointInput<N extends EndpointName> = {
  [K in 'params' | 'query' | 'body' as Def<N> extends Record<K, TSchema> ? K : never]: Part<Def<N>, K>;
};
export type EndpointOutput<N extends EndpointName> = Static<Def<N>['response']>;

export const NoInput = Type.Object({});

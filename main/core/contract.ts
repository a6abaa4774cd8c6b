import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Me, SignedIn } from '#server/schemas/auth.js';
import { Nullable } from '#server/schemas/common.js';
import { AlertCheck, AlertRules, FiredAlert } from './alerts/rules.js';
import { Preferences, StoredPreferences, Theme } from './preference-schema.js';
import { endpoints, type EndpointInput, type EndpointName, type EndpointOutput } from './endpoints.js';
import { SavedView, ViewFilters, ViewId, ViewName, ViewScreen } from './saved-views/view.js';

/**
 * The bridge: every call the renderer may make, with its argument and result schemas.
 * Both shells check arguments against it at the boundary; the renderer imports its
 * types. Control-plane calls are generated from the endpoint table, one per endpoint.
 */

const ProfileId = Type.String({ minLength: 1, maxLength: 100 });
const Empty = Type.Object({});
const ForProfile = Type.Object({ profileId: ProfileId });

export const ProfileView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  kind: Type.Union([Type.Literal('remote'), Type.Literal('embedded')]),
  baseUrl: Nullable(Type.String()),
  signedIn: Type.Boolean(),
});
export type ProfileView = Static<typeof ProfileView>;

export const EmbeddedStatus = Type.Object({
  state: Type.Union([
    Type.Literal('stopped'),
    Type.Literal('starting'),
    Type.Literal('running'),
    Type.Literal('crashed'),
  ]),
  baseUrl: Nullable(Type.String()),
  /** The server's last log lines, shown when it crashed. */
  lastLog: Type.Array(Type.String()),
  /** The demo admin, offered for one-click sign-in while the demo data is in place; its password stays in the host. */
  demoAccount: Nullable(Type.Object({ email: Type.String() })),
  /** Where the embedded gateway answers (`http://127.0.0.1:PORT/v1`) while it runs; absent otherwise. */
  gatewayUrl: Type.Optional(Type.String()),
  /**
   * The demo's history, written in the background by the start that seeded it: request-log rows
   * written of all, and why it stopped short if it did. Absent when this run writes none.
   */
  demoHistory: Type.Optional(
    Type.Object({
      rows: Type.Integer({ minimum: 0 }),
      of: Type.Integer({ minimum: 0 }),
      failed: Type.Optional(Type.String()),
    }),
  ),
});
export type EmbeddedStatus = Static<typeof EmbeddedStatus>;

/** A profile's alert rules, the alerts they fired (newest first) and how the last check went. */
export const AlertsView = Type.Object({
  rules: AlertRules,
  fired: Type.Array(Type.Intersect([FiredAlert, Type.Object({ delivered: Type.Boolean() })])),
  check: AlertCheck,
});
export type AlertsView = Static<typeof AlertsView>;

export const hostCalls = {
  'app.info': {
    args: Empty,
    result: Type.Object({ shell: Type.Union([Type.Literal('electron'), Type.Literal('web')]), version: Type.String() }),
  },
  'profiles.list': { args: Empty, result: Type.Object({ profiles: Type.Array(ProfileView) }) },
  'profiles.add': {
    args: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 100 }),
      kind: Type.Union([Type.Literal('remote'), Type.Literal('embedded')]),
      baseUrl: Type.Optional(Type.String({ maxLength: 2048 })),
    }),
    result: ProfileView,
  },
  'profiles.remove': { args: ForProfile, result: Empty },
  'session.signIn': {
    args: Type.Object({
      profileId: ProfileId,
      email: Type.String({ maxLength: 254 }),
      password: Type.String({ maxLength: 256 }),
    }),
    result: SignedIn,
  },
  'session.register': {
    args: Type.Object({
      profileId: ProfileId,
      email: Type.String({ maxLength: 254 }),
      password: Type.String({ maxLength: 256 }),
      organization_name: Type.String({ maxLength: 1000 }),
    }),
    result: SignedIn,
  },
  'session.google': {
    args: Type.Object({
      profileId: ProfileId,
      id_token: Type.String({ maxLength: 16384 }),
      organization_name: Type.Optional(Type.String({ maxLength: 1000 })),
    }),
    result: SignedIn,
  },
  /** Signs the embedded profile in as the demo admin: the host supplies the password. */
  'session.signInDemo': { args: ForProfile, result: SignedIn },
  'session.signOut': { args: ForProfile, result: Empty },
  'session.me': { args: ForProfile, result: Me },
  'alerts.get': { args: ForProfile, result: AlertsView },
  'alerts.setRules': { args: Type.Object({ profileId: ProfileId, rules: AlertRules }), result: AlertsView },
  /** Checks the rules now rather than at the next round. */
  'alerts.check': { args: ForProfile, result: AlertsView },
  /** The renderer raised these as notifications (the web shell: the host cannot). */
  'alerts.delivered': {
    args: Type.Object({ profileId: ProfileId, through: Type.Integer({ minimum: 1 }) }),
    result: Empty,
  },
  /**
   * The signed-in account's saved views on the profile (a screen and its filters under a name),
   * by name, and how many its file held that could not be read (set aside beside it).
   */
  'views.list': {
    args: ForProfile,
    result: Type.Object({ views: Type.Array(SavedView), set_aside: Type.Integer({ minimum: 0 }) }),
  },
  'views.save': {
    args: Type.Object({ profileId: ProfileId, name: ViewName, screen: ViewScreen, filters: ViewFilters }),
    result: SavedView,
  },
  'views.rename': {
    args: Type.Object({ profileId: ProfileId, viewId: ViewId, name: ViewName }),
    result: SavedView,
  },
  'views.remove': {
    args: Type.Object({ profileId: ProfileId, viewId: ViewId }),
    result: Empty,
  },
  'embedded.status': { args: Empty, result: EmbeddedStatus },
  'embedded.restart': { args: Empty, result: EmbeddedStatus },
  /** The signed-in account's preferences on this profile (the host knows who is signed in). */
  'prefs.get': { args: ForProfile, result: StoredPreferences },
  'prefs.setTheme': { args: Type.Object({ profileId: ProfileId, theme: Theme }), result: Preferences },
} satisfies Record<string, { args: TObject; result: TSchema }>;

/** Sign-in, refresh and sign-out belong to the host's session calls, never to the renderer directly. */
const SESSION_ENDPOINTS = ['register', 'login', 'google', 'refresh', 'logout', 'me'] as const;
export type ApiEndpoint = Exclude<EndpointName, (typeof SESSION_ENDPOINTS)[number]>;
export const apiEndpoints = (Object.keys(endpoints) as EndpointName[]).filter(
  (name): name is ApiEndpoint => !(SESSION_ENDPOINTS as readonly string[]).includes(name),
);

function apiArgs(name: ApiEndpoint): TObject {
  const endpoint = endpoints[name] as { params?: TSchema; query?: TSchema; body?: TSchema };
  return Type.Object({
    profileId: ProfileId,
    ...(endpoint.params ? { params: endpoint.params } : {}),
    ...(endpoint.query ? { query: endpoint.query } : {}),
    ...(endpoint.body ? { body: endpoint.body } : {}),
  });
}

type HostCalls = typeof hostCalls;
export type BridgeCalls = {
  [K in keyof HostCalls]: { args: Static<HostCalls[K]['args']>; result: Static<HostCalls[K]['result']> };
} & {
  [N in ApiEndpoint as `api.${N}`]: { args: { profileId: string } & EndpointInput<N>; result: EndpointOutput<N> };
};
export type CallName = keyof BridgeCalls;
export type CallArgs<K extends CallName> = BridgeCalls[K]['args'];
export type CallResult<K extends CallName> = BridgeCalls[K]['result'];

const apiCalls: Record<string, { args: TObject; result: TSchema }> = Object.fromEntries(
  apiEndpoints.map((name) => [`api.${name}`, { args: apiArgs(name), result: endpoints[name].response }]),
);
const allCalls: Record<string, { args: TObject; result: TSchema }> = { ...hostCalls, ...apiCalls };
export const bridgeSchemas = allCalls as Record<CallName, { args: TObject; result: TSchema }>;

export const callNames = Object.keys(bridgeSchemas) as CallName[];

/**
 * How an error crosses the bridge: the server's status and sentence, or status 0 for a network
 * failure. `field` names the request field the error concerns (`expires_at`, without its
 * body/query/path location): from the server's `x-error-field` header, a 422's `detail[0].loc`,
 * or the host's own argument check. The renderer places errors by it, never by their words.
 * The one definition: the host, both shells and the renderer all use this type.
 */
export interface BridgeErrorBody {
  status: number;
  message: string;
  field?: string;
  detail?: unknown;
  /** A throttled call (429): seconds before the server takes another try. */
  retryAfterSeconds?: number;
}

/** What crosses the bridge: a result, or an error with the status and message the user should see. */
export type BridgeEnvelope<T> = { ok: true; result: T } | { ok: false; error: BridgeErrorBody };

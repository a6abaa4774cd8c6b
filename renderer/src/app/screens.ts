import type { ComponentType } from 'react';
import { ActivityScreen } from '../screens/activity/ActivityScreen.js';
import { AlertsScreen } from '../screens/alerts/AlertsScreen.js';
import { AnalyticsScreen } from '../screens/analytics/AnalyticsScreen.js';
import { KeysScreen } from '../screens/keys/KeysScreen.js';
import { OrganisationScreen } from '../screens/organisation/OrganisationScreen.js';
import { RequestLogScreen } from '../screens/requests/RequestLogScreen.js';
import { SpendScreen } from '../screens/spend/SpendScreen.js';
import { VaultScreen } from '../screens/vault/VaultScreen.js';
import type { Screen } from '../state/route.js';

export const screens: Record<Screen, { title: string; component: ComponentType }> = {
  keys: { title: 'API keys', component: KeysScreen },
  vault: { title: 'Provider keys', component: VaultScreen },
  analytics: { title: 'Analytics', component: AnalyticsScreen },
  spend: { title: 'Spend', component: SpendScreen },
  requests: { title: 'Request log', component: RequestLogScreen },
  activity: { title: 'Activity', component: ActivityScreen },
  alerts: { title: 'Alerts', component: AlertsScreen },
  organisation: { title: 'Organisation', component: OrganisationScreen },
};

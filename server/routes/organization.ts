import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { checkOrganizationName } from '../domain/organization-name.js';
import { canonicalZone, readableZone, utcOffsetText } from '../domain/reporting-zone.js';
import { retentionAt } from '../domain/retention.js';
import { badRequest, conflict } from '../http-errors.js';
import { sourceIp } from '../plugins/guards.js';
import { authOf, requireRole } from '../plugins/session.js';
import { errors, isoTime, isoTimeOrNull } from '../schemas/common.js';
import {
  JoinPolicy,
  MemberList,
  Organization,
  ProjectList,
  RenameBody,
  ReportingZone,
  ReportingZoneBody,
  Retention,
  RetentionBody,
} from '../schemas/organization.js';

const tags = ['organization'];

/** The setting as the activity log's target reads it. */
const retentionTarget = (days: number | null) =>
  days === null ? "the platform's retention" : `${days} ${days === 1 ? 'day' : 'days'}`;

export async function organizationRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { control, config } = app;

  app.patch(
    '/organization',
    {
      onRequest: requireRole('owner', 'admin'),
      schema: { tags, body: RenameBody, response: { 200: Organization, ...errors(400, 401, 403, 409, 415, 422) } },
    },
    async (request) => {
      const auth = authOf(request);
      const name = checkOrganizationName(request.body.name, 'name');
      const now = config.now();
      await control.write(async (tx) => {
        const holder = await tx.organizations.findByName(name);
        if (holder && holder.id !== auth.orgId) {
          throw conflict('another organization already uses this name', { field: 'name' });
        }
        const previous = (await tx.organizations.get(auth.orgId))?.name ?? null;
        await tx.organizations.setName(auth.orgId, name);
        await tx.activity.record({
          orgId: auth.orgId,
          actorId: auth.accountId,
          action: 'org.renamed',
          target: name,
          sourceIp: sourceIp(request),
          at: now,
          change: { before: { name: previous }, after: { name } },
        });
      });
      return { name };
    },
  );

  app.get('/members', { schema: { tags, response: { 200: MemberList, ...errors(401) } } }, async (request) => ({
    members: (await control.accounts.members(authOf(request).orgId)).map((account) => ({
      user_id: account.id,
      email: account.email,
      role: account.role,
      joined_at: isoTime(account.created_at),
    })),
  }));

  app.get('/projects', { schema: { tags, response: { 200: ProjectList, ...errors(401) } } }, async (request) => ({
    projects: (await control.organizations.projects(authOf(request).orgId)).map((project) => ({
      id: project.id,
      name: project.name,
      created_at: isoTime(project.created_at),
    })),
  }));

  // Beyond the contract, read-only: the policy changes only through the operator's command.
  app.get(
    '/organization/join-policy',
    { schema: { tags, response: { 200: JoinPolicy, ...errors(401) } } },
    async (request) => control.joinPolicies.of(authOf(request).orgId),
  );

  // Beyond the contract: the zone the dashboard counts days and weeks in; the contract's
  // analytics stay in UTC. Any member reads it; owners and admins change it.
  const reportingZone = (zone: string) => ({ time_zone: zone, utc_offset: utcOffsetText(zone, config.now()) });

  app.get(
    '/organization/reporting-zone',
    { schema: { tags, response: { 200: ReportingZone, ...errors(401) } } },
    async (request) => {
      return reportingZone(readableZone(await control.organizations.reportingZone(authOf(request).orgId)));
    },
  );

  app.put(
    '/organization/reporting-zone',
    {
      onRequest: requireRole('owner', 'admin'),
      schema: {
        tags,
        body: ReportingZoneBody,
        response: { 200: ReportingZone, ...errors(400, 401, 403, 415, 422) },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const zone = canonicalZone(request.body.time_zone);
      if (zone === null) {
        throw badRequest('unknown time zone: give an IANA name such as Asia/Karachi or UTC', { field: 'time_zone' });
      }
      await control.write(async (tx) => {
        const previous = await tx.organizations.reportingZone(auth.orgId);
        await tx.organizations.setReportingZone(auth.orgId, zone);
        await tx.activity.record({
          orgId: auth.orgId,
          actorId: auth.accountId,
          action: 'org.reporting_zone_changed',
          target: zone,
          sourceIp: sourceIp(request),
          at: config.now(),
          change: { before: { time_zone: previous }, after: { time_zone: zone } },
        });
      });
      return reportingZone(zone);
    },
  );

  // Beyond the contract: how long the organisation's request-log rows are kept. Any member reads
  // it; owners and admins set a retention of its own, never longer than the platform's.
  const retention = (days: number | null) => {
    const effective = retentionAt(config.retentionDays, days, config.now());
    return {
      days,
      platform_days: config.retentionDays,
      effective_days: effective.days,
      horizon: isoTimeOrNull(effective.horizon),
    };
  };

  app.get(
    '/organization/retention',
    { schema: { tags, response: { 200: Retention, ...errors(401) } } },
    async (request) => retention(await control.organizations.retentionDays(authOf(request).orgId)),
  );

  app.put(
    '/organization/retention',
    {
      onRequest: requireRole('owner', 'admin'),
      schema: {
        tags,
        body: RetentionBody,
        response: { 200: Retention, ...errors(400, 401, 403, 415, 422) },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const { days } = request.body;
      const platform = config.retentionDays;
      // A longer one would promise rows the platform deletes anyway.
      if (days !== null && platform !== null && days > platform) {
        throw badRequest(
          `days must be at most the platform's ${platform} days, or null to keep rows as long as the platform does`,
          { field: 'days' },
        );
      }
      await control.write(async (tx) => {
        const previous = await tx.organizations.retentionDays(auth.orgId);
        await tx.organizations.setRetentionDays(auth.orgId, days);
        await tx.activity.record({
          orgId: auth.orgId,
          actorId: auth.accountId,
          action: 'org.retention_changed',
          target: retentionTarget(days),
          sourceIp: sourceIp(request),
          at: config.now(),
          change: { before: { days: previous }, after: { days } },
        });
      });
      // A shorter retention starts deleting now, not at the next sweep.
      void app.retention.sweep();
      return retention(days);
    },
  );
}

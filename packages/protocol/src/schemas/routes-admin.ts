import {
  AdminConfigRequestSchema,
  AdminConfigResultSchema,
  AdminConfigSchema,
  AdminMetricsSchema,
} from './admin.js';
import { defineRoutes, ERRORS } from './route-table.js';

export const adminRoutes = defineRoutes({
  // -------------------------------------------------------------------------------------------
  // Validator: admin
  // -------------------------------------------------------------------------------------------
  getAdminMetrics: {
    service: 'validator',
    method: 'GET',
    url: '/admin/metrics',
    operationId: 'getAdminMetrics',
    summary: 'Counters, response time, uptime and rejections by reason',
    tags: ['admin'],
    auth: 'admin',
    version: 'any',
    schema: { response: { 200: AdminMetricsSchema, ...ERRORS } },
  },
  getAdminConfig: {
    service: 'validator',
    method: 'GET',
    url: '/admin/config',
    operationId: 'getAdminConfig',
    summary: 'The effective runtime configuration',
    tags: ['admin'],
    auth: 'admin',
    version: 'any',
    schema: { response: { 200: AdminConfigSchema, ...ERRORS } },
  },
  setAdminConfig: {
    service: 'validator',
    method: 'POST',
    url: '/admin/config',
    operationId: 'setAdminConfig',
    summary: 'Change difficulty, tensor size, pool strategy, hexchain difficulty or challenge lifetime',
    tags: ['admin'],
    auth: 'admin',
    version: 'any',
    schema: { body: AdminConfigRequestSchema, response: { 200: AdminConfigResultSchema, ...ERRORS } },
  },
});

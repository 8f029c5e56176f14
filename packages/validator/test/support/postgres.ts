/**
 * The PostgreSQL server of the tests lives in test-support/ (every package's tests share it:
 * one server per test run, a database per file, see test-support/services.ts). This module
 * keeps the names the validator's tests and benches import.
 */
export {
  type PostgresServer,
  postgresAt,
  type StartPostgresOptions,
  startPostgres,
  uniqueDatabaseName,
} from '../../../../test-support/postgres.ts';
export { testPostgres } from '../../../../test-support/services.ts';

import {
  describe,
  type OperationId,
  ProtocolError,
  parseAmount,
  parseCoord,
  parsePrice,
  type RouteDefinition,
} from '@tensormine/protocol';
import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { type InputProblem, InvalidInputError, type RequestInfo } from './errors.js';

/**
 * Local checks of a request before it is sent: the route's TypeBox schemas (the ones the
 * validator checks with), then the rules the schemas cannot state: lattice coordinates
 * (parseCoord: q + r + s = 0) and token amounts (parseAmount: at most as many decimals as the
 * token has). A failure is an InvalidInputError that says what was expected and what arrived.
 */

/** The parts of a request, by their name in the client API. */
export interface RouteInput {
  readonly body?: unknown;
  readonly query?: unknown;
  readonly params?: unknown;
}

const validators = new WeakMap<TSchema, Validator>();

function validatorOf(schema: TSchema): Validator {
  let validator = validators.get(schema);
  if (validator === undefined) {
    validator = Compile(schema);
    validators.set(schema, validator);
  }
  return validator;
}

type Part = 'body' | 'query' | 'params';
const SCHEMA_KEYS = { body: 'body', query: 'querystring', params: 'params' } as const;

/**
 * Checks `input` against `route`.
 * @throws InvalidInputError listing every problem.
 */
export function checkInput(route: RouteDefinition, input: RouteInput, request: RequestInfo = {}): void {
  const problems: InputProblem[] = [];
  for (const part of ['params', 'query', 'body'] as const) {
    const schema = route.schema[SCHEMA_KEYS[part]];
    const value = input[part];
    if (schema === undefined) {
      if (value !== undefined) {
        problems.push({
          path: part,
          message: `${part}: expected none (${route.method} ${route.url} takes no ${part}), got ${describe(value)}`,
        });
      }
      continue;
    }
    // A query whose parameters are all optional may be left out.
    const checked = part === 'query' && value === undefined ? {} : value;
    problems.push(...schemaProblems(schema, checked, part));
  }
  if (problems.length === 0) {
    problems.push(...coordinateProblems(input.params, route, 'params'));
    problems.push(...coordinateProblems(input.body, route, 'body'));
    problems.push(...amountProblems(route.operationId as OperationId, input));
  }
  if (problems.length > 0) throw new InvalidInputError(problems, request);
}

/** The problems of `value` against `schema`, one per failing location, as sentences. */
export function schemaProblems(schema: TSchema, value: unknown, root: string): InputProblem[] {
  const validator = validatorOf(schema);
  if (validator.Check(value)) return [];
  if (value === undefined) {
    return [{ path: root, message: `${root}: expected ${what(schema)}, got nothing` }];
  }
  const errors = validator.Errors(value);
  const problems: InputProblem[] = [];
  const seen = new Set<string>();
  // anyOf alternatives are summarised by their anyOf error, not listed one by one.
  const anyOfPaths = errors.filter((e) => e.keyword === 'anyOf').map((e) => e.schemaPath);
  for (const error of errors) {
    if (anyOfPaths.some((p) => error.schemaPath.startsWith(`${p === '#' ? '#' : p}/anyOf/`))) continue;
    const params = error.params as Record<string, unknown>;
    let path = joinPath(root, error.instancePath);
    let expected: string;
    let received = describe(valueAt(value, error.instancePath));
    switch (error.keyword) {
      case 'required': {
        const names = (params.requiredProperties as string[] | undefined) ?? [];
        for (const name of names) {
          const at = `${path}.${name}`;
          if (seen.has(at)) continue;
          seen.add(at);
          problems.push({ path: at, message: `${at}: expected a value (required), got nothing` });
        }
        continue;
      }
      case 'type':
        expected = article(String(params.type));
        break;
      case 'pattern':
        expected = `a string matching ${String(params.pattern)}`;
        break;
      case 'enum':
        expected = `one of ${((params.allowedValues as unknown[]) ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
        break;
      case 'const':
        expected = JSON.stringify(params.allowedValue);
        break;
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        expected = `a number ${String(params.comparison)} ${String(params.limit)}`;
        break;
      case 'minLength':
        expected = `at least ${String(params.limit)} characters`;
        received = lengthOf(valueAt(value, error.instancePath), 'characters');
        break;
      case 'maxLength':
        expected = `at most ${String(params.limit)} characters`;
        received = lengthOf(valueAt(value, error.instancePath), 'characters');
        break;
      case 'minItems':
        expected = `at least ${String(params.limit)} items`;
        received = lengthOf(valueAt(value, error.instancePath), 'items');
        break;
      case 'maxItems':
        expected = `at most ${String(params.limit)} items`;
        received = lengthOf(valueAt(value, error.instancePath), 'items');
        break;
      case 'multipleOf':
        expected = `a multiple of ${String(params.multipleOf)}`;
        break;
      case 'anyOf':
        expected = anyOfExpectation(errors, error.schemaPath);
        received = describeObjectKeys(valueAt(value, error.instancePath));
        break;
      default:
        expected = error.message.replace(/^must /, 'a value that must ');
    }
    if (path === '') path = root;
    const key = `${path}|${error.keyword}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push({ path, message: `${path}: expected ${expected}, got ${received}` });
  }
  return problems;
}

function what(schema: TSchema): string {
  const type = (schema as { type?: unknown }).type;
  return typeof type === 'string' ? article(type) : 'a value';
}

function article(type: string): string {
  if (type === 'integer') return 'an integer';
  if (type === 'array') return 'an array';
  if (type === 'object') return 'an object';
  if (type === 'null') return 'null';
  return `a ${type}`;
}

function lengthOf(value: unknown, unit: string): string {
  if (typeof value === 'string' || Array.isArray(value)) return `${value.length} ${unit}`;
  return describe(value);
}

function describeObjectKeys(value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return describe(value);
  const keys = Object.keys(value);
  return keys.length === 0 ? 'an empty object' : `an object with ${keys.join(', ')}`;
}

/** What an anyOf wants: for alternatives that each require one property, "at least one of a, b". */
function anyOfExpectation(
  errors: readonly { keyword: string; schemaPath: string; params: unknown }[],
  anyOfPath: string,
): string {
  const prefix = `${anyOfPath}/anyOf/`;
  const alternatives = errors.filter((e) => e.schemaPath.startsWith(prefix));
  if (alternatives.length > 0 && alternatives.every((e) => e.keyword === 'required')) {
    const names = alternatives.flatMap(
      (e) => ((e.params as { requiredProperties?: string[] }).requiredProperties ?? []) as string[],
    );
    return `an object with at least one of ${names.join(', ')}`;
  }
  return `a value matching one of ${Math.max(alternatives.length, 2)} alternatives`;
}

function joinPath(root: string, pointer: string): string {
  if (pointer === '') return root;
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  return parts.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : `${acc}.${part}`), root);
}

function valueAt(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let current: unknown = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

// ---------------------------------------------------------------------------------------------
// Coordinates
// ---------------------------------------------------------------------------------------------

/** Every lattice coordinate of a request: the `/:q/:r/:s` params, any `coord` in the body. */
function coordinateProblems(value: unknown, route: RouteDefinition, root: Part): InputProblem[] {
  const problems: InputProblem[] = [];
  if (root === 'params' && /\/:q\/:r\/:s$/.test(route.url)) {
    const problem = coordProblem(value, 'params');
    if (problem) problems.push(problem);
    return problems;
  }
  const visit = (node: unknown, path: string, depth: number): void => {
    if (typeof node !== 'object' || node === null || depth > 8) return;
    for (const [key, child] of Object.entries(node)) {
      const at = Array.isArray(node) ? `${path}[${key}]` : `${path}.${key}`;
      if (key === 'coord' && !Array.isArray(node)) {
        const problem = coordProblem(child, at);
        if (problem) problems.push(problem);
      } else {
        visit(child, at, depth + 1);
      }
    }
  };
  visit(value, root, 0);
  return problems;
}

function coordProblem(value: unknown, path: string): InputProblem | undefined {
  try {
    parseCoord(value, path);
    return undefined;
  } catch (error) {
    if (error instanceof ProtocolError) return { path, message: error.message };
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Amounts
// ---------------------------------------------------------------------------------------------

interface AmountRule {
  readonly part: 'body' | 'query';
  readonly field: string;
  /** The token, fixed or named by another field of the same part. */
  readonly token?: string;
  readonly tokenField?: string;
  /** A price (18 decimals), not an amount of a token. */
  readonly price?: true;
}

/**
 * Which fields of which operations are token amounts, and of which token. The schemas say "a
 * decimal string"; how many decimals depends on the token, which only the operation knows.
 */
export const AMOUNT_FIELDS: Partial<Record<OperationId, readonly AmountRule[]>> = {
  stake: [{ part: 'body', field: 'amount', token: 'PTM' }],
  poolJoin: [{ part: 'body', field: 'stake_amount', token: 'PTM' }],
  swapQuote: [{ part: 'body', field: 'amount', tokenField: 'from_token' }],
  swapExecute: [
    { part: 'body', field: 'amount', tokenField: 'from_token' },
    { part: 'body', field: 'min_received', tokenField: 'to_token' },
  ],
  vaultDeposit: [{ part: 'body', field: 'amount', tokenField: 'token' }],
  placeOrder: [
    { part: 'body', field: 'amount', tokenField: 'token' },
    { part: 'body', field: 'price', price: true },
  ],
  getTerminalSwapQuote: [{ part: 'query', field: 'amount', tokenField: 'from_token' }],
};

function amountProblems(operationId: OperationId, input: RouteInput): InputProblem[] {
  const problems: InputProblem[] = [];
  for (const rule of AMOUNT_FIELDS[operationId] ?? []) {
    const source = input[rule.part] as Record<string, unknown> | undefined;
    const text = source?.[rule.field];
    if (typeof text !== 'string') continue;
    const path = `${rule.part}.${rule.field}`;
    try {
      if (rule.price) {
        parsePrice(text, path);
        continue;
      }
      const token = rule.token ?? source?.[rule.tokenField ?? ''];
      if (typeof token !== 'string') continue;
      parseAmount(text, token, path);
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      if (error.code === 'unknown_token') {
        const at = rule.tokenField ? `${rule.part}.${rule.tokenField}` : path;
        problems.push({ path: at, message: error.message.replace(/^token:/, `${at}:`) });
      } else {
        problems.push({ path, message: error.message });
      }
    }
  }
  return problems;
}

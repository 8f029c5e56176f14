import {
  type OperationId,
  type RouteBody,
  type RouteDefinition,
  type RouteParams,
  type RouteQuery,
  type RouteReply,
  type Routes,
  routesOf,
  type Service,
} from '@tensormine/protocol';
import type { EndpointState } from './endpoints.js';
import type { ClientEventListener, ClientEventName } from './events.js';
import type { CallOptions, ClientOptions } from './options.js';
import { Transport } from './transport.js';

/**
 * The generic client of one service of the route table: `request(operationId, input, options)`
 * for every route of that service, typed from ROUTES. The validator client (createClient) is
 * this plus named methods and the mining helpers; the status proxy, terminal backend and hub
 * clients are this as it is.
 */

/** The operationIds of the routes of service `S`. */
export type ServiceOperationId<S extends Service> = {
  [K in OperationId]: Routes[K]['service'] extends S ? K : never;
}[OperationId];

type InputPart<K extends string, T> = [T] extends [undefined]
  ? { readonly [P in K]?: undefined }
  : object extends T
    ? { readonly [P in K]?: T }
    : { readonly [P in K]: T };

/**
 * The input of a route: `body`, `query` and `params`, each required when the route has it and it
 * has required fields (a query whose parameters are all optional may be left out).
 */
export type RequestInput<Id extends OperationId> = InputPart<'body', RouteBody<Id>> &
  InputPart<'query', RouteQuery<Id>> &
  InputPart<'params', RouteParams<Id>>;

/** `[input?, options?]` when every part is optional, else `[input, options?]`. */
export type RequestArgs<Id extends OperationId> =
  object extends RequestInput<Id>
    ? [input?: RequestInput<Id>, options?: CallOptions]
    : [input: RequestInput<Id>, options?: CallOptions];

export class ServiceClient<S extends Service> {
  /** @internal */
  protected readonly transport: Transport;

  constructor(service: S, options: ClientOptions) {
    this.transport = new Transport(service, options);
  }

  /** The service this client talks to. */
  get service(): S {
    return this.transport.service as S;
  }

  /** Every route of the service (from ROUTES). */
  get routes(): readonly RouteDefinition[] {
    return routesOf(this.transport.service);
  }

  /**
   * Sends one request of any route of the service. Checks the input against the route's schema,
   * signs it when the route acts for a key (auth: signed), adds the admin token for admin routes.
   *
   * ```ts
   * const page = await client.request('hexLattice', { query: { limit: 10 } });
   * ```
   * @throws InvalidInputError, ValidatorError, UnexpectedResponseError, NetworkError, TimeoutError, AbortedError
   */
  async request<Id extends ServiceOperationId<S>>(
    operationId: Id,
    ...args: RequestArgs<Id>
  ): Promise<RouteReply<Id>> {
    const [input = {}, options = {}] = args as [RequestInput<Id> | undefined, CallOptions | undefined];
    const sent = await this.transport.send(operationId, input, options);
    return sent.data;
  }

  /** The endpoints, their health and latency, and which one is in use. */
  endpoints(): EndpointState[] {
    return this.transport.pool.states();
  }

  /** Probes every endpoint's health now (the periodic probe does this in the background). */
  async probe(): Promise<EndpointState[]> {
    await this.transport.pool.probeAll();
    return this.endpoints();
  }

  on<K extends ClientEventName>(name: K, listener: ClientEventListener<K>): this {
    this.transport.events.on(name, listener as never);
    return this;
  }

  once<K extends ClientEventName>(name: K, listener: ClientEventListener<K>): this {
    this.transport.events.once(name, listener as never);
    return this;
  }

  off<K extends ClientEventName>(name: K, listener: ClientEventListener<K>): this {
    this.transport.events.off(name, listener as never);
    return this;
  }

  /** Stops the health probes and closes the connection pool the client created. Idempotent. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /** `{ service, endpoints }`: never the signer's secret or the admin token. */
  toJSON(): { service: S; endpoints: EndpointState[] } {
    return { service: this.service, endpoints: this.endpoints() };
  }

  toString(): string {
    return `${this.constructor.name}(${this.transport.service}: ${this.transport.pool.urls.join(', ')})`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

/** A client of any service of the route table: `createServiceClient('hub', { url })`. */
export function createServiceClient<S extends Service>(service: S, options: ClientOptions): ServiceClient<S> {
  return new ServiceClient(service, options);
}

/** A client of the status proxy (its health, dashboard, and the forwarded hexchain routes). */
export function createStatusClient(options: ClientOptions): ServiceClient<'status'> {
  return new ServiceClient('status', options);
}

/** A client of the web terminal's backend. */
export function createTerminalClient(options: ClientOptions): ServiceClient<'terminal'> {
  return new ServiceClient('terminal', options);
}

/** A client of the game hub. */
export function createHubClient(options: ClientOptions): ServiceClient<'hub'> {
  return new ServiceClient('hub', options);
}

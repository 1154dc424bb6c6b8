import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import type { Config } from '../config.js';
import type { Db } from '../db/types.js';
import type { EventType } from '../jobs/outbox.js';
import type { Worker } from '../jobs/worker.js';
import type { SecretBox } from '../shared/secrets.js';
import type { ChangeFeed } from '../shared/changes.js';
import type { Mailer } from '../shared/mailer.js';
import type { FileStorage } from '../shared/storage.js';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What a module's routes receive: explicit dependencies, no decorators. */
export interface ModuleDeps {
  db: Db;
  config: Config;
  /** Encrypts and opens secrets stored in the database (webhook signing secrets). */
  secrets: SecretBox;
  /** Changes announced by other processes, for modules that cache rows in memory. */
  changes: ChangeFeed;
  /** E-mail for notifications (SMTP, or logged as skipped without SMTP_URL). */
  mailer: Mailer;
  /** Files (form uploads): local disk under $CAIRN_DATA_DIR/files. */
  storage: FileStorage;
  /** Every event the modules emit, as they describe them (the webhook catalog and OpenAPI `webhooks`). */
  events: EventDescriptions;
  /**
   * The site's generation (DeliveryCache.generationOf): the one "site changed" signal. It moves
   * when a write through this instance answers, a job of the site ran, or another process's
   * commit is announced; a cache of site data keeps what it built under the generation it read.
   */
  siteGeneration: (siteId: string) => number;
}

/** An event a module emits, for its subscribers: what it means, the schema of its `data`, an example. */
export interface EventDescription {
  description: string;
  data: TSchema;
  example: Record<string, unknown>;
}

export type EventDescriptions = Record<EventType, EventDescription>;

/**
 * A group's endpoints and jobs. `State` is what the module holds between requests (caches, hit
 * recorders, change-feed subscriptions): built once per app by `init`, before any route is
 * registered, and handed to `routes`, `rootRoutes` and `jobs`, which only declare.
 */
export interface AppModule<State = undefined> {
  name: string;
  /** Builds the module's state once per app. */
  init?(deps: ModuleDeps): State;
  /** Registers the module's routes; called inside the `/v1` prefix. */
  routes(app: App, deps: ModuleDeps, state: State): void | Promise<void>;
  /** Registers routes outside `/v1` (decisions G1: media delivery at `/files/...`); each declares `config.scope` too. */
  rootRoutes?(app: App, deps: ModuleDeps, state: State): void | Promise<void>;
  /** Registers the module's job handlers and periodic tasks with the worker. */
  jobs?(worker: Worker, deps: ModuleDeps, state: State): void;
  /** The events the module emits (`emitEvent`), each described by the module that emits it. */
  events?: Partial<EventDescriptions>;
}

/** A module of any state, for the list of modules. */
export type AnyModule = AppModule<any>;

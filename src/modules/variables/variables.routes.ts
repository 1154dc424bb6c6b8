import type { AppModule } from '../types.js';
import { CopyToLocaleBody, Data, IdParams, Message, Paginated, TranslationStatus } from '../../shared/schemas.js';
import { CALENDAR_FORMAT, Variable, VariableCreate, VariableListQuery, VariableUpdate } from './variables.schemas.js';
import * as service from './variables.service.js';

const tags = ['Variables'];

export const variablesModule: AppModule = {
  name: 'variables',
  routes(app, { db, dialect }) {
    app.get(
      '/variables',
      {
        config: { scope: 'variables.view' },
        schema: { tags, operationId: 'listVariables', summary: 'List variables', querystring: VariableListQuery, response: { 200: Paginated(Variable) } },
      },
      async (req) => service.listVariables(db, dialect, req.auth.siteId, req.query),
    );

    app.post(
      '/variables',
      {
        config: { scope: 'variables.create' },
        schema: {
          tags,
          operationId: 'createVariable',
          summary: 'Create a variable',
          description: `\`key\` is unique per site and locale (422 \`KEY_TAKEN\`) and cannot be changed later. ${CALENDAR_FORMAT}`,
          body: VariableCreate,
          response: { 201: Data(Variable), 409: { $ref: 'ErrorBody#' } },
        },
      },
      async (req, reply) => reply.code(201).send({ data: await service.createVariable(db, req.auth.siteId, req.body) }),
    );

    app.get(
      '/variables/:id',
      {
        config: { scope: 'variables.view' },
        schema: { tags, operationId: 'getVariable', summary: 'Get a variable', params: IdParams, response: { 200: Data(Variable) } },
      },
      async (req) => ({ data: await service.getVariable(db, req.auth.siteId, req.params.id) }),
    );

    app.put(
      '/variables/:id',
      {
        config: { scope: 'variables.update' },
        schema: {
          tags,
          operationId: 'updateVariable',
          summary: 'Update a variable (partial)',
          description:
            'The key is immutable: a `key` other than the stored one is a 422 `KEY_IMMUTABLE`. A calendar value is checked again when `value` or `type` changes.',
          params: IdParams,
          body: VariableUpdate,
          response: { 200: Data(Variable) },
        },
      },
      async (req) => ({ data: await service.updateVariable(db, req.auth.siteId, req.params.id, req.body) }),
    );

    app.delete(
      '/variables/:id',
      {
        config: { scope: 'variables.delete' },
        schema: { tags, operationId: 'deleteVariable', summary: 'Delete a variable', params: IdParams, response: { 200: Message } },
      },
      async (req) => {
        await service.deleteVariable(db, req.auth.siteId, req.params.id);
        return { message: 'Variable deleted.' };
      },
    );

    app.get(
      '/variables/:id/translations',
      {
        config: { scope: 'variables.view' },
        schema: {
          tags,
          operationId: 'getVariableTranslations',
          summary: 'Translation status per enabled locale',
          params: IdParams,
          response: { 200: TranslationStatus },
        },
      },
      async (req) => ({ data: await service.variableTranslations(db, req.auth.siteId, req.params.id) }),
    );

    app.post(
      '/variables/:id/copy-to-locale',
      {
        config: { scope: 'variables.create' },
        schema: {
          tags,
          operationId: 'copyVariableToLocale',
          summary: 'Copy into another locale (same key, same translation group)',
          description:
            'Body `{ targetLocale }` (or `{ locale }`). 409 when the group already has a member in that locale; 422 `KEY_TAKEN` when another variable holds the key there.',
          params: IdParams,
          body: CopyToLocaleBody,
          response: { 200: Data(Variable), 409: { $ref: 'ErrorBody#' } },
        },
      },
      async (req) => ({ data: await service.copyVariableToLocale(db, req.auth.siteId, req.params.id, req.body) }),
    );
  },
};
